package android.os;

/**
 * Stand-in for android.os.HandlerThread: a thread with its own Looper (so its queue waits in the same
 * libutils.so epoll_wait as the main thread's, which is what the looper monitor's main-thread filter is
 * tested against).
 */
public class HandlerThread extends Thread {
  private Looper mLooper;

  public HandlerThread(String name) { super(name); }

  @Override
  public void run() {
    Looper.prepare();
    synchronized (this) {
      mLooper = Looper.myLooper();
      notifyAll();
    }
    Looper.loop();
  }

  /** Blocks until the thread's looper exists; null if the thread is not alive. */
  public Looper getLooper() {
    if (!isAlive()) return null;
    boolean interrupted = false;
    synchronized (this) {
      while (isAlive() && mLooper == null) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) Thread.currentThread().interrupt();
    return mLooper;
  }

  public boolean quit() {
    Looper looper = getLooper();
    if (looper == null) return false;
    looper.quit();
    return true;
  }
}
