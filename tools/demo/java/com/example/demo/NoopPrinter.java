package com.example.demo;

import android.util.Printer;

/**
 * A Printer that does nothing, set by the app on its main Looper in the benchmark's reference runs: with
 * any Printer set, Looper builds two dispatch strings per message, which is the floor of what every
 * Printer-based monitor (jankprobe's looper monitor, BlockCanary, Matrix) costs the main thread.
 */
final class NoopPrinter implements Printer {
  private int lines;

  @Override
  public void println(String x) { lines++; }  // counted so the call is not an empty method the JIT can fold

  int lines() { return lines; }
}
