package com.example.app;

import android.os.MessageQueue.IdleHandler;
import android.os.SystemClock;
import com.jankprobe.TimingIdleHandlerList;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * For tests/idle/idle_jvm_test.cc: idle handler calls through TimingIdleHandlerList's wrappers, run on the
 * main thread in patterns MessageQueue.next() produces but a test cannot time through the queue itself (a
 * stream of calls for a set time, a slow call right behind a short one).
 */
public final class IdleScenarios {
  private IdleScenarios() {}

  /** Slow, and named, so that its frame is easy to find in a report's stack. */
  public static final class BehindShortHandler implements IdleHandler {
    private final long ms;

    BehindShortHandler(long ms) { this.ms = ms; }

    @Override
    public boolean queueIdle() {
      stuckBehindAShortCall();
      return false;
    }

    private void stuckBehindAShortCall() { SystemClock.sleep(ms); }
  }

  /** Likewise, for the start/stop test. */
  public static final class AfterTogglingHandler implements IdleHandler {
    private final long ms;

    AfterTogglingHandler(long ms) { this.ms = ms; }

    @Override
    public boolean queueIdle() {
      stuckAfterToggling();
      return false;
    }

    private void stuckAfterToggling() { SystemClock.sleep(ms); }
  }

  private static IdleHandler[] wrapped(IdleHandler... handlers) {
    final TimingIdleHandlerList list = new TimingIdleHandlerList(Arrays.asList(handlers));
    return list.toArray(new IdleHandler[0]);
  }

  /**
   * On the main thread, back to back: a short handler's call (which arms the monitor's watchdog deadline
   * if none is armed), then a slow one that starts while that deadline covers it, so its wrapper makes no
   * native call before the handler runs. 1 when both ran, 0 on timeout.
   */
  public static int shortThenSlowOnMain(long slowMs) throws InterruptedException {
    final IdleHandler[] calls = wrapped(new CountingIdleHandler(), new BehindShortHandler(slowMs));
    return TestApp.runOnMain(() -> {
      calls[0].queueIdle();
      calls[1].queueIdle();
    }, slowMs + 10000) ? 1 : 0;
  }

  /** A slow handler through a wrapper on the main thread (the monitor's state after a start/stop storm). */
  public static int slowOnMain(long slowMs) throws InterruptedException {
    final IdleHandler[] calls = wrapped(new AfterTogglingHandler(slowMs));
    return TestApp.runOnMain(() -> calls[0].queueIdle(), slowMs + 10000) ? 1 : 0;
  }

  private static volatile CountDownLatch streamDone;
  private static volatile int streamCalls;

  /**
   * Starts calling a trivial handler through its wrapper on the main thread, back to back, for ms
   * milliseconds, and returns at once (awaitStream() waits for the end).
   */
  public static void startStream(final long ms) {
    final IdleHandler[] calls = wrapped(new CountingIdleHandler());
    final CountDownLatch done = new CountDownLatch(1);
    streamDone = done;
    streamCalls = 0;
    new Thread(() -> {
      try {
        TestApp.runOnMain(() -> {
          final long end = SystemClock.uptimeMillis() + ms;
          int n = 0;
          while (SystemClock.uptimeMillis() < end) {
            for (int i = 0; i < 1000; i++) calls[0].queueIdle();
            n += 1000;
          }
          streamCalls = n;
        }, ms + 10000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      done.countDown();
    }, "idle-stream").start();
  }

  /** The calls the stream made, -1 if it did not end within timeoutMs. */
  public static int awaitStream(long timeoutMs) throws InterruptedException {
    final CountDownLatch done = streamDone;
    if (done == null || !done.await(timeoutMs, TimeUnit.MILLISECONDS)) return -1;
    return streamCalls;
  }
}
