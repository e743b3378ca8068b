package com.example.app;

import android.os.MessageQueue;
import android.os.SystemClock;
import java.util.concurrent.atomic.AtomicInteger;

/** The slow handler of the scenario: one call that spends `ms` in prefetchEverything(), then removes itself. */
public final class SlowIdleHandler implements MessageQueue.IdleHandler {
  private final long ms;
  public final AtomicInteger calls = new AtomicInteger();

  public SlowIdleHandler(long ms) { this.ms = ms; }

  @Override
  public boolean queueIdle() {
    prefetchEverything();
    calls.incrementAndGet();
    return false;
  }

  private void prefetchEverything() { SystemClock.sleep(ms); }
}
