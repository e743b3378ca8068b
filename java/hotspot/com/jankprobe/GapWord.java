package com.jankprobe;

/**
 * The idle wrapper's read of the gap word (TimingIdleHandlerList's shared words, long 2), once per
 * queueIdle() call: on HotSpot with sun.misc.Unsafe.getLong(address), which C1's profiling tier (where an
 * app's wrapper runs for its first minute or so) and C2 compile to one plain load (two @ForceInline levels
 * down to the Unsafe intrinsic), where the direct buffer's get is two real calls in C1's tier 3
 * (DirectLongBufferU.get is over C1's inline size, its ix over the tiered JVM's C1InlineStackLimit).
 * sun.misc.Unsafe is supported API on HotSpot (module jdk.unsupported, exported).
 *
 * Two sources define this class, and they must keep the same non-private members (READ and read(), with
 * these types; tests/jvm/portable_jar.cmake compares them): this one, for the host's HotSpot builds only
 * (jankprobe-hotspot.jar: the demo, the JVM tests, the benchmarks), and java/src/com/jankprobe/GapWord.java,
 * the portable one that apps get (jankprobe.jar), which reads the direct buffer's view and names no sun.*
 * class (android.jar has none, R8/D8 would report it missing, and on ART it is hidden API).
 *
 * Without Unsafe or the words' address (another VM given this jar, a denial), read() takes the view, with
 * the reason in READ: that path is correct on every VM. The choice is made once, here, into static finals:
 * both HotSpot compilers fold a static final of an initialised class, so read()'s test of BY_ADDRESS is no
 * branch in compiled code (C1 canonicalises the if to a goto: no profiled branch either).
 */
final class GapWord {
  private GapWord() {}

  /** How read() reads the word (TimingIdleHandlerList.GAP_READ, which the tests assert). */
  static final String READ;
  /** READ's value on the Unsafe path. */
  private static final String READ_UNSAFE = "Unsafe.getLong(address)";

  // BY_ADDRESS: through UNSAFE at ADDRESS; false: through TimingIdleHandlerList's view (UNSAFE null,
  // ADDRESS 0). A boolean of its own, not a null test of UNSAFE: a static final primitive is what both
  // HotSpot compilers fold for sure.
  private static final boolean BY_ADDRESS;
  private static final sun.misc.Unsafe UNSAFE;
  private static final long ADDRESS;

  // Initialised from TimingIdleHandlerList's static initialiser (its GAP_READ), after its words are in place
  // and on the thread that initialises it, not at the first queueIdle() on the main thread.
  static {
    String why = null;
    sun.misc.Unsafe unsafe = null;
    try {
      // theUnsafe through JNI (TimingIdleHandlerList.nativeUnsafe, typed Object so that the class an app gets
      // names no sun.* type): no reflection classes loaded into the process for it.
      final Object u = TimingIdleHandlerList.nativeUnsafe();
      if (u instanceof sun.misc.Unsafe) {
        unsafe = (sun.misc.Unsafe) u;
      } else {
        why = "direct buffer: no sun.misc.Unsafe.theUnsafe from the native side";
      }
    } catch (Throwable t) {  // LinkageError (no sun.misc.Unsafe), SecurityException, ...
      why = "direct buffer: sun.misc.Unsafe: " + t;
    }
    final long words = unsafe == null ? 0L : TimingIdleHandlerList.nativeWordsAddress();
    if (unsafe != null && words == 0L) why = "direct buffer: the native side gave no address";
    BY_ADDRESS = unsafe != null && words != 0L;
    UNSAFE = BY_ADDRESS ? unsafe : null;
    ADDRESS = BY_ADDRESS ? words + 8L * TimingIdleHandlerList.GAP_START_INDEX : 0L;
    READ = BY_ADDRESS ? READ_UNSAFE : why;
  }

  /** The gap word; a plain load on both paths (no ordering beyond program order, see TimingIdleHandlerList). */
  static long read() {
    return BY_ADDRESS ? UNSAFE.getLong(ADDRESS)
                      : TimingIdleHandlerList.RUNNING_SINCE.get(TimingIdleHandlerList.GAP_START_INDEX);
  }
}
