package com.jankprobe;

import android.os.MessageQueue.IdleHandler;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Collection;

/**
 * The list jankprobe puts in place of MessageQueue.mIdleHandlers. MessageQueue only ever calls add, remove,
 * size and toArray on it, under its own monitor; every handler in here is a {@link Timed} wrapper, so the
 * queue's next() times each queueIdle() call without knowing it.
 *
 * Unlike a plain swap (Matrix's), the constructor keeps the handlers the app had already registered.
 * remove() accepts either the app's handler (removeIdleHandler) or the wrapper (next() removing a handler
 * whose queueIdle() returned false), so the queue's semantics are unchanged. The native side swaps the list
 * in and out under the queue's monitor; {@link #unwrapped()} gives the plain list to put back.
 */
public final class TimingIdleHandlerList extends ArrayList<IdleHandler> {
  private static final long serialVersionUID = 1L;

  /**
   * Around queueIdle(), in steady state, no native call at all, one clock read and one access to the
   * shared words (the gap word's get) for a handler that starts at its pass's gap, the common case with the
   * poll source on; two more (RUNNING_SINCE's put at the start and its clear) for any other. The call's
   * start (see Timed#queueIdle): with the looper monitor's poll source on, the first handler of an idle
   * pass starts at the gap the poll source published (GAP_START) and the next ones at the previous
   * handler's end; otherwise System.nanoTime (CLOCK_MONOTONIC on HotSpot and on ART, the clock the
   * watchdog's deadlines use). The native watchdog must see the call running, so that a handler that
   * overruns is caught while it runs: a start taken from the gap is published as {@link #lastGap}, a
   * plain static, and every other start in a word the watchdog reads (RUNNING_SINCE). Only when no armed
   * deadline is sure to cover the call ({@link #covered} is 0: after a lag_ms without calls, since the
   * watchdog keeps its deadline armed while calls go on, see lastEnd; or always where the native side
   * needs a real fence) the wrapper calls nativeArm.
   *
   * It takes the end itself too and adds the call to its handler class's figures (calls, total and longest
   * time, kept in the class's figures holder: see {@link Timed}). A call shorter than {@link #foldBelowNs} (min(idle.record_min_us,
   * idle.lag_ms), set by the monitor; 0 until it starts) ends there: no native call, no timeline record of
   * its own, and RUNNING_SINCE cleared unless the start is the pass's gap (below). Any other call goes to
   * nativeEnd, which clears the word, appends the call's timeline record if it took at least
   * record_min_us and, at lag_ms or over, reports it with the stack the watchdog took while it ran (the
   * calls of a class without figures all go there, and are counted there). nativeEnd returns the key under
   * which the native side keeps this handler's interned class name; passing it back next time spares
   * reading the string (0: not known yet; a stale key is detected natively and the name read again).
   *
   * How the watchdog judges what runs (idle/idle_timing.cc, RunningSince): a start taken from the gap
   * word is that word's value (bit 0 clear: GAP_NOT_AN_IDLE_START is not set on a gap a pass may start
   * at); every other start gets bit 0 set (1 ns later; start and record use the same value) and goes into
   * RUNNING_SINCE. An odd word runs until cleared, so its call clears it at the end, folded or not. A gap
   * start runs while the gap word still holds lastGap and its end did not go native: the main thread runs
   * no poll inside a handler, and the look that follows the pass starts a new gap (or the thread waits in
   * epoll: 0). So a call that starts at its gap writes no shared word at all, and a folded one has nothing
   * to clear.
   *
   * How the words are read and written. The gap word's read, once per call, is the one access on the
   * common path, and it lives in a class of its own, {@link GapWord}, because the best read differs by VM
   * and the worse one must not reach an app's bytecode. The GapWord an app gets (java/src, jankprobe.jar)
   * reads the direct buffer's view, correct everywhere (ART compiles its absolute get to a Memory.peek
   * intrinsic; VarHandle exists only from Android 13, API 33). The host's HotSpot builds (the demo, the JVM
   * tests: jankprobe-hotspot.jar) take java/hotspot's GapWord instead, sun.misc.Unsafe.getLong at the words'
   * address, which C1's profiling tier (where an app's wrapper stays for its first minute or so) and C2
   * compile to one plain load, where the view's get is two real calls in that tier. sun.misc.Unsafe is
   * supported API on HotSpot but missing from android.jar (javac, R8 and D8 would stop at it) and hidden API
   * on ART (the verifier's resolution of an invoke of it may be logged or denied): a branch here, even one
   * never taken on ART, would put it in this class's bytecode, so no class in java/src names it. GapWord's
   * read() is small enough for C1 to inline (its static finals fold), so the split costs no call. The rare
   * puts (RUNNING_SINCE's, for a start that is not the pass's gap) stay on the buffer with every GapWord:
   * one write path, off the common call, where Unsafe would save little.
   *
   * The store of running_since (for a gap start: the poll source's store of the gap word,
   * native code before MessageQueue.next() reached the handlers) and the read of covered form a Dekker pair
   * with the watchdog's clear of covered and read of running_since and the gap word; the watchdog side runs a membarrier
   * (hook/asymmetric_fence.h), so this side needs only its program order: HotSpot puts a CPU-order barrier
   * around Unsafe accesses off the heap (the buffer's put is one: ScopedMemoryAccess down to Unsafe with a
   * null base), and a volatile read is an acquire no JIT hoists
   * above an earlier store with memory side effects (ART's Memory.poke intrinsics are such; its compiler
   * treats a volatile load as reading and writing all memory). The gap word's read is a plain load with either
   * GapWord (Unsafe.getLong(address) as the view's get): this side reads it before it publishes lastGap, in
   * program order, as before. Where membarrier is not available the
   * native side never sets covered, and nativeArm runs the real fence. The clear at a folded call's end
   * needs no fence: the watchdog only takes a stack for a call it finds running past lag_ms, and such a
   * call never folds (it ends natively, which waits for that capture). At worst, a main thread descheduled
   * between its end clock read and the clear (or the next look) lets the watchdog take one needless
   * stack, which no report uses; reports come only from nativeEnd.
   */
  // Package-private, not private: Timed's queueIdle() uses them, and this code is compiled for Java 8
  // (and desugared so on Android), where a private member reached from a nested class costs a synthetic
  // accessor call each time, which the interpreter and the profiling JIT tier do not remove.
  static native void nativeArm(long startedNs);
  static native int nativeEnd(long startedNs, long endedNs, int nameKey, String handlerClass, boolean keep,
                              boolean counted);
  private static native ByteBuffer nativeWords();
  // For the host's GapWord (java/hotspot) only; declared here, in both jars, so that the native side
  // registers one set of natives whichever GapWord the app holds (the portable one never calls them).
  // The address of the same words (&jni::IdleSharedWords(), static storage: it never moves or goes away).
  static native long nativeWordsAddress();
  // sun.misc.Unsafe.theUnsafe (null if there is none), read through JNI, which checks no access: the same
  // object as reflection's getDeclaredField + setAccessible + get, without the reflection classes those load
  // into the app (field accessors, the Class's reflection data: six classes on JDK 17). Object, not
  // sun.misc.Unsafe, in the signature: this class is in the jar apps get, which names no sun.* type.
  static native Object nativeUnsafe();

