package com.example.app;

import android.os.Handler;
import android.os.Looper;
import android.util.Printer;
import java.lang.reflect.Field;

/**
 * The looper monitor's scenarios on the main looper: slow and sleeping messages, a printer replaced or
 * cleared by app code, a simulated ANR with messages waiting behind it, and the printer cost loops the
 * benchmark drives.
 */
public final class LooperScenarios {
  private static volatile CountingPrinter latePrinter;
  private static volatile WorkHandler work;

  private LooperScenarios() {}

  private static Handler main() { return new Handler(Looper.getMainLooper()); }

  private static WorkHandler work() {
    if (work == null) work = new WorkHandler(Looper.getMainLooper());
    return work;
  }

  /** Posts a message that keeps the main thread busy for ms, then waits until the loop is free again. */
  public static int runSlow(long ms) throws InterruptedException {
    main().post(new SlowTask(ms));
    return TestApp.runOnMain(() -> {}, ms + 5000) ? 0 : 1;
  }

  /**
   * runSlow(ms), then the Choreographer's count of frame callbacks run, read on the main thread right after
   * the message (-1 if it did not end in time): the count at the end of the app's busy spell, which a test
   * thread reading it later (after its own wake-up latency) would overstate.
   */
  public static int runSlowThenFrameCallbacks(long ms) throws InterruptedException {
    main().post(new SlowTask(ms));
    final long[] calls = new long[1];
    return TestApp.runOnMain(() -> calls[0] = android.view.Choreographer.callbacksRun(), ms + 5000) ? (int) calls[0] : -1;
  }

  /**
   * Test probe into jankprobe's FrameTicker (by reflection: its state is private and main-thread only, so it
   * is read on the main thread): when it is parked, the Choreographer's count of frame callbacks run, read
   * in the same step (a parked ticker has no callback waiting, so the count stays there until it resumes);
   * -1 while it runs, -2 with no ticker, -3 when the main thread did not answer, -4 when the class changed.
   */
  public static int tickerParkedFrameCallbacks() throws InterruptedException {
    final int[] out = {-3};
    TestApp.runOnMain(() -> {
      try {
        final Class<?> c = Class.forName("com.jankprobe.FrameTicker");
        final Field active = c.getDeclaredField("sActive");
        active.setAccessible(true);
        final Object ticker = active.get(null);  // a static volatile FrameTicker
        if (ticker == null) {
          out[0] = -2;
          return;
        }
        final Field parked = c.getDeclaredField("parked");
        parked.setAccessible(true);
        out[0] = parked.getBoolean(ticker) ? (int) android.view.Choreographer.callbacksRun() : -1;
      } catch (ReflectiveOperationException e) {
        out[0] = -4;
      }
    }, 5000);
    return out[0];
  }

  /**
   * The main thread's Choreographer's count of skipped frames (delivered one interval or more after their
   * vsync), the display's own ground truth for frames dropped; -1 when the main thread did not answer.
   */
  /** The main thread's kernel tid, read on it from /proc/thread-self ("PID/task/TID"), or -1. */
  public static int mainTid() throws InterruptedException {
    final int[] out = {-1};
    TestApp.runOnMain(() -> {
      try {
        final String link = java.nio.file.Files.readSymbolicLink(java.nio.file.Paths.get("/proc/thread-self")).toString();
        out[0] = Integer.parseInt(link.substring(link.lastIndexOf('/') + 1));
      } catch (java.io.IOException | RuntimeException e) {
        out[0] = -1;
      }
    }, 5000);
    return out[0];
  }

  public static int skippedFrames() throws InterruptedException {
    final int[] out = {-1};
    TestApp.runOnMain(() -> out[0] = android.view.Choreographer.getInstance().skippedFrames(), 5000);
    return out[0];
  }

  public static int runSleepy(long ms) throws InterruptedException {
    main().post(new SleepyTask(ms));
    return TestApp.runOnMain(() -> {}, ms + 5000) ? 0 : 1;
  }

  /** Posts `n` quick messages to the WorkHandler (what = 7) and waits for them. */
  public static int runQuick(int n) throws InterruptedException {
    final WorkHandler h = work();
    for (int i = 0; i < n; i++) h.sendEmptyMessage(7);
    return TestApp.runOnMain(() -> {}, 5000) ? 0 : 1;
  }

