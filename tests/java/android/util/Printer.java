package android.util;

/** Stand-in for android.util.Printer: receives one line of text at a time (Looper's dispatch log). */
public interface Printer {
  void println(String x);
}
