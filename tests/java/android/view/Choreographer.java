package android.view;

import android.os.Handler;
import android.os.Looper;
import android.os.Message;
import java.util.ArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stand-in for android.view.Choreographer: one per Looper thread. postFrameCallback schedules one vsync
 * (as DisplayEventReceiver.scheduleVsync does); a shared "vsync" timer delivers it at the next multiple of
 * the refresh interval (on the System.nanoTime base) as an asynchronous message to the looper. doFrame
 * then applies AOSP's jitter rule: when the message runs one interval or more after its vsync, the skipped
 * frames are counted and the frame time is moved to the last vsync before now, so callbacks see frame times
 * on vsync boundaries and a gap of n intervals means n - 1 dropped frames.
 */
public final class Choreographer {
  public interface FrameCallback {
    void doFrame(long frameTimeNanos);
  }

  /** 60 Hz, as a phone's default display. */
  public static final long FRAME_INTERVAL_NANOS = 16_666_667L;

  private static final ThreadLocal<Choreographer> sThreadInstance = new ThreadLocal<Choreographer>() {
    @Override
    protected Choreographer initialValue() {
      final Looper looper = Looper.myLooper();
      if (looper == null) throw new IllegalStateException("The current thread must have a looper!");
      return new Choreographer(looper);
    }
  };

  private static final ScheduledExecutorService sVsync = Executors.newSingleThreadScheduledExecutor(new ThreadFactory() {
    @Override
    public Thread newThread(Runnable r) {
      final Thread t = new Thread(r, "vsync");
      t.setDaemon(true);
      return t;
    }
  });

  // Test ground truth across every instance: frames delivered (vsyncs whose doFrame ran) and frame
  // callbacks run. Not in the platform class.
  private static final AtomicLong sFramesDelivered = new AtomicLong();
  private static final AtomicLong sCallbacksRun = new AtomicLong();

  private final Handler mHandler;
  private final Object mLock = new Object();
  private final ArrayList<FrameCallback> mCallbacks = new ArrayList<>();
  private boolean mFrameScheduled;
  private long mLastFrameTimeNanos;
  private int mSkippedFrames;  // total, what "Skipped N frames" would add up

  private Choreographer(Looper looper) {
    mHandler = Handler.createAsync(looper);
  }

  public static Choreographer getInstance() { return sThreadInstance.get(); }

  public void postFrameCallback(FrameCallback callback) {
    if (callback == null) throw new IllegalArgumentException("callback must not be null");
    synchronized (mLock) {
      mCallbacks.add(callback);
      scheduleFrameLocked();
    }
  }

  public void removeFrameCallback(FrameCallback callback) {
    if (callback == null) throw new IllegalArgumentException("callback must not be null");
    synchronized (mLock) {
      while (mCallbacks.remove(callback)) {}
    }
  }

  public int skippedFrames() {
    synchronized (mLock) {
      return mSkippedFrames;
    }
  }

  public static long framesDelivered() { return sFramesDelivered.get(); }

  public static long callbacksRun() { return sCallbacksRun.get(); }

  private void scheduleFrameLocked() {
    if (mFrameScheduled) return;
    mFrameScheduled = true;
    final long now = System.nanoTime();
    final long vsync = (now / FRAME_INTERVAL_NANOS + 1) * FRAME_INTERVAL_NANOS;
    sVsync.schedule(new Runnable() {
      @Override
      public void run() {
        final Message msg = Message.obtain(mHandler, new Runnable() {
          @Override
          public void run() { doFrame(vsync); }

          @Override
          public String toString() { return "android.view.Choreographer$FrameDisplayEventReceiver"; }
        });
        mHandler.sendMessage(msg);  // asynchronous: a sync barrier does not hold frames back
      }
    }, vsync - now, TimeUnit.NANOSECONDS);
  }

  void doFrame(long frameTimeNanos) {
    final ArrayList<FrameCallback> callbacks;
    synchronized (mLock) {
      if (!mFrameScheduled) return;
      final long now = System.nanoTime();
      final long jitter = now - frameTimeNanos;
      if (jitter >= FRAME_INTERVAL_NANOS) {
        mSkippedFrames += (int) (jitter / FRAME_INTERVAL_NANOS);
        frameTimeNanos = now - jitter % FRAME_INTERVAL_NANOS;
      }
      if (frameTimeNanos < mLastFrameTimeNanos) {
        mFrameScheduled = false;
        scheduleFrameLocked();  // time went backwards relative to the last frame: wait for the next vsync
        return;
      }
      mFrameScheduled = false;
      mLastFrameTimeNanos = frameTimeNanos;
      callbacks = new ArrayList<>(mCallbacks);
      mCallbacks.clear();
    }
    sFramesDelivered.incrementAndGet();
    sCallbacksRun.addAndGet(callbacks.size());
    for (FrameCallback c : callbacks) c.doFrame(frameTimeNanos);
  }
}
