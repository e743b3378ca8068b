package com.example.app;

import android.os.Handler;
import android.os.Looper;
import android.os.MessageQueue.IdleHandler;
import android.os.SystemClock;
import com.jankprobe.JankProbe;
import com.jankprobe.TimingIdleHandlerList;
import java.lang.reflect.Field;
import java.nio.LongBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * For tests/idle/idle_gap_jvm_test.cc: idle passes run by the stand-in MessageQueue itself (next() after
 * nativePollOnce in the libutils.so fixture), so that the idle wrapper can take a pass's start from the
 * looper poll source's gap word. The handlers note their own entry and exit (System.nanoTime), the ground
 * truth the test holds the monitor's reports against.
 */
public final class IdleGapScenarios {
  private IdleGapScenarios() {}

  /** How long a handler that holds until caught waits for the watchdog at most, past its own `ms`. */
  static final long HOLD_BOUND_NS = 10_000_000_000L;

  /**
   * A handler that notes when it ran and sleeps `ms` in between; returns false (one call). One that holds
   * until caught (a handler meant to overrun idle.lag_ms) then sleeps on until the thread running the pass
   * saw the watchdog take its stack ({@link #caught}), for HOLD_BOUND_NS at most: whether the watchdog
   * thread, woken at the lag point, gets a CPU within a fixed overrun is up to the host's load, not the
   * monitor (a deadline that is lost still fails: the handler ends uncaught after the bound).
   */
  public abstract static class Noting implements IdleHandler {
    private final long ms;
    final boolean holdUntilCaught;
    public volatile long entered;
    public volatile long exited;
    volatile boolean caught;

    Noting(long ms, boolean holdUntilCaught) {
      this.ms = ms;
      this.holdUntilCaught = holdUntilCaught;
    }

    @Override
    public boolean queueIdle() {
      entered = System.nanoTime();
      SystemClock.sleep(ms);
      if (holdUntilCaught) {
        final long bound = System.nanoTime() + HOLD_BOUND_NS;
        while (!caught && System.nanoTime() < bound) SystemClock.sleep(1);
      }
      exited = System.nanoTime();
      return false;
    }
  }

  /** The first handler of a pass (its own class: reports and figures name it). */
  public static final class FirstOfPass extends Noting {
    FirstOfPass(long ms, boolean holdUntilCaught) { super(ms, holdUntilCaught); }
  }

  /** The second handler of the same pass. */
  public static final class SecondOfPass extends Noting {
    SecondOfPass(long ms, boolean holdUntilCaught) { super(ms, holdUntilCaught); }
  }

  /** Takes the handler TestApp registers at start out of the main queue, so a test's handler runs first in its pass. */
  public static void removeEarlyHandler() throws InterruptedException { TestApp.removeIdleHandler(TestApp.early); }

  /**
   * One idle pass of the main queue that runs a FirstOfPass sleeping ms1, then (ms2 > 0) a SecondOfPass
   * sleeping ms2: both added by one message, so next() runs them in the pass right after it. Returns
   * {posted, entered1, exited1, entered2, exited2} (System.nanoTime; posted: before the message was sent),
   * or null when the pass did not run within 10 s (plus what handlers held on).
   */
  public static long[] passOnMain(long ms1, long ms2) throws Exception { return passOnMain(ms1, ms2, false, false); }

  /**
   * The same; with `wake`, the message also wakes the queue's native looper (MessageQueue.nativeWake, what
   * a post to a blocked queue does), so the look that begins the pass finds an event ready: the pass's gap
   * then is no idle start (on a phone, fd callbacks may have run in it). With `holdUntilCaught`, both
   * handlers (meant to overrun idle.lag_ms) hold on past their time until the watchdog took their stacks
   * (see {@link Noting}): the idle monitor's stack_captures, counted from before the pass, reaching 1 for
   * the first and 2 for the second (the watchdog takes one per call that overran, and nothing else runs on
   * the main thread meanwhile).
   */
  public static long[] passOnMain(long ms1, long ms2, final boolean wake, final boolean holdUntilCaught)
      throws Exception {
    final FirstOfPass first = new FirstOfPass(ms1, holdUntilCaught);
    final SecondOfPass second = ms2 > 0 ? new SecondOfPass(ms2, holdUntilCaught) : null;
    final long captures0 = holdUntilCaught ? idleStackCaptures() : 0;
    final java.lang.reflect.Method nativeWake = android.os.MessageQueue.class.getDeclaredMethod("nativeWake", long.class);
    nativeWake.setAccessible(true);
    final Field ptr = android.os.MessageQueue.class.getDeclaredField("mPtr");
    ptr.setAccessible(true);
    final Exception[] failed = {null};
    final long posted = System.nanoTime();
    if (!TestApp.runOnMain(() -> {
      Looper.myQueue().addIdleHandler(first);
      if (second != null) Looper.myQueue().addIdleHandler(second);
      try {
        if (wake) nativeWake.invoke(null, ptr.getLong(Looper.myQueue()));
      } catch (ReflectiveOperationException e) {
        failed[0] = e;
      }
    }, 10000)) {
      return null;
    }
    if (failed[0] != null) throw failed[0];
    final Noting last = second != null ? second : first;
    final long deadline = System.nanoTime() + 10_000_000_000L + (holdUntilCaught ? 2 * HOLD_BOUND_NS : 0);
    while (last.exited == 0 && System.nanoTime() < deadline) {
      if (holdUntilCaught && first.entered != 0) {
        final long captures = idleStackCaptures() - captures0;
        if (captures >= 1) first.caught = true;
        if (captures >= 2 && second != null) second.caught = true;
      }
      Thread.sleep(holdUntilCaught ? 2 : 5);
    }
    if (last.exited == 0) return null;
    return new long[] {posted, first.entered, first.exited, second != null ? second.entered : 0,
                       second != null ? second.exited : 0};
  }

