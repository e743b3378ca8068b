package android.os;

/**
 * Stand-in for android.os.SystemClock. uptimeMillis is Android's message-time base; on the host it is
 * System.nanoTime (CLOCK_MONOTONIC on Linux), the clock the native side uses too.
 */
public final class SystemClock {
  private SystemClock() {}

  public static long uptimeMillis() { return System.nanoTime() / 1000000L; }

  public static long elapsedRealtime() { return System.nanoTime() / 1000000L; }

  /** Like Android's: sleeps the whole duration even if interrupted (the interrupt is re-asserted). */
  public static void sleep(long ms) {
    long end = uptimeMillis() + ms;
    boolean interrupted = false;
    for (long left = ms; left > 0; left = end - uptimeMillis()) {
      try {
        Thread.sleep(left);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) Thread.currentThread().interrupt();
  }
}