  /**
   * runQuick(n), and how long the main thread was actually busy with it: from a first message that reads
   * the clock to the last one, in microseconds (-1 if it did not end in time). Under load a "quick" message
   * can be descheduled for milliseconds; the test uses this ground truth, not the nominal cost.
   */
  public static int runQuickTimed(int n) throws InterruptedException {
    final long[] start = new long[1];
    final long[] end = new long[1];
    main().post(() -> start[0] = System.nanoTime());
    final WorkHandler h = work();
    for (int i = 0; i < n; i++) h.sendEmptyMessage(7);
    if (!TestApp.runOnMain(() -> end[0] = System.nanoTime(), 5000)) return -1;
    return (int) ((end[0] - start[0]) / 1000);
  }

  /**
   * A simulated ANR: the main thread stuck for stuckMs in a SlowTask, with two WorkHandler messages
   * (what 41, 42) queued behind it and one far in the future (what 43, due in 60 s). Returns at once.
   */
  public static int simulateAnr(long stuckMs) {
    main().post(new SlowTask(stuckMs));
    final WorkHandler h = work();
    h.sendEmptyMessage(41);
    h.sendEmptyMessage(42);
    h.sendEmptyMessageDelayed(43, 60_000);
    return 0;
  }

  public static int removeFutureWork() {
    work().removeMessages(43);
    return 0;
  }

  /** App code replacing the main looper's printer with its own ("counting") or clearing it ("null"). */
  public static int replacePrinter(String kind) {
    if ("null".equals(kind)) {
      Looper.getMainLooper().setMessageLogging(null);
    } else {
      latePrinter = new CountingPrinter();
      Looper.getMainLooper().setMessageLogging(latePrinter);
    }
    return 0;
  }

  private static volatile WrappingPrinter wrapping;

  /**
   * Another tool's periodic printer reset, as Matrix's LooperMonitor does it: when the Looper's printer is
   * not the one it set last, it wraps whatever is there and sets that. 1 when it wrapped, 0 when its own was
   * still in place.
   */
  public static int wrapPrinterLikeMatrix() throws ReflectiveOperationException {
    final Field f = Looper.class.getDeclaredField("mLogging");
    f.setAccessible(true);
    final Object current = f.get(Looper.getMainLooper());
    if (current != null && current == wrapping) return 0;
    wrapping = new WrappingPrinter((Printer) current);
    Looper.getMainLooper().setMessageLogging(wrapping);
    return 1;
  }

  public static int wrappingPrinterLines() { return wrapping == null ? -1 : wrapping.dispatchLines.get(); }

  /** The last SlowTask's own CPU time in microseconds. */
  public static int lastSlowCpuMicros() { return (int) SlowTask.lastCpuMicros; }

  public static int latePrinterLines() { return latePrinter == null ? -1 : latePrinter.dispatchLines.get(); }

  public static int earlyPrinterLines() { return TestApp.earlyPrinter.dispatchLines.get(); }

  /** The main looper's printer chain as text ("jankprobe.LooperPrinter(active -> ...)"). */
  public static String printerChain() throws ReflectiveOperationException {
    final Field f = Looper.class.getDeclaredField("mLogging");
    f.setAccessible(true);
    return String.valueOf(f.get(Looper.getMainLooper()));
  }

  // ---- benchmark loops: the dispatch logging of n messages, as Looper.loop() prints it ----

  private static final Handler benchHandler = new Handler(Looper.getMainLooper()) {
    @Override
    public String toString() { return "Handler (com.example.app.BenchHandler) {1b6d3586}"; }
  };
  private static final Runnable benchCallback = new Runnable() {
    @Override
    public void run() {}

    @Override
    public String toString() { return "com.example.app.BenchTask@4e50df2e"; }
  };

  /** Looper's two lines per message (built as Looper builds them) printed to `p`; returns a checksum. */
  public static long printLoop(Printer p, int n) {
    long sum = 0;
    for (int i = 0; i < n; i++) {
      final String begin = ">>>>> Dispatching to " + benchHandler + " " + benchCallback + ": " + i;
      p.println(begin);
      final String end = "<<<<< Finished to " + benchHandler + " " + benchCallback;
      p.println(end);
      sum += begin.length() + end.length();
    }
    return sum;
  }

  /** The stand-in's own cost: the lines built and handed to a Printer that does nothing with them. */
  public static long benchPlain(int n) { return printLoop(x -> {}, n); }

  /** The same through jankprobe's LooperPrinter chained to that do-nothing Printer. */
  public static long benchJankprobe(int n) {
    return printLoop(new com.jankprobe.LooperPrinter(x -> {}), n);
  }
}
