package com.example.app;

import android.util.Printer;
import java.util.concurrent.atomic.AtomicInteger;

/** An app's own message logging (what BlockCanary-style code or WebView installs): counts the lines it sees. */
public final class CountingPrinter implements Printer {
  public final AtomicInteger dispatchLines = new AtomicInteger();
  public final AtomicInteger finishLines = new AtomicInteger();

  @Override
  public void println(String x) {
    if (x.startsWith(">>>>>")) dispatchLines.incrementAndGet();
    if (x.startsWith("<<<<<")) finishLines.incrementAndGet();
  }
}