  /**
   * Calls shorter than this (ns) are folded into their class's figures. Set by the native monitor (JNI
   * SetStaticLongField, on its control thread) at start and when the remote flag retunes it; volatile, so
   * that a change applies from the next call on. A Java field, not a word of the shared buffer: in C1's
   * profiling tier, where an app's wrapper runs for minutes on HotSpot, each access through a buffer view
   * costs several nanoseconds, a field load next to nothing.
   */
  static volatile long foldBelowNs;

  /**
   * Nonzero while an armed watchdog deadline covers any call that starts now and this side's program order
   * is enough for the Dekker pair (see above); 0 makes the wrapper call nativeArm. Set and cleared by the
   * native side through JNI (SetStaticIntField): by nativeArm on the main thread, by the watchdog thread
   * when the deadline fires (it clears it before it reads RUNNING_SINCE), by the monitor's start and
   * stop. A volatile field rather than a word of the shared buffer for the reason given at foldBelowNs:
   * the wrapper reads it on every call (a getstatic in every tier, where a buffer view's get was a call
   * chain of ~80 instructions in C1's profiling tier).
   */
  static volatile int covered;

  // A typed view of the shared words (hook/jni/jni_refs.h, IdleWords), in native byte order:
  // running_since is long 0 (byte 0), gap_start is long 2 (byte 16). A view's absolute put/get is fewer
  // calls than ByteBuffer's (no unaligned/endian layer): the same once C2 inlines them, fewer
  // instructions and cycles before (C1's profiling tier). There (JDK 17, a tiered JVM: C1InlineStackLimit
  // 5) no view's get inlines: DirectLongBufferU.get is 36 bytecodes, over C1's 35, and the int view's
  // (34) uses too much stack; each calls its ix() out of line, so a read is two calls whichever the view
  // (ByteBuffer.getLong(int) four). An int view for the gap's low half alone saved nothing (session 9).
  // Hence the host's GapWord, which reads the gap word through Unsafe; the view keeps the puts, and the
  // portable GapWord's read.
  static final LongBuffer RUNNING_SINCE;
  static final int RUNNING_SINCE_INDEX = 0;
  static final int GAP_START_INDEX = 2;
  /** Bit 0 of the gap word: this gap cannot be an idle pass's start (jni::kGapNotAnIdleStart). */
  static final long GAP_NOT_AN_IDLE_START = 1L;
  /** Bit 0 of RUNNING_SINCE: the start is not the gap word's value (the call clears the word at its end). */
  static final long CLEARED_AT_END = 1L;
  private static final int WORDS_BYTES = 24;

