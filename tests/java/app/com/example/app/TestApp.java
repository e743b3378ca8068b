package com.example.app;

import android.os.Handler;
import android.os.Looper;
import android.os.Message;
import android.os.MessageQueue;
import android.os.SystemClock;
import com.jankprobe.JankProbe;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The test "app": loaded by its own class loader together with jankprobe.jar, as an APK's classes are. It
 * loads libjankprobe.so (so JNI_OnLoad runs with this loader), runs the main looper on a thread of its own
 * that calls JankProbe.start like an Application.onCreate would, and offers the scenarios the native tests
 * drive: idle handlers, a leaked barrier (the scripted bug), traversal-like barrier pairs.
 */
public final class TestApp {
  private static final List<String> reports = new ArrayList<>();
  private static volatile Handler mainHandler;
  private static volatile Thread mainThread;
  public static final CountingIdleHandler early = new CountingIdleHandler();
  /** The app's own message logging, set before jankprobe starts (jankprobe must chain to it). */
  public static final CountingPrinter earlyPrinter = new CountingPrinter();

  private TestApp() {}

  /** System.load from a class of this loader: the library's JNI_OnLoad then sees this loader. */
  public static void loadNative(String path) { System.load(path); }

  /** Starts the main thread: prepareMainLooper, an idle handler registered before start, JankProbe.start, loop. */
  public static int startMain(final String config) throws InterruptedException {
    final CountDownLatch started = new CountDownLatch(1);
    final int[] rc = new int[1];
    JankProbe.setListener(json -> {
      synchronized (reports) {
        reports.add(json);
        reports.notifyAll();
      }
    });
    mainThread = new Thread(() -> {
      Looper.prepareMainLooper();
      mainHandler = new Handler(Looper.myLooper());
      Looper.myQueue().addIdleHandler(early);  // registered before jankprobe starts: must survive the swap
      Looper.myLooper().setMessageLogging(earlyPrinter);  // likewise: must keep seeing every dispatch
      rc[0] = JankProbe.start(config);
      started.countDown();
      Looper.loop();
    }, "main");
    mainThread.setDaemon(true);
    mainThread.start();
    started.await();
    return rc[0];
  }

  public static void stopMain() throws InterruptedException {
    Looper.getMainLooper().quitSafely();
    mainThread.join(5000);
  }

