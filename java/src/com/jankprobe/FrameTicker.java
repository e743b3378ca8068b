package com.jankprobe;

import android.os.Handler;
import android.os.Looper;
import android.view.Choreographer;

/**
 * A Choreographer frame callback on the main thread that re-posts itself every frame, so the native side
 * sees every frame time: gaps longer than one refresh interval are dropped frames. start() and stop() may
 * be called from any thread; the callback itself is only ever posted from the main thread (Choreographer
 * is per-Looper).
 */
public final class FrameTicker implements Choreographer.FrameCallback {
  private static native void nativeFrame(long frameTimeNanos);

  private volatile boolean running;

  public void start() {
    running = true;
    new Handler(Looper.getMainLooper()).post(new Runnable() {
      @Override
      public void run() {
        if (!running) return;
        final Choreographer choreographer = Choreographer.getInstance();
        choreographer.removeFrameCallback(FrameTicker.this);  // a start() after stop() must not post it twice
        choreographer.postFrameCallback(FrameTicker.this);
      }

      @Override
      public String toString() { return "jankprobe.FrameTicker.start"; }
    });
  }

  public void stop() { running = false; }

  @Override
  public void doFrame(long frameTimeNanos) {
    if (!running) return;
    nativeFrame(frameTimeNanos);
    Choreographer.getInstance().postFrameCallback(this);
  }
}
