package com.example.demo;

import android.os.SystemClock;

/** Fault 4: a message whose work blocks the main thread for seconds (a synchronous network call). */
final class ReportUploader implements Runnable {
  private final long ms;

  ReportUploader(long ms) { this.ms = ms; }

  @Override
  public void run() {
    uploadBlocking();
    DemoApp.stuckMessageDone();
  }

  private void uploadBlocking() { SystemClock.sleep(ms); }
}
