package android.os;

import android.util.Printer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stand-in for android.os.Looper: one per thread, the main one published by prepareMainLooper(); loop()
 * takes messages from the queue and dispatches them, printing the same ">>>>> Dispatching to" /
 * "<<<<< Finished to" lines around each one to the Printer set with setMessageLogging.
 */
public final class Looper {
  private static final ThreadLocal<Looper> sThreadLocal = new ThreadLocal<>();
  private static Looper sMainLooper;
  // Test ground truth (not in Android): the main looper's dispatches, each from before its ">>>>>" line to
  // after its "<<<<<" line, summed in nanoseconds. Whatever a Printer measures of a dispatch lies inside.
  private static final AtomicLong sMainDispatchNanos = new AtomicLong();

  final MessageQueue mQueue;
  final Thread mThread;
  private Printer mLogging;

  private Looper(boolean quitAllowed) {
    mQueue = new MessageQueue(quitAllowed);
    mThread = Thread.currentThread();
  }

  public static void prepare() { prepare(true); }

  private static void prepare(boolean quitAllowed) {
    if (sThreadLocal.get() != null) throw new RuntimeException("Only one Looper may be created per thread");
    sThreadLocal.set(new Looper(quitAllowed));
  }

  /**
   * On Android the main looper cannot quit; the test harness needs to end its main thread, so this
   * stand-in allows it (the only deliberate difference).
   */
  public static void prepareMainLooper() {
    prepare(true);
    synchronized (Looper.class) {
      if (sMainLooper != null) throw new IllegalStateException("The main Looper has already been prepared.");
      sMainLooper = myLooper();
    }
  }

  public static Looper getMainLooper() {
    synchronized (Looper.class) {
      return sMainLooper;
    }
  }

  public static Looper myLooper() { return sThreadLocal.get(); }

  /** Test ground truth: the main looper's dispatches so far, printer lines included, in nanoseconds. */
  public static long mainDispatchNanos() { return sMainDispatchNanos.get(); }

  public static MessageQueue myQueue() { return myLooper().mQueue; }

  public static void loop() {
    final Looper me = myLooper();
    if (me == null) throw new RuntimeException("No Looper; Looper.prepare() wasn't called on this thread.");
    final MessageQueue queue = me.mQueue;
    final boolean main = me == getMainLooper();
    for (;;) {
      Message msg = queue.next();  // might block
      if (msg == null) return;     // the queue is quitting
      final long start = main ? System.nanoTime() : 0;
      final Printer logging = me.mLogging;
      if (logging != null) {
        logging.println(">>>>> Dispatching to " + msg.target + " " + msg.callback + ": " + msg.what);
      }
      msg.target.dispatchMessage(msg);
      if (logging != null) {
        logging.println("<<<<< Finished to " + msg.target + " " + msg.callback);
      }
      if (main) sMainDispatchNanos.addAndGet(System.nanoTime() - start);
      msg.recycleUnchecked();
    }
  }

  public void setMessageLogging(Printer printer) { mLogging = printer; }

  public MessageQueue getQueue() { return mQueue; }

  public Thread getThread() { return mThread; }

  public boolean isCurrentThread() { return Thread.currentThread() == mThread; }

  public void quit() { mQueue.quit(false); }

  public void quitSafely() { mQueue.quit(true); }

  @Override
  public String toString() {
    return "Looper (" + mThread.getName() + ", tid " + mThread.getId() + ") {"
        + Integer.toHexString(System.identityHashCode(this)) + "}";
  }
}