  /**
   * How queueIdle reads the gap word: GapWord.READ, "Unsafe.getLong(address)" with the host's GapWord on
   * HotSpot, else "direct buffer: <why>" (the tests assert it: a host build that silently fell back to the
   * buffer, or a portable jar that did not, fails them). Read here, in the static initialiser, so that
   * GapWord is initialised with this class (off the main thread's first idle call).
   */
  static final String GAP_READ;

  // The native side registers nativeWords before anything initialises this class (jni_refs.cc,
  // ResolveIdle: the class is loaded without initialising it, the natives registered, then its members
  // looked up). No private fallback: the watchdog reads the native words, so a wrapper writing others
  // would leave it a stale start after every folded call. Without the words the class fails to
  // initialise (an Error, so that it propagates as is) and the idle monitor reports why. The host's
  // GapWord, without Unsafe or the address, takes the buffer path with no error: correct on every VM.
  static {
    final ByteBuffer words = nativeWords();
    if (words == null || words.capacity() < WORDS_BYTES) {
      throw new UnsatisfiedLinkError("jankprobe: no direct buffer over the shared idle words (NewDirectByteBuffer "
          + (words == null ? "returned null" : "too small: " + words.capacity() + " bytes") + ")");
    }
    words.order(ByteOrder.nativeOrder());
    RUNNING_SINCE = words.asLongBuffer();
    GAP_READ = GapWord.READ;  // initialises GapWord, which reads RUNNING_SINCE: assigned above
  }

  /** Classes with figures; past this many, a class's calls all go through nativeEnd, which counts them. */
  static final int MAX_CLASSES = 64;
  // The figures holders (see Timed's figures fields), in the order their classes first came (the status
  // lists them so); slots [0, classCount) used. Guarded by itself. Wrappers are made on any thread that adds
  // a handler (under the queue's lock, which is never taken while holding this one). An array searched by
  // name rather than a map: it is searched only when a wrapper is made and the last-class cache below
  // misses (at most MAX_CLASSES names, compared by identity first), and walking it for the status loads
  // nothing, where a LinkedHashMap's entry set and its iterators were classes loaded into the app for us.
  private static final Timed[] FIGURES = new Timed[MAX_CLASSES];
  private static int classCount;

