package com.example.app;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The scripted slow message: spins `ms` of wall time in crunchNumbers() (one source line, so samples
 * match). It measures its own thread CPU time (ThreadMXBean), the ground truth for the monitor's cpu_ms
 * on a host where the busy loop shares the cores with other work.
 */
public final class SlowTask implements Runnable {
  private static final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  /** CPU time of the last run, in microseconds (-1 before the first). */
  public static volatile long lastCpuMicros = -1;

  private final long ms;
  public volatile long sink;

  public SlowTask(long ms) { this.ms = ms; }

  @Override
  public void run() {
    final long cpu0 = threads.getCurrentThreadCpuTime();
    sink = crunchNumbers();
    lastCpuMicros = (threads.getCurrentThreadCpuTime() - cpu0) / 1000;
  }

  private long crunchNumbers() {
    final long end = System.nanoTime() + ms * 1_000_000L;
    long x = 1;
    while (System.nanoTime() < end) x = x * 31 + 7;
    return x;
  }
}