  /** Runs r on the main thread and waits for it (false on timeout: the main loop is stuck). */
  public static boolean runOnMain(final Runnable r, long timeoutMs) throws InterruptedException {
    final CountDownLatch done = new CountDownLatch(1);
    mainHandler.post(() -> {
      r.run();
      done.countDown();
    });
    return done.await(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** The first report of this type whose JSON contains `needle` (null: any), within timeoutMs, or null. */
  public static String awaitReport(String type, String needle, long timeoutMs) throws InterruptedException {
    final long end = SystemClock.uptimeMillis() + timeoutMs;
    final String tag = "\"type\":\"" + type + "\"";
    synchronized (reports) {
      for (;;) {
        for (String r : reports) {
          if (r.contains(tag) && (needle == null || r.contains(needle))) return r;
        }
        final long left = end - SystemClock.uptimeMillis();
        if (left <= 0) return null;
        reports.wait(left);
      }
    }
  }

  public static int countReports(String type) {
    final String tag = "\"type\":\"" + type + "\"";
    int n = 0;
    synchronized (reports) {
      for (String r : reports) {
        if (r.contains(tag)) n++;
      }
    }
    return n;
  }

  public static void clearReports() {
    synchronized (reports) {
      reports.clear();
    }
  }

  /** Adds a handler from the main thread, as app code does. */
  public static void addIdleHandler(final MessageQueue.IdleHandler h) throws InterruptedException {
    runOnMain(() -> Looper.myQueue().addIdleHandler(h), 5000);
  }

  public static void removeIdleHandler(final MessageQueue.IdleHandler h) throws InterruptedException {
    runOnMain(() -> Looper.myQueue().removeIdleHandler(h), 5000);
  }

  /** The scripted bug: a sync barrier posted and never removed (a ViewRootImpl that lost its traversal). */
  public static int leakBarrier() throws InterruptedException {
    final int[] token = new int[1];
    runOnMain(() -> token[0] = Looper.myQueue().postSyncBarrier(), 5000);
    return token[0];
  }

  /** Posts ordinary work behind whatever is in the queue; the returned counter becomes 1 when it ran. */
  public static AtomicInteger postWork() {
    final AtomicInteger ran = new AtomicInteger();
    mainHandler.post(ran::incrementAndGet);
    return ran;
  }

  /** Whether posted work ran within timeoutMs. */
  public static boolean awaitWork(AtomicInteger ran, long timeoutMs) throws InterruptedException {
    final long end = SystemClock.uptimeMillis() + timeoutMs;
    while (ran.get() == 0) {
      if (SystemClock.uptimeMillis() >= end) return false;
      Thread.sleep(5);
    }
    return true;
  }

  /**
   * Traversal-like pairs for durationMs: each posts a barrier and an asynchronous "frame" that removes it
   * frameMs later, as scheduleTraversals / doTraversal do. Returns the number of pairs completed.
   */
  public static int runTraversals(long durationMs, final long frameMs) throws InterruptedException {
    final Handler async = Handler.createAsync(Looper.getMainLooper());
    final long end = SystemClock.uptimeMillis() + durationMs;
    int pairs = 0;
    while (SystemClock.uptimeMillis() < end) {
      final CountDownLatch done = new CountDownLatch(1);
      mainHandler.post(() -> {
        final int token = Looper.myQueue().postSyncBarrier();
        Message frame = Message.obtain(async, () -> {
          Looper.myQueue().removeSyncBarrier(token);
          done.countDown();
        });
        async.sendMessageDelayed(frame, frameMs);
      });
      if (!done.await(5000, TimeUnit.MILLISECONDS)) return -1;
      pairs++;
    }
    return pairs;
  }

  private static volatile SlowIdleHandler slow;
  private static final CountingIdleHandler counting = new CountingIdleHandler();

  /**
   * Waits for one full idle pass of the main queue: a one-shot handler added last runs after every handler
   * registered before it in that pass. 1 when it ran within 5 s, else 0.
   */
  public static int pokeMain() throws InterruptedException {
    final CountDownLatch ran = new CountDownLatch(1);
    runOnMain(() -> Looper.myQueue().addIdleHandler(() -> {
      ran.countDown();
      return false;
    }), 5000);
    if (!ran.await(5000, TimeUnit.MILLISECONDS)) return 0;
    // A message runs only after the idle pass finished (and removed the handlers that returned false).
    return runOnMain(() -> {}, 5000) ? 1 : 0;
  }

  public static int addSlowIdleHandler(long ms) throws InterruptedException {
    slow = new SlowIdleHandler(ms);
    addIdleHandler(slow);
    return 0;
  }

  public static int slowCalls() { return slow == null ? -1 : slow.calls.get(); }

  public static int addCountingIdleHandler() throws InterruptedException {
    addIdleHandler(counting);
    return 0;
  }

  public static int removeCountingIdleHandler() throws InterruptedException {
    removeIdleHandler(counting);
    return 1;
  }

  public static int countingCalls() { return counting.calls.get(); }

  /**
   * Puts another tool's list (ForeignIdleHandlerList, holding the handlers there now) into
   * MessageQueue.mIdleHandlers, or with plain = true a plain ArrayList of the handlers back; under the
   * queue's lock, as a tool's reflection would. 1 when swapped, 0 when the list there was not the kind
   * expected (jankprobe's own, say).
   */
  public static int swapIdleHandlerList(boolean plain) throws Exception {
    final MessageQueue queue = Looper.getMainLooper().getQueue();
    final java.lang.reflect.Field f = MessageQueue.class.getDeclaredField("mIdleHandlers");
    f.setAccessible(true);
    synchronized (queue) {
      final Object current = f.get(queue);
      if (plain) {
        if (!(current instanceof ForeignIdleHandlerList)) return 0;
        f.set(queue, ((ForeignIdleHandlerList) current).unwrapped());
      } else {
        if (current.getClass() != ArrayList.class) return 0;
        @SuppressWarnings("unchecked")
        final ArrayList<MessageQueue.IdleHandler> list = (ArrayList<MessageQueue.IdleHandler>) current;
        f.set(queue, new ForeignIdleHandlerList(list));
      }
      return 1;
    }
  }

  public static int earlyCalls() { return early.calls.get(); }

  /** Removes a barrier from the main thread (what the app's fixed code would do). */
  public static boolean removeBarrier(final int token) throws InterruptedException {
    // From an asynchronous message, as doTraversal does: a synchronous one would wait behind the barrier.
    final boolean[] removed = new boolean[1];
    final CountDownLatch done = new CountDownLatch(1);
    Handler.createAsync(Looper.getMainLooper()).post(() -> {
      try {
        Looper.myQueue().removeSyncBarrier(token);
        removed[0] = true;
      } catch (IllegalStateException e) {
        removed[0] = false;  // unknown token: already removed
      }
      done.countDown();
    });
    return done.await(5000, TimeUnit.MILLISECONDS) && removed[0];
  }

  /**
   * What MessageQueue.mIdleHandlers holds, read by reflection under the queue's lock: "ListClass[A,B]" with
   * each element's class, so tests see both the list jankprobe installed and whether elements are wrapped.
   */
  public static String idleHandlersDescription() throws Exception {
    final MessageQueue queue = Looper.getMainLooper().getQueue();
    final java.lang.reflect.Field f = MessageQueue.class.getDeclaredField("mIdleHandlers");
    f.setAccessible(true);
    synchronized (queue) {
      final List<?> list = (List<?>) f.get(queue);
      final StringBuilder sb = new StringBuilder(list.getClass().getName()).append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) sb.append(',');
        sb.append(list.get(i).getClass().getName());
      }
      return sb.append(']').toString();
    }
  }

  public static int exportTrace(String path) { return JankProbe.export(path, JankProbe.EXPORT_CHROME_TRACE); }

  public static int configure(String config) { return JankProbe.configure(config); }

  public static String status() { return JankProbe.status(); }

  /** Keeps the queue non-empty and the main thread busy for ms (a long synchronous message + work behind it). */
  public static void busyMain(final long ms) {
    mainHandler.post(() -> SystemClock.sleep(ms));
    mainHandler.post(() -> {});
  }
}
