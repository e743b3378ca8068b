package com.example.app;

import android.util.Printer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Another tool's printer, modelled on Tencent Matrix's LooperMonitor: it keeps the printer it found in a
 * private field and forwards every line to it; its reset (LooperScenarios.wrapPrinterLikeMatrix) wraps the
 * Looper's printer again whenever that is not its own.
 */
public final class WrappingPrinter implements Printer {
  private final Printer origin;
  public final AtomicInteger dispatchLines = new AtomicInteger();

  WrappingPrinter(Printer origin) { this.origin = origin; }

  @Override
  public void println(String x) {
    if (x.startsWith(">>>>>")) dispatchLines.incrementAndGet();
    if (origin != null) origin.println(x);
  }

  @Override
  public String toString() { return "WrappingPrinter -> " + origin; }
}
