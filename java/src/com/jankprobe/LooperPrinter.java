package com.jankprobe;

import android.util.Printer;

/**
 * The Printer jankprobe sets on the main Looper (setMessageLogging). Looper prints ">>>>> Dispatching to
 * {target} {callback}: {what}" before each message and "<<<<< Finished to {target} {callback}" after it;
 * the native side times the dispatch between the two lines.
 *
 * It chains to the printer that was there before (read from Looper.mLogging by the native side), so an
 * app's or a library's own message logging keeps working: the previous printer sees every line, after our
 * begin and before our end, so its cost is not counted in the message's time.
 *
 * Around each message it tells FrameTicker, which parks while the main thread is idle and resumes here when
 * the app draws or gets busy.
 *
 * When someone replaces us, the native side installs a new LooperPrinter chaining to the newcomer and
 * retires this one: a retired printer only forwards (the newcomer may still chain to it), so no line is
 * timed twice.
 */
public final class LooperPrinter implements Printer {
  private static native void nativeBegin(String line);
  private static native void nativeEnd();

  private final Printer previous;
  private volatile boolean active = true;

  public LooperPrinter(Printer previous) { this.previous = previous; }

  @Override
  public void println(String x) {
    final boolean timing = active && x != null && x.length() > 5;
    if (timing && x.startsWith(">>>>>")) {
      FrameTicker.onDispatchBegin(x);  // the frame ticker times the main thread's load (it parks when idle)
      nativeBegin(x);
      if (previous != null) previous.println(x);
    } else if (timing && x.startsWith("<<<<<")) {
      if (previous != null) previous.println(x);
      nativeEnd();
      FrameTicker.onDispatchEnd();
    } else if (previous != null) {
      previous.println(x);
    }
  }

  /** The printer this one chains to (null when there was none). */
  public Printer previous() { return previous; }

  /** Stops timing; the printer keeps forwarding to the previous one. */
  public void retire() { active = false; }

  public boolean isActive() { return active; }

  @Override
  public String toString() { return "jankprobe.LooperPrinter(" + (active ? "active" : "retired") + " -> " + previous + ")"; }
}
