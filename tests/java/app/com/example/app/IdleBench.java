package com.example.app;

import android.os.MessageQueue.IdleHandler;
import com.jankprobe.TimingIdleHandlerList;
import java.util.Collections;

/**
 * For bench/idle_bench.cc: queueIdle() of a trivial handler called in a loop, either directly or through
 * the wrapper jankprobe's TimingIdleHandlerList puts around it (what MessageQueue.next() calls once the list
 * is swapped in). The difference per call is the idle monitor's cost on the main thread per handler call.
 *
 * The loop runs on the app's main thread, where MessageQueue.next() calls idle handlers: the native side
 * treats that thread as the owner of its single-writer state, and any other thread takes the shared,
 * dearer path, which an app never uses for its idle handlers.
 */
public final class IdleBench {
  private static final CountingIdleHandler handler = new CountingIdleHandler();
  private static final IdleHandler timed =
      new TimingIdleHandlerList(Collections.<IdleHandler>singletonList(handler)).get(0);

  private IdleBench() {}

  /** Calls the handler n times (through the wrapper when {@code wrapped}); returns how many kept it. */
  public static int calls(int n, boolean wrapped) {
    final IdleHandler h = wrapped ? timed : handler;
    int kept = 0;
    for (int i = 0; i < n; i++) {
      if (h.queueIdle()) kept++;
    }
    return kept;
  }

  /**
   * {@link #calls} on the main thread: the nanoseconds the loop took there (System.nanoTime around it, so
   * the hand-over to the main thread is not counted), -1 if a call did not keep its handler, -2 if the
   * main thread did not run it within 10 s.
   */
  public static long nanosOnMain(final int n, final boolean wrapped) throws InterruptedException {
    final long[] elapsed = {-1};
    final boolean ran = TestApp.runOnMain(() -> {
      final long t0 = System.nanoTime();
      final int kept = calls(n, wrapped);
      final long t1 = System.nanoTime();
      elapsed[0] = kept == n ? t1 - t0 : -1;
    }, 10000);
    return ran ? elapsed[0] : -2;
  }
}