  // The figures a wrapper was last made for: an app that adds a one-shot handler per event (a new object of
  // the same class each time) finds them here without the lock and the search. A racy read needs no lock:
  // handlerClass is final (a reader sees it set), and a stale or missing entry only sends the caller to the
  // array. Compared by identity: Class.getName() returns the name it cached in the Class (HotSpot, ART), so
  // the same class gives the same String; another String of the same name (another loader's class, or a VM
  // that does not cache) takes the search, which matches by equals.
  static Timed lastFigures;

  /** The figures holder of this handler class (made at its first wrapper), or null past MAX_CLASSES. */
  static Timed figuresOf(String handlerClass) {
    final Timed last = lastFigures;
    if (last != null && last.handlerClass == handlerClass) return last;
    synchronized (FIGURES) {
      Timed f = null;
      for (int i = 0; i < classCount; i++) {
        final Timed c = FIGURES[i];
        if (c.handlerClass == handlerClass || c.handlerClass.equals(handlerClass)) {
          f = c;
          break;
        }
      }
      if (f == null && classCount < MAX_CLASSES) {
        f = new Timed(handlerClass);
        FIGURES[classCount++] = f;
      }
      if (f != null) lastFigures = f;
      return f;
    }
  }

  /**
   * For the monitor's status (native, any thread): {String[] classes, long[] figures}, four longs per
   * class: calls, folded, total ns, longest ns. See Timed's figures fields for what a reader may see.
   */
  static Object[] figures() {
    synchronized (FIGURES) {
      final int n = classCount;
      final String[] classes = new String[n];
      final long[] values = new long[4 * n];
      for (int i = 0; i < n; i++) {
        final Timed f = FIGURES[i];
        classes[i] = f.handlerClass;
        values[4 * i] = f.calls;
        values[4 * i + 1] = f.calls - f.unfolded;  // folded
        values[4 * i + 2] = f.totalNs;
        values[4 * i + 3] = f.maxNs;
      }
      return new Object[] {classes, values};
    }
  }

  // The gap word of the call running now or last (written before its handler runs) and the previous call's
  // end (System.nanoTime): see Timed#queueIdle. Plain statics, written only by the thread that runs the
  // queue's idle handlers (the main looper's, the only queue whose list is ours). The watchdog reads both
  // through JNI (idle/idle_timing.cc; plain loads, a lag period after the stores at the earliest):
  // - lastGap: a call that started at its pass's gap (even) writes no shared word; it runs while the gap
  //   word still holds lastGap (no poll inside an idle handler: the look after the pass starts another
  //   gap) and its end did not go native. One direct-buffer put less per call than writing RUNNING_SINCE:
  //   a putstatic in every tier, where the put is a call chain in C1's profiling tier.
  // - lastEnd: it moved since the watchdog's last look, so calls ran in that lag period: the watchdog keeps
  //   the deadline armed (and covered set) for the next ones, instead of letting the next call arm it.
  static long lastGap;
  static long lastEnd;

  /**
   * One app handler, timed. Equal to its handler, so a plain list still finds it after the swap back.
   *
   * The same class also holds a handler class's figures (calls, total and longest time), shared by all
   * that class's wrappers (an app adds one-shot handlers, a new object of the same class each time: the
   * figures, and folding, carry over): each class gets one holder, a Timed made by figuresOf with no
   * handler (so it keeps no app object, and through it no Class, from being collected; never in a list),
   * kept for the life of the process (a class's figures are cumulative, like the monitor's counters). One
   * class for both roles, not a figures class of its own: each class jankprobe's Java loads is class bytes
   * read from the app's archive, metadata and symbols an app without us would not hold, and the wrapper's
   * accesses to the figures are the same field accesses either way.
   *
   * The figures are written only by the thread that runs the queue's idle handlers (MessageQueue calls
   * queueIdle() on its looper thread), with plain stores; read by {@link #figures()} on any thread, which
   * may see a call counted whose time is not added yet, or figures a call behind (no ordering between the
   * writer's stores), and on a 32-bit VM a long torn in its two halves while it is written (JLS 17.7):
   * status figures, never used for a decision.
   */
  static final class Timed implements IdleHandler {
    final IdleHandler handler;  // null in a figures holder
    final String handlerClass;  // computed once: queueIdle() must stay cheap
    final Timed figures;        // this class's holder; null: more classes than MAX_CLASSES (nativeEnd counts)
    private int nameKey;        // from nativeEnd; only the thread running the queue's idle handlers uses it
    // A holder's figures (unused in a wrapper):
    long calls;
    long unfolded;  // of which went through nativeEnd (the others were folded: no record of their own)
    long totalNs;
    long maxNs;

