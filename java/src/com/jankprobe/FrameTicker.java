package com.jankprobe;

import android.os.Handler;
import android.os.Looper;
import android.view.Choreographer;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A Choreographer frame callback on the main thread that re-posts itself every frame while the main thread
 * is active, so the native side sees the frame gaps: a gap longer than one refresh interval is dropped
 * frames.
 *
 * It parks when the main thread is idle: after PARK_AFTER_FRAMES on-time frames in a row with no message
 * but the frame's own in between, it stops re-posting (an idle app would otherwise wake the main thread and
 * keep vsync requested 60 times a second for nothing). LooperPrinter calls onDispatch() before every
 * message; the first one while parked resumes the ticker, and the run starts afresh (the gap over the parked
 * period is not a jank). A slow message that starts while parked is still covered: its report estimates the
 * frames it cost from its wall time.
 *
 * Frames are counted here and handed to the native side in batches, not one JNI call per frame:
 * nativeFrame(t) for the first frame of a run, nativeFrames(t, n) for n frames since the previous call, the
 * last at t, called for every gap that looks late (alone, so that it becomes one `frame` record), every
 * FLUSH_EVERY frames and when parking. Whether a gap looks late is only decided here to choose when to call:
 * the native side counts the drops of a batch from its own refresh estimate, so a wrong guess costs a call
 * or merges a record, never a frame.
 *
 * start() and stop() may be called from any thread; everything else runs on the main thread (Choreographer
 * is per-Looper, the Printer runs on the Looper's thread).
 */
public final class FrameTicker implements Choreographer.FrameCallback {
  /** On-time frames in a row, with no other message, after which the ticker parks (0.5 s at 60 Hz). */
  public static final int PARK_AFTER_FRAMES = 30;
  /** At most this many frames counted before the native side hears of them. */
  public static final int FLUSH_EVERY = 64;
  private static final long MIN_GAP_NANOS = 4_000_000L;  // two callbacks for one vsync: not a gap

  private static native void nativeFrame(long frameTimeNanos);
  private static native void nativeFrames(long frameTimeNanos, int frames);

  /** The running ticker, for the printer's onDispatch (null when none). */
  private static final AtomicReference<FrameTicker> sActive = new AtomicReference<>();

  private volatile boolean running;

  // Main thread only.
  private boolean posted;           // a frame callback of ours is waiting in the Choreographer
  private boolean parked;
  private int messages;             // messages dispatched since the previous frame (the frame's own included)
  private long lastFrameNanos;      // the previous frame of this run; 0: the next frame starts a run
  private int unreported;           // on-time frames counted since the last native call
  private int onTimeRun;            // on-time frames in a row with no other message
  private long shortestGap;         // "on time" is below 1.5 times this
  private long windowShortestGap;   // the shortest gap of the current window of FLUSH_EVERY frames
  private int windowFrames;

  public void start() {
    running = true;
    sActive.set(this);
    new Handler(Looper.getMainLooper()).post(new Runnable() {
      @Override
      public void run() {
        if (running) resume();
      }

      @Override
      public String toString() { return "jankprobe.FrameTicker.start"; }
    });
  }

  public void stop() {
    running = false;
    sActive.compareAndSet(this, null);
  }

  /** LooperPrinter, main thread, before each message is dispatched. */
  static void onDispatch() {
    final FrameTicker t = sActive.get();
    if (t == null) return;
    t.messages++;
    if (t.parked && t.running) t.resume();
  }

  private void resume() {
    flush();
    parked = false;
    lastFrameNanos = 0;  // the next frame starts a run: no gap across the time we were not looking
    onTimeRun = 0;
    if (!posted) {
      posted = true;
      Choreographer.getInstance().postFrameCallback(this);
    }
  }

  @Override
  public void doFrame(long frameTimeNanos) {
    posted = false;
    if (!running) return;
    final int seen = messages;
    messages = 0;
    if (lastFrameNanos == 0 || frameTimeNanos <= lastFrameNanos) {
      flush();  // frames of the previous run, if any
      nativeFrame(frameTimeNanos);
      onTimeRun = 0;
    } else {
      final long gap = frameTimeNanos - lastFrameNanos;
      if (gap >= MIN_GAP_NANOS) {
        if (shortestGap == 0 || gap < shortestGap) shortestGap = gap;  // a shorter gap is always believable
        if (windowShortestGap == 0 || gap < windowShortestGap) windowShortestGap = gap;
      }
      final boolean late = gap > shortestGap + shortestGap / 2;
      if (late) {
        flush();  // the on-time frames before it, then the late gap alone
        nativeFrames(frameTimeNanos, 1);
      } else if (++unreported >= FLUSH_EVERY) {
        lastFrameNanos = frameTimeNanos;
        flush();
      }
      onTimeRun = !late && seen <= 1 ? onTimeRun + 1 : 0;
      // Forget gaps older than a window: after a switch to a slower refresh the old interval would make
      // every frame look late.
      if (++windowFrames >= FLUSH_EVERY) {
        shortestGap = windowShortestGap;
        windowShortestGap = 0;
        windowFrames = 0;
      }
    }
    lastFrameNanos = frameTimeNanos;
    if (onTimeRun >= PARK_AFTER_FRAMES) {
      flush();
      parked = true;
      return;
    }
    posted = true;
    Choreographer.getInstance().postFrameCallback(this);
  }

  // Tells the native side about the on-time frames counted since the last call, the last at lastFrameNanos.
  private void flush() {
    if (unreported > 0 && lastFrameNanos > 0) nativeFrames(lastFrameNanos, unreported);
    unreported = 0;
  }
}
