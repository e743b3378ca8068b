package com.example.app;

import android.os.MessageQueue.IdleHandler;
import com.jankprobe.TimingIdleHandlerList;
import java.lang.reflect.Field;
import java.nio.LongBuffer;
import java.util.Collections;

/**
 * For bench/idle_bench.cc: queueIdle() of a trivial handler called in a loop, either directly or through
 * the wrapper jankprobe's TimingIdleHandlerList puts around it (what MessageQueue.next() calls once the list
 * is swapped in). The difference per call is the idle monitor's cost on the main thread per handler call.
 *
 * The loop runs on the app's main thread, where MessageQueue.next() calls idle handlers: the native side
 * treats that thread as the owner of its single-writer state, and any other thread takes the shared,
 * dearer path, which an app never uses for its idle handlers.
 *
 * The gap modes stand in for the looper monitor's poll source, which publishes the start of the main
 * thread's current gap (its return from epoll_wait) in the wrapper's shared words; idle handlers run in the
 * gap of next()'s look that found the queue empty. NEW_PASS_EACH_CALL writes a new gap (clean: bit 0
 * clear) before every call, so that every call is the first of its pass and takes the gap as its start
 * (the demo's case: a pass or two of one handler per message); ONE_PASS writes one before the loop, so the
 * first call takes it and every later one starts at the previous call's end (handlers 2..n of a pass).
 * The store is made in the plain loop too, so that the difference stays the wrapper's cost.
 */
public final class IdleBench {
  private static final CountingIdleHandler handler = new CountingIdleHandler();
  private static final IdleHandler timed =
      new TimingIdleHandlerList(Collections.<IdleHandler>singletonList(handler)).get(0);

  public static final int NO_GAP = 0;
  public static final int NEW_PASS_EACH_CALL = 1;
  public static final int ONE_PASS = 2;
  // The wrapper's shared words (TimingIdleHandlerList.RUNNING_SINCE, a long view; the gap word is long 2).
  private static final LongBuffer WORDS = words();

  private IdleBench() {}

  private static LongBuffer words() {
    try {
      final Field f = TimingIdleHandlerList.class.getDeclaredField("RUNNING_SINCE");
      f.setAccessible(true);
      return (LongBuffer) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Calls the handler n times (through the wrapper when {@code wrapped}); returns how many kept it. */
  public static int calls(int n, boolean wrapped) { return calls(n, wrapped, NO_GAP); }

  /** The same with a poll source's gap word written as {@code gapMode} says (the word is 0 again after). */
  public static int calls(int n, boolean wrapped, int gapMode) {
    final IdleHandler h = wrapped ? timed : handler;
    final LongBuffer w = WORDS;
    long gap = System.nanoTime() & ~1L;
    if (gapMode == ONE_PASS) w.put(2, gap);
    int kept = 0;
    if (gapMode == NEW_PASS_EACH_CALL) {
      for (int i = 0; i < n; i++) {
        gap += 2;
        w.put(2, gap);
        if (h.queueIdle()) kept++;
      }
    } else {
      for (int i = 0; i < n; i++) {
        if (h.queueIdle()) kept++;
      }
    }
    if (gapMode != NO_GAP) w.put(2, 0L);
    return kept;
  }

  /**
   * {@link #calls} on the main thread: the nanoseconds the loop took there (System.nanoTime around it, so
   * the hand-over to the main thread is not counted), -1 if a call did not keep its handler, -2 if the
   * main thread did not run it within 10 s.
   */
  public static long nanosOnMain(final int n, final boolean wrapped) throws InterruptedException {
    return nanosOnMain(n, wrapped, NO_GAP);
  }

  /** {@link #nanosOnMain(int, boolean)} with a gap mode. */
  public static long nanosOnMain(final int n, final boolean wrapped, final int gapMode) throws InterruptedException {
    final long[] elapsed = {-1};
    final boolean ran = TestApp.runOnMain(() -> {
      final long t0 = System.nanoTime();
      final int kept = calls(n, wrapped, gapMode);
      final long t1 = System.nanoTime();
      elapsed[0] = kept == n ? t1 - t0 : -1;
    }, 10000);
    return ran ? elapsed[0] : -2;
  }
}
