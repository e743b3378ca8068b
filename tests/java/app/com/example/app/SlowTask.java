package com.example.app;

/** The scripted slow message: spends `ms` of CPU in crunchNumbers() (one source line, so samples match). */
public final class SlowTask implements Runnable {
  private final long ms;
  public volatile long sink;

  public SlowTask(long ms) { this.ms = ms; }

  @Override
  public void run() { sink = crunchNumbers(); }

  private long crunchNumbers() {
    final long end = System.nanoTime() + ms * 1_000_000L;
    long x = 1;
    while (System.nanoTime() < end) x = x * 31 + 7;
    return x;
  }
}
