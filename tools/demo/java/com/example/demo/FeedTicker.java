package com.example.demo;

import android.os.Handler;

/** Ordinary messages: a synchronous message every 50 ms that binds a few feed rows (cheap work). */
final class FeedTicker implements Runnable {
  static final long PERIOD_MS = 50;
  private final Handler handler;
  private final StringBuilder row = new StringBuilder();
  private long ticks;

  FeedTicker(Handler handler) { this.handler = handler; }

  long ticks() { return ticks; }

  void start() { handler.postDelayed(this, PERIOD_MS); }

  @Override
  public void run() {
    ticks++;
    for (int i = 0; i < 4; i++) {
      row.setLength(0);
      row.append("item ").append(ticks).append('/').append(i);
    }
    handler.postDelayed(this, PERIOD_MS);
  }
}
