package com.jankprobe;

/**
 * The idle wrapper's read of the gap word (TimingIdleHandlerList's shared words, long 2), once per
 * queueIdle() call. This is the portable one, the class an app gets (java/src, jankprobe.jar): the direct
 * buffer's view, correct on every VM, and on ART compiled to a Memory.peek intrinsic.
 *
 * Two sources define this class, and they must keep the same non-private members (READ and read(), with
 * these types; tests/jvm/portable_jar.cmake compares them): this one and java/hotspot/com/jankprobe/GapWord.java,
 * which the host's HotSpot builds use (jankprobe-hotspot.jar, the demo, the JVM tests) and which reads the
 * word with sun.misc.Unsafe, one plain load in C1's profiling tier where the view's get is two real calls.
 * The portable one names no sun.* class: Android's compile classpath (android.jar) has none, R8 and D8 would
 * report it missing, and on ART sun.misc.Unsafe is hidden API, whose resolution by the verifier may be logged
 * or denied. A class of its own, not a branch in TimingIdleHandlerList, so that the app's bytecode does not
 * even hold the reference (see TimingIdleHandlerList's class comment).
 */
final class GapWord {
  private GapWord() {}

  /** How read() reads the word, for the tests and the curious (TimingIdleHandlerList.GAP_READ). */
  static final String READ;

  static {
    // Assigned here, not a compile-time constant: javac would copy a constant into its readers' class files.
    READ = "direct buffer: the portable GapWord";
  }

  /** The gap word; a plain load (no ordering beyond program order, see TimingIdleHandlerList). */
  static long read() {
    return TimingIdleHandlerList.RUNNING_SINCE.get(TimingIdleHandlerList.GAP_START_INDEX);
  }
}
