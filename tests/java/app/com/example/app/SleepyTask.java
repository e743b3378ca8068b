package com.example.app;

import android.os.SystemClock;

/** A message blocked, not busy: it sleeps `ms` in waitForDisk(), so its wall time is far above its CPU time. */
public final class SleepyTask implements Runnable {
  private final long ms;

  public SleepyTask(long ms) { this.ms = ms; }

  @Override
  public void run() { waitForDisk(); }

  private void waitForDisk() { SystemClock.sleep(ms); }
}
