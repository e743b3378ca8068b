package com.example.demo;

import android.os.MessageQueue;

/** An ordinary IdleHandler: runs whenever the queue goes idle, does a little bookkeeping, stays registered. */
final class HousekeepingIdleHandler implements MessageQueue.IdleHandler {
  private long runs;
  private long checksum;

  long runs() { return runs; }

  @Override
  public boolean queueIdle() {
    runs++;
    checksum = checksum * 31 + runs;
    return true;
  }
}
