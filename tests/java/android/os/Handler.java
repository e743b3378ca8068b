package android.os;

/** Stand-in for android.os.Handler: posts to its looper's queue, dispatches callback / Callback / handleMessage. */
public class Handler {
  public interface Callback {
    boolean handleMessage(Message msg);
  }

  final Looper mLooper;
  final MessageQueue mQueue;
  final Callback mCallback;
  final boolean mAsynchronous;

  /** Deprecated on Android, kept because old app code uses it: the calling thread's looper. */
  public Handler() { this(Looper.myLooper(), null, false); }

  public Handler(Looper looper) { this(looper, null, false); }

  public Handler(Looper looper, Callback callback) { this(looper, callback, false); }

  /** @hide on Android; public there through createAsync(). */
  public Handler(Looper looper, Callback callback, boolean async) {
    if (looper == null) throw new RuntimeException("Can't create handler inside thread that has not called Looper.prepare()");
    mLooper = looper;
    mQueue = looper.mQueue;
    mCallback = callback;
    mAsynchronous = async;
  }

  public static Handler createAsync(Looper looper) { return new Handler(looper, null, true); }

  public void handleMessage(Message msg) {}

  public void dispatchMessage(Message msg) {
    if (msg.callback != null) {
      msg.callback.run();
    } else {
      if (mCallback != null && mCallback.handleMessage(msg)) return;
      handleMessage(msg);
    }
  }

  public final Looper getLooper() { return mLooper; }

  public final Message obtainMessage(int what) { return Message.obtain(this, what); }

  public final boolean post(Runnable r) { return sendMessageDelayed(Message.obtain(this, r), 0); }

  public final boolean postDelayed(Runnable r, long delayMillis) { return sendMessageDelayed(Message.obtain(this, r), delayMillis); }

  public final boolean postAtTime(Runnable r, long uptimeMillis) { return sendMessageAtTime(Message.obtain(this, r), uptimeMillis); }

  public final boolean sendMessage(Message msg) { return sendMessageDelayed(msg, 0); }

  public final boolean sendEmptyMessage(int what) { return sendMessage(obtainMessage(what)); }

  public final boolean sendEmptyMessageDelayed(int what, long delayMillis) {
    return sendMessageDelayed(obtainMessage(what), delayMillis);
  }

  public final boolean sendMessageDelayed(Message msg, long delayMillis) {
    if (delayMillis < 0) delayMillis = 0;
    return sendMessageAtTime(msg, SystemClock.uptimeMillis() + delayMillis);
  }

  public boolean sendMessageAtTime(Message msg, long uptimeMillis) { return enqueueMessage(msg, uptimeMillis); }

  public final boolean sendMessageAtFrontOfQueue(Message msg) { return enqueueMessage(msg, 0); }

  public final boolean postAtFrontOfQueue(Runnable r) { return sendMessageAtFrontOfQueue(Message.obtain(this, r)); }

  private boolean enqueueMessage(Message msg, long uptimeMillis) {
    msg.target = this;
    if (mAsynchronous) msg.setAsynchronous(true);
    return mQueue.enqueueMessage(msg, uptimeMillis);
  }

  public final boolean hasMessages(int what) { return mQueue.hasMessages(this, what, null); }

  public final boolean hasCallbacks(Runnable r) { return mQueue.hasMessages(this, r, null); }

  public final void removeMessages(int what) { mQueue.removeMessages(this, what, null); }

  public final void removeCallbacks(Runnable r) { mQueue.removeMessages(this, r, null); }

  public final void removeCallbacksAndMessages(Object token) { mQueue.removeCallbacksAndMessages(this, token); }

  @Override
  public String toString() {
    return "Handler (" + getClass().getName() + ") {" + Integer.toHexString(System.identityHashCode(this)) + "}";
  }
}
