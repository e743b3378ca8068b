package com.example.demo;

import android.os.MessageQueue;
import android.os.SystemClock;

/** Fault 2: an IdleHandler that does slow work in queueIdle() and so delays whatever becomes due meanwhile. */
final class PrefetchIdleHandler implements MessageQueue.IdleHandler {
  private final long ms;

  PrefetchIdleHandler(long ms) { this.ms = ms; }

  @Override
  public boolean queueIdle() {
    warmImageCache();
    return false;  // one shot
  }

  private void warmImageCache() { SystemClock.sleep(ms); }
}