    Timed(IdleHandler handler) {
      this.handler = handler;
      this.handlerClass = handler.getClass().getName();
      this.figures = figuresOf(handlerClass);
    }

    // A figures holder (figuresOf). Not private: a private constructor called from the outer class would
    // make javac (Java 8 target) add an access constructor and a synthetic class to tag it, one class more.
    Timed(String handlerClass) {
      this.handler = null;
      this.handlerClass = handlerClass;
      this.figures = this;
    }

    /**
     * The call's start, without a clock read where the poll source already took one. MessageQueue.next()
     * runs the idle handlers right after nativePollOnce(0) returned (epoll_wait in libutils.so) and found
     * the queue empty; the poll source stamped that return and published it as the running gap (gap_start,
     * on the process event clock: CLOCK_MONOTONIC within 50 us, so durations are clamped at 0). So:
     * - a gap word seen by the previous call too: the same pass (no poll in between), and this handler
     *   starts where the previous one ended (its end clock read). It is charged next()'s removal of a
     *   handler that returned false (the queue's lock; microseconds unless another thread holds it);
     * - a new gap word after a look that found nothing ready: the pass's first handler; it starts at the
     *   gap's start, so it is charged next()'s few microseconds of bookkeeping before it (the queue's lock,
     *   the handler array), and it never starts later than the handler itself;
     * - 0 (the poll source off, stopping, or never seen this thread return from epoll) or a gap after
     *   fd callbacks or a wait (bit 0, see GAP_NOT_AN_IDLE_START): System.nanoTime, as without the source.
     * Every poll return ends a gap and starts the next one (the source clears the word when it stops), so a
     * gap word is never older than the current next() iteration.
     */
    @Override
    public boolean queueIdle() {
      // One plain load with the host's GapWord on HotSpot (inlined, its choice folded), the view's get with
      // the portable one.
      final long gap = GapWord.read();
      // Written out, not helper methods, on the common path (a gap a pass may start at, not seen by the
      // previous call: its start, no shared word written): C1's profiling tier, where an app's wrapper stays
      // on HotSpot, inlines no method this size (nor any whose stack and locals pass C1InlineStackLimit, 5),
      // and each call there costs ~25 instructions plus its code, counters and profile lines, cold after each
      // epoll wait. For the same reason the common path takes as few branches as it can: each is a profile
      // counter update in that tier. Here one: the sign bit of (a | -a) says a != 0, so the test below is
      // "gap differs from lastGap, and gap's lowest set bit is above bit 0" (even and not 0), in one compare.
      long start = gap;
      final long sameGap = gap ^ lastGap;
      final long aboveBit0 = (gap & -gap) >>> 1;
      if (((sameGap | -sameGap) & (aboveBit0 | -aboveBit0)) >= 0) {
        // Any other start is odd (CLEARED_AT_END) and goes into RUNNING_SINCE, cleared at the call's end. A
        // gap word seen by the previous call too: the same pass (no poll in between), and this handler
        // starts where the previous one ended (its end clock read). 0 (the poll source off, stopping, or
        // never seen this thread return from epoll) or a gap after fd callbacks or a wait (bit 0, see
        // GAP_NOT_AN_IDLE_START): System.nanoTime, as without the source. Inline, not a method of its own:
        // a call costs those paths more than the lines it would keep off the common one.
        start = (gap != 0 && sameGap == 0 ? lastEnd : System.nanoTime()) | CLEARED_AT_END;
        RUNNING_SINCE.put(RUNNING_SINCE_INDEX, start);
      }
      // Published before the handler runs: the watchdog judges a call that started at its gap by this
      // field (read through JNI), so such a call writes no shared word (see lastGap).
      lastGap = gap;
      if (covered == 0) nativeArm(start);
      boolean keep = false;
      try {
        keep = handler.queueIdle();
        return keep;
      } finally {
        final long end = System.nanoTime();
        lastEnd = end;
        // A gap start may be up to 50 us ahead of nanoTime: clamped at 0 by the sign mask, no branch.
        long dur = end - start;
        dur &= ~(dur >> 63);
        final Timed f = figures;
        if (f != null) {
          f.calls++;
          f.totalNs += dur;
          // The longest, without a branch (durations are far below 2^62, so the difference cannot overflow).
          final long longer = dur - f.maxNs;
          f.maxNs += longer & ~(longer >> 63);
          if (dur < foldBelowNs) {
            // A start at the pass's gap (even) wrote no word: nothing to clear.
            if ((start & CLEARED_AT_END) != 0) RUNNING_SINCE.put(RUNNING_SINCE_INDEX, 0L);
          } else {
            f.unfolded++;  // the rare path counts, not the folded one: one store less per folded call
            nameKey = nativeEnd(start, end, nameKey, handlerClass, keep, true);
          }
        } else {
          nameKey = nativeEnd(start, end, nameKey, handlerClass, keep, false);
        }
      }
    }

