package com.example.app;

import android.os.MessageQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** A cheap handler that stays registered (returns true) and counts its calls. */
public final class CountingIdleHandler implements MessageQueue.IdleHandler {
  public final AtomicInteger calls = new AtomicInteger();

  @Override
  public boolean queueIdle() {
    calls.incrementAndGet();
    return true;
  }
}
