package com.jankprobe;

import android.util.Printer;

/**
 * The Printer jankprobe sets on the main Looper (setMessageLogging). Looper prints ">>>>> Dispatching to
 * {target} {callback}: {what}" before each message and "<<<<< Finished to {target} {callback}" after it;
 * the native side times the dispatch between the two lines.
 *
 * It chains to the printer that was there before (read from Looper.mLogging by the native side), so an
 * app's or a library's own message logging keeps working: the previous printer sees every line, after our
 * begin and before our end, so its cost is not counted in the message's time.
 *
 * Around each message it tells FrameTicker, which parks while the main thread is idle and resumes here when
 * the app draws or gets busy.
 *
 * When someone replaces us, the native side installs a new LooperPrinter chaining to the newcomer and
 * retires this one: a retired printer only forwards (the newcomer may still chain to it), so no line is
 * timed twice. A newcomer that chains to us (chainsTo) is left in front: we still see every line.
 */
public final class LooperPrinter implements Printer {
  private static native void nativeBegin(String line);
  private static native void nativeEnd();

  private final Printer previous;
  private volatile boolean active = true;

  public LooperPrinter(Printer previous) { this.previous = previous; }

  @Override
  public void println(String x) {
    final boolean timing = active && x != null && x.length() > 5;
    if (timing && x.startsWith(">>>>>")) {
      FrameTicker.onDispatchBegin(x);  // the frame ticker times the main thread's load (it parks when idle)
      nativeBegin(x);
      if (previous != null) previous.println(x);
    } else if (timing && x.startsWith("<<<<<")) {
      if (previous != null) previous.println(x);
      nativeEnd();
      FrameTicker.onDispatchEnd();
    } else if (previous != null) {
      previous.println(x);
    }
  }

  /** The printer this one chains to (null when there was none). */
  public Printer previous() { return previous; }

  /** Stops timing; the printer keeps forwarding to the previous one. */
  public void retire() { active = false; }

  public boolean isActive() { return active; }

  /**
   * Whether `head` reaches `target` through the printers it keeps in its own fields (a few levels deep):
   * a newcomer that chained to our printer, as Tencent Matrix's LooperMonitor does every 60 s when the
   * Looper's printer is not its own. Our printer then still sees every line, so the native side leaves it
   * behind the newcomer instead of wrapping the newcomer again (each tool wrapping the other would grow
   * the chain without end). A field that cannot be read counts as not reaching.
   */
  public static boolean chainsTo(Printer head, LooperPrinter target) {
    return reaches(head, target, 4, new java.util.IdentityHashMap<Object, Boolean>());
  }

  private static boolean reaches(Object o, Object target, int depth, java.util.IdentityHashMap<Object, Boolean> seen) {
    if (o == null || depth == 0 || seen.put(o, Boolean.TRUE) != null) return false;
    for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
      final java.lang.reflect.Field[] fields;
      try {
        fields = c.getDeclaredFields();
      } catch (RuntimeException | LinkageError e) {
        return false;
      }
      for (java.lang.reflect.Field f : fields) {
        if (f.getType().isPrimitive() || java.lang.reflect.Modifier.isStatic(f.getModifiers())) continue;
        final Object v;
        try {
          f.setAccessible(true);
          v = f.get(o);
        } catch (RuntimeException | IllegalAccessException e) {
          continue;  // a platform class's field: not readable here
        }
        if (v == target) return true;
        if (v instanceof Printer && reaches(v, target, depth - 1, seen)) return true;
      }
    }
    return false;
  }

  @Override
  public String toString() { return "jankprobe.LooperPrinter(" + (active ? "active" : "retired") + " -> " + previous + ")"; }
}