  /** monitors.idle.details.stack_captures of the plugin's status, -1 when the status has none. */
  static long idleStackCaptures() {
    final String status = JankProbe.status();
    final int monitors = status.indexOf("\"monitors\":{");
    final int idle = monitors < 0 ? -1 : status.indexOf("\"idle\":{", monitors);
    final String key = "\"stack_captures\":";
    final int at = idle < 0 ? -1 : status.indexOf(key, idle);
    if (at < 0) return -1;
    int end = at + key.length();
    while (end < status.length() && Character.isDigit(status.charAt(end))) end++;
    return end > at + key.length() ? Long.parseLong(status.substring(at + key.length(), end)) : -1;
  }

  /** The shared words' long view of the wrapper (TimingIdleHandlerList.RUNNING_SINCE), by reflection. */
  private static LongBuffer words() throws ReflectiveOperationException {
    final Field f = TimingIdleHandlerList.class.getDeclaredField("RUNNING_SINCE");
    f.setAccessible(true);
    return (LongBuffer) f.get(null);
  }

  /** The gap word (long 2 of the shared words) as a message on the main thread sees it; -1 on timeout. */
  public static long gapWordOnMain() throws Exception {
    final LongBuffer w = words();
    final long[] seen = {-1};
    TestApp.runOnMain(() -> seen[0] = w.get(2), 5000);
    return seen[0];
  }

  // ---- a stream of idle passes, each behind a message that sleeps pumpMs ----

  /** Runs in every pass of the stream and posts the pump message, so the queue never waits in between. */
  public static final class StreamIdle implements IdleHandler {
    volatile boolean streaming = true;
    volatile int calls;
    Runnable pump;
    Handler handler;

    @Override
    public boolean queueIdle() {
      calls++;
      if (!streaming) return false;
      handler.post(pump);
      return true;
    }
  }

  private static volatile StreamIdle stream;
  private static volatile CountDownLatch streamEnded;

  /**
   * Starts the stream: on the main thread, a pass runs StreamIdle, which posts a message that sleeps
   * pumpMs; when that returns, next() finds the queue empty and runs the next pass. Posting from the pass
   * needs no wake (the queue is not blocked), so each message and each pass begins with a look that finds
   * nothing ready: with the poll source on, both are clean gaps, and a pass that took the message's gap
   * for its start (a gap word gone stale) would have its call last pumpMs.
   */
  public static int startStream(final long pumpMs) throws InterruptedException {
    final StreamIdle s = new StreamIdle();
    final CountDownLatch ended = new CountDownLatch(1);
    s.pump = () -> SystemClock.sleep(pumpMs);
    stream = s;
    streamEnded = ended;
    return TestApp.runOnMain(() -> {
      s.handler = new Handler(Looper.myLooper());
      Looper.myQueue().addIdleHandler(s);
      Looper.myQueue().addIdleHandler(() -> {  // behind StreamIdle in every pass, until the stream ends
        if (s.streaming) return true;
        ended.countDown();
        return false;
      });
    }, 5000) ? 1 : 0;
  }

  /** Ends the stream; the passes it ran, -1 when its last pass did not come within timeoutMs. */
  public static int stopStream(long timeoutMs) throws InterruptedException {
    final StreamIdle s = stream;
    if (s == null) return -1;
    s.streaming = false;
    if (!streamEnded.await(timeoutMs, TimeUnit.MILLISECONDS)) return -1;
    // The pass that saw streaming false removed both handlers; a message runs after it.
    return TestApp.runOnMain(() -> {}, timeoutMs) ? s.calls : -1;
  }
}
