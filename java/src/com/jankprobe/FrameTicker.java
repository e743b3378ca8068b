package com.jankprobe;

import android.os.Handler;
import android.os.Looper;
import android.view.Choreographer;

/**
 * A Choreographer frame callback on the main thread that re-posts itself every frame while the main thread
 * has work, so the native side sees the frame gaps: a gap longer than one refresh interval is dropped
 * frames.
 *
 * It parks while the main thread is idle or nearly so: after PARK_AFTER_FRAMES on-time frames in a row,
 * each with the main thread busy for less than a quarter of a frame since the previous one, it stops
 * re-posting (otherwise it would wake the main thread, and on a phone keep vsync requested, 60 times a
 * second for nothing: a quick message now and then cannot make a frame late). LooperPrinter tells it about
 * every message (onDispatchBegin / onDispatchEnd). While parked it resumes when
 * - a Choreographer frame is dispatched (the app draws: the frames that can be dropped are being made), or
 * - the messages of the last interval kept the main thread busy for a quarter of a frame or more (the app
 *   got busy: the next frames may be late).
 * With the poll source there is no LooperPrinter: the native side knows we parked (nativeParked) and, when
 * one main-thread gap between two Looper waits lasts a quarter of a frame or more, the watchdog calls
 * resumeFromNative(), which resumes us from the front of the main queue. Quick messages then never resume
 * us (no per-message Java call at all), and "busy since the last frame" stays 0, so parking there depends
 * on on-time frames only.
 * A resumed ticker starts a new run: the gap over the parked period is not a jank. Frames lost inside a
 * slow message that started while parked are still estimated from its wall time in its report
 * (frames_lost_estimate).
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
 *
 * Every class here is one the app loads, reads from its dex and keeps in memory for good: the ticker is its
 * own start and resume message (run()) rather than an anonymous Runnable each, and sActive is a volatile
 * field behind a lock rather than an AtomicReference (a JDK class an app need not have loaded otherwise).
 */
public final class FrameTicker implements Choreographer.FrameCallback, Runnable {
  /** Quiet on-time frames in a row after which the ticker parks (0.5 s at 60 Hz). */
  public static final int PARK_AFTER_FRAMES = 30;
  /** At most this many frames counted before the native side hears of them. */
  public static final int FLUSH_EVERY = 64;
  private static final long MIN_GAP_NANOS = 4_000_000L;         // two callbacks for one vsync: not a gap
  private static final long DEFAULT_INTERVAL_NANOS = 16_666_667L;  // until a gap says otherwise
  private static final long MAX_INTERVAL_NANOS = 50_000_000L;      // no display is slower than 20 Hz
  private static final String CHOREOGRAPHER_FRAME = "Choreographer$FrameDisplayEventReceiver";

  private static native void nativeFrame(long frameTimeNanos);
  private static native void nativeFrames(long frameTimeNanos, int frames);
  private static native void nativeParked(boolean parked);

  /** The running ticker, for the printer's hooks (null when none). Written under FrameTicker.class. */
  private static volatile FrameTicker sActive;

  private volatile boolean running;

  // Main thread only.
  private boolean posted;           // a frame callback of ours is waiting in the Choreographer
  private boolean parked;
  private long dispatchStart;       // System.nanoTime() at the current message's begin
  private long busySinceFrame;      // main-thread time in messages since the previous frame
  private long busyWindowStart;     // parked: the load window's start, and the time busy in it
  private long busyInWindow;
  private long lastFrameNanos;      // the previous frame of this run; 0: the next frame starts a run
  private int unreported;           // on-time frames counted since the last native call
  private int quietRun;             // quiet on-time frames in a row
  private long shortestGap;         // "on time" is below 1.5 times this (0: not known, the default)
  private long windowShortestGap;   // the shortest gap of the current window of FLUSH_EVERY frames
  private int windowFrames;

  public void start() {
    running = true;
    synchronized (FrameTicker.class) {
      sActive = this;
    }
    new Handler(Looper.getMainLooper()).post(this);
  }

  public void stop() {
    running = false;
    synchronized (FrameTicker.class) {
      if (sActive == this) sActive = null;
    }
  }

  /**
   * The poll source (no LooperPrinter): the native side saw a main-thread gap over a quarter frame while
   * we were parked. Any thread; the resume itself runs on the main thread.
   */
  static void resumeFromNative() {
    final FrameTicker t = sActive;
    if (t == null || !t.running) return;
    new Handler(Looper.getMainLooper()).postAtFrontOfQueue(t);
  }