    @Override
    public boolean equals(Object o) {
      if (o instanceof Timed) return ((Timed) o).handler == handler;
      return o == handler;
    }

    @Override
    public int hashCode() { return System.identityHashCode(handler); }

    @Override
    public String toString() { return "Timed(" + handler + ")"; }
  }

  /** Takes over the handlers already registered (the caller holds the queue's monitor). */
  public TimingIdleHandlerList(Collection<? extends IdleHandler> existing) {
    super(Math.max(4, existing == null ? 0 : existing.size()));
    if (existing != null) {
      for (IdleHandler h : existing) add(h);
    }
  }

  private static IdleHandler wrap(IdleHandler h) {
    return (h == null || h instanceof Timed) ? h : new Timed(h);
  }

  private static IdleHandler unwrap(IdleHandler h) {
    return h instanceof Timed ? ((Timed) h).handler : h;
  }

  @Override
  public boolean add(IdleHandler h) { return super.add(wrap(h)); }

  @Override
  public void add(int index, IdleHandler h) { super.add(index, wrap(h)); }

  @Override
  public IdleHandler set(int index, IdleHandler h) { return super.set(index, wrap(h)); }

  @Override
  public boolean addAll(Collection<? extends IdleHandler> c) {
    boolean changed = false;
    for (IdleHandler h : c) changed |= add(h);
    return changed;
  }

  /** Removes the entry for this handler, given either as the app's object or as its wrapper. */
  @Override
  public boolean remove(Object o) {
    for (int i = 0; i < size(); i++) {
      IdleHandler entry = get(i);
      if (entry == o || unwrap(entry) == o || (o instanceof Timed && ((Timed) o).handler == unwrap(entry))) {
        super.remove(i);
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean contains(Object o) {
    for (int i = 0; i < size(); i++) {
      IdleHandler entry = get(i);
      if (entry == o || unwrap(entry) == o) return true;
    }
    return false;
  }

  /** The app's handlers, in order, in a plain list (what goes back into the queue when switching off). */
  public ArrayList<IdleHandler> unwrapped() {
    ArrayList<IdleHandler> plain = new ArrayList<IdleHandler>(Math.max(4, size()));
    for (int i = 0; i < size(); i++) plain.add(unwrap(get(i)));
    return plain;
  }
}
