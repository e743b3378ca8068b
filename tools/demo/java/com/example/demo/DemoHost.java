package com.example.demo;

/**
 * What the demo's launcher (the "framework" process around the app) offers the app: natives registered by
 * the launcher with RegisterNatives, as libandroid_runtime registers the framework's natives on a phone.
 * Nothing here belongs to jankprobe: the app talks to jankprobe only through com.jankprobe.JankProbe.
 */
final class DemoHost {
  private DemoHost() {}

  /** One report from JankProbe's listener (a background thread): printed, kept for the summary and check. */
  static native void onReport(String json);

  /** One line of the app's own narration (script steps, status), printed with the run's clock. */
  static native void log(String line);

  /** JankProbe.status() at a point of the script ("start", "idle off", ...), for the check. */
  static native void status(String phase, String json);

  /** CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), in ns. */
  static native long threadCpuNs();

  /**
   * Opens hardware counters (instructions, cycles) for the calling thread: "user+kernel" or "user" for what
   * they count, or "unavailable: why" (then counters() fills -1 for them).
   */
  static native String openCounters();

  /**
   * The calling thread's {CPU ns, instructions, cycles, user-mode instructions, user-mode cycles} (-1 for
   * what is not counted; instructions and cycles count kernel mode too where allowed).
   */
  static native void counters(long[] out);

  /**
   * Takes the process's resident memory (and, with JP_DEMO_SMAPS set, a smaps copy named after
   * {@code stage}) now: the app calls it in its last message, while it and jankprobe still run.
   */
  static native void snapshot(String stage);

  /** InputConsumer.consume through libinput.so (recvfrom): 1 with {seq, action, consume_time}, 0 none, <0 error. */
  static native int consume(long[] out);

  /** InputConsumer.sendFinishedSignal through libinput.so (__sendto_chk): 0 or -errno. */
  static native int finish(int seq, long consumeTime);

  /** The receiver drained the channel: the fd watcher may report the next readable edge. */
  static native void inputDrained();
}