  /**
   * The start message (start()) and the resume message (resumeFromNative()), main thread. Either one
   * resumes a ticker that is not ticking: one that has not posted its first frame callback yet (start), or
   * one that parked. A ticker that ticks (a callback of ours waits) is left alone: a resume message that
   * arrives after the app already resumed it, or a start message behind a resume message, has nothing to
   * do (and resuming would drop the current run's gap).
   */
  @Override
  public void run() {
    if (running && (parked || !posted)) resume();
  }

  /** The name of the start and resume messages in the looper's records. */
  @Override
  public String toString() { return "jankprobe.FrameTicker"; }

  /** LooperPrinter, main thread, before a message is dispatched (line: Looper's ">>>>> Dispatching"). */
  static void onDispatchBegin(String line) {
    final FrameTicker t = sActive;
    if (t == null) return;
    t.dispatchStart = System.nanoTime();
    if (t.parked && t.running && line.contains(CHOREOGRAPHER_FRAME)) t.resumeFromAnyThread();
  }

  /** LooperPrinter, main thread, after the message. */
  static void onDispatchEnd() {
    final FrameTicker t = sActive;
    if (t == null || t.dispatchStart == 0) return;
    final long end = System.nanoTime();
    final long busy = end - t.dispatchStart;
    t.dispatchStart = 0;
    t.busySinceFrame += busy;
    if (!t.parked || !t.running) return;
    if (end - t.busyWindowStart > t.interval()) {
      t.busyWindowStart = end - busy;
      t.busyInWindow = 0;
    }
    t.busyInWindow += busy;
    if (t.busyInWindow >= t.interval() / 4) t.resumeFromAnyThread();
  }

  // Choreographer is per Looper: resume on the main thread, or from its queue when a printer line came from
  // elsewhere (a benchmark driving LooperPrinter directly). Only on the rare resume path.
  private void resumeFromAnyThread() {
    if (Looper.myLooper() == Looper.getMainLooper()) {
      resume();
    } else {
      resumeFromNative();
    }
  }

  private long interval() { return shortestGap != 0 ? shortestGap : DEFAULT_INTERVAL_NANOS; }

  private void resume() {
    flush();
    if (parked) nativeParked(false);
    parked = false;
    lastFrameNanos = 0;  // the next frame starts a run: no gap across the time we were not looking
    quietRun = 0;
    if (!posted) {
      posted = true;
      Choreographer.getInstance().postFrameCallback(this);
    }
  }

  private void park() {
    flush();
    parked = true;
    nativeParked(true);
    busyWindowStart = 0;
    busyInWindow = 0;
  }

  @Override
  public void doFrame(long frameTimeNanos) {
    posted = false;
    if (!running) return;
    final long busy = busySinceFrame;
    busySinceFrame = 0;
    if (lastFrameNanos == 0 || frameTimeNanos <= lastFrameNanos) {
      flush();  // frames of the previous run, if any
      nativeFrame(frameTimeNanos);
      quietRun = 0;
    } else {
      final long gap = frameTimeNanos - lastFrameNanos;
      final long yardstick = interval();
      final boolean late = gap > yardstick + yardstick / 2;
      if (gap >= MIN_GAP_NANOS && gap <= MAX_INTERVAL_NANOS) {
        if (shortestGap == 0 || gap < shortestGap) shortestGap = gap;  // a shorter gap is always believable
        if (windowShortestGap == 0 || gap < windowShortestGap) windowShortestGap = gap;
      }
      if (late) {
        flush();  // the on-time frames before it, then the late gap alone
        nativeFrames(frameTimeNanos, 1);
      } else if (++unreported >= FLUSH_EVERY) {
        lastFrameNanos = frameTimeNanos;
        flush();
      }
      quietRun = !late && busy < yardstick / 4 ? quietRun + 1 : 0;
      // Forget gaps older than a window: after a switch to a slower refresh the old interval would make
      // every frame look late.
      if (++windowFrames >= FLUSH_EVERY) {
        if (windowShortestGap != 0) shortestGap = windowShortestGap;
        windowShortestGap = 0;
        windowFrames = 0;
      }
    }
    lastFrameNanos = frameTimeNanos;
    if (quietRun >= PARK_AFTER_FRAMES) {
      park();
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
