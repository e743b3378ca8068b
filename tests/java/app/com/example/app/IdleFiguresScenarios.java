package com.example.app;

import android.os.MessageQueue;
import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * For tests/jvm/idle_figures_status_test.cc: the idle monitor's per-class figures (kept on the Java side in
 * TimingIdleHandlerList, read by the status) as an app that adds one-shot handlers sees them.
 */
public final class IdleFiguresScenarios {
  private IdleFiguresScenarios() {}

  /** Runs once: returns false, so the queue removes it after its call, as an app's one-shot handler. */
  public static final class OneShot implements MessageQueue.IdleHandler {
    static final AtomicInteger calls = new AtomicInteger();

    @Override
    public boolean queueIdle() {
      calls.incrementAndGet();
      return false;
    }
  }

  private static WeakReference<OneShot> lastOneShot;

  /** Adds a new OneShot from the main thread and waits for the idle pass that runs it: OneShot calls so far. */
  public static int runOneShot() throws InterruptedException {
    final OneShot h = new OneShot();
    lastOneShot = new WeakReference<OneShot>(h);
    TestApp.addIdleHandler(h);
    return TestApp.pokeMain() == 1 ? OneShot.calls.get() : -1;
  }

  /**
   * 1 when the last OneShot, run and removed by its queue, was collected within 50 requested collections
   * (nothing of jankprobe's may keep an app's handler once the queue let it go), else 0.
   */
  public static int lastOneShotCollected() throws InterruptedException {
    for (int i = 0; i < 50 && lastOneShot.get() != null; i++) {
      System.gc();
      Thread.sleep(10);
    }
    return lastOneShot.get() == null ? 1 : 0;
  }
}
