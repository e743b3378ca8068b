package com.example.app;

import android.os.MessageQueue.IdleHandler;
import com.jankprobe.TimingIdleHandlerList;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.LongBuffer;
import java.util.Collections;

/**
 * For tests/idle/idle_start_jvm_test.cc: which start the idle wrapper takes for each kind of gap word
 * (TimingIdleHandlerList.Timed#queueIdle, whose common case is one combined test). Each case writes the gap
 * word a poll source would have left (some only after long pauses: a gap 2.5 s old, a later gap sharing the
 * low 32 bits of the previous call's), calls one wrapped handler of its own class on the main thread, and
 * returns the duration the wrapper added to that class's figures with the bounds the System.nanoTime reads
 * around the call put on the true one.
 */
public final class IdleStartScenarios {
  private IdleStartScenarios() {}

  /** The number of cases (three longs each in {@link #onMain}'s result). */
  public static final int CASES = 10;

  private static final long SPAN = 1L << 32;
  // `from` values of call(): the start is the previous wrapped call's end / the wrapper's own clock read.
  private static final long PREVIOUS_END = Long.MIN_VALUE;
  private static final long OWN_CLOCK = Long.MAX_VALUE;

  // One class per case: each gets its own figures holder, so a class's total is its one call's duration.
  static final class Warm extends Trivial {}
  static final class RecentGap extends Trivial {}
  static final class OldGap extends Trivial {}
  static final class PassBefore extends Trivial {}
  static final class LaterGapSameLowHalf extends Trivial {}
  static final class FirstOfPass extends Trivial {}
  static final class SecondOfPass extends Trivial {}
  static final class FlaggedGap extends Trivial {}
  static final class NoGap extends Trivial {}
  static final class NoGapAgain extends Trivial {}
  static final class GapAhead extends Trivial {}

  /** Spins for the next spinNs before it returns (ground truth for the figures' longest call). */
  static final class Spinning implements IdleHandler {
    long spinNs;

    @Override
    public boolean queueIdle() {
      spin(spinNs);
      return true;
    }
  }

  static class Trivial implements IdleHandler {
    @Override
    public boolean queueIdle() { return true; }
  }

  private static Field field(String name) throws ReflectiveOperationException {
    final Field f = TimingIdleHandlerList.class.getDeclaredField(name);
    f.setAccessible(true);
    return f;
  }

  /** The total ns in the figures of handler class c (TimingIdleHandlerList.figures()), -1 if it has none. */
  private static long totalOf(Class<?> c) throws ReflectiveOperationException { return figureOf(c, 2); }

  /** Figure k (0 calls, 1 folded, 2 total ns, 3 longest ns) of handler class c, -1 if it has none. */
  private static long figureOf(Class<?> c, int k) throws ReflectiveOperationException {
    final Method m = TimingIdleHandlerList.class.getDeclaredMethod("figures");
    m.setAccessible(true);
    final Object[] figures = (Object[]) m.invoke(null);
    final String[] classes = (String[]) figures[0];
    final long[] values = (long[]) figures[1];
    for (int i = 0; i < classes.length; i++) {
      if (classes[i].equals(c.getName())) return values[4 * i + k];
    }
    return -1;
  }

  /**
   * Calls h through the wrapper with the gap word `gap` (left in place: the next call of a pass sees it) and,
   * when out is not null, stores {figure, low bound, high bound} at out[3 * i] for a call that started at
   * `from` (or PREVIOUS_END: lastEnd before the call; OWN_CLOCK: between the reads around it).
   */
  private static void call(IdleHandler h, LongBuffer words, long gap, long from, long[] out, int i)
      throws ReflectiveOperationException {
    words.put(2, gap);
    final IdleHandler timed = new TimingIdleHandlerList(Collections.singletonList(h)).get(0);
    final long previousEnd = field("lastEnd").getLong(null);
    final long before = System.nanoTime();
    timed.queueIdle();
    final long after = System.nanoTime();
    if (out == null) return;
    out[3 * i] = totalOf(h.getClass());
    // +-1: a start that is not the gap itself gets bit 0 set (TimingIdleHandlerList.CLEARED_AT_END).
    if (from == OWN_CLOCK) {
      out[3 * i + 1] = 0;
      out[3 * i + 2] = after - before + 1;
    } else {
      final long start = from == PREVIOUS_END ? previousEnd : from;
      // A start ahead of the clock (the event clock's gap may be up to 50 us ahead) counts as 0, not less.
      out[3 * i + 1] = Math.max(0, before - start - 1);
      out[3 * i + 2] = Math.max(0, after - start + 1);
    }
  }

  /** Spins (no sleep: a sleep may return early) until at least ns have passed. */
  private static void spin(long ns) {
    final long until = System.nanoTime() + ns;
    while (System.nanoTime() < until) {
      // nothing: the clock is the only thing this waits for
    }
  }

  /**
   * The cases, on the main thread: {figure, low, high} x CASES, or null when the main thread did not run
   * them in 10 s. The gap word is 0 again after, as the idle-only monitor left it.
   */
  public static long[] onMain() throws InterruptedException {
    final long[] out = new long[3 * CASES];
    final Exception[] failed = {null};
    final boolean ran = TestApp.runOnMain(() -> {
      try {
        final LongBuffer words = (LongBuffer) field("RUNNING_SINCE").get(null);
        call(new Warm(), words, (System.nanoTime() - 1_000_000) & ~1L, 0, null, 0);
        // 0: a clean gap 3 ms old: the pass's first handler starts at it.
        final long g0 = (System.nanoTime() - 3_000_000) & ~1L;
        call(new RecentGap(), words, g0, g0, out, 0);
        // 1: a clean gap 2.5 s old (more than 2^31 ns: no 32-bit shortcut may rebuild it).
        final long g1 = (System.nanoTime() - 2_500_000_000L) & ~1L;
        call(new OldGap(), words, g1, g1, out, 1);
        // 2: a gap 2^32 ns after the previous call's, with the same low 32 bits: a new pass, started at it.
        final long g2 = (System.nanoTime() - SPAN - 5_000_000) & ~1L;
        call(new PassBefore(), words, g2, g2, null, 0);
        call(new LaterGapSameLowHalf(), words, g2 + SPAN, g2 + SPAN, out, 2);
        // 3, 4: two handlers of one pass: the first starts at the gap, the second at the first one's end.
        final long g3 = (System.nanoTime() - 2_000_000) & ~1L;
        call(new FirstOfPass(), words, g3, g3, out, 3);
        spin(2_000_000);
        call(new SecondOfPass(), words, g3, PREVIOUS_END, out, 4);
        // 5: a flagged gap (a look that ran fd callbacks first): the wrapper's own clock.
        call(new FlaggedGap(), words, (System.nanoTime() - 3_000_000) | 1L, OWN_CLOCK, out, 5);
        // 6, 7: no gap (the poll source off), twice with 2 ms between: both on the wrapper's own clock, the
        // second not chained to the first (the word is 0 both times, which is no pass).
        call(new NoGap(), words, 0L, OWN_CLOCK, out, 6);
        spin(2_000_000);
        call(new NoGapAgain(), words, 0L, OWN_CLOCK, out, 7);
        // 8: a clean gap 1 ms ahead of nanoTime (the event clock is within 50 us of it; more here, so that
        // the call surely ends before it): the call lasted 0, not a negative time.
        final long g8 = (System.nanoTime() + 1_000_000) & ~1L;
        call(new GapAhead(), words, g8, g8, out, 8);
        // 9: the longest of two calls of one class (3 ms, then 1 ms; no gap): its figure is the larger of
        // the two durations the total grew by.
        final Spinning spinning = new Spinning();
        spinning.spinNs = 3_000_000;
        call(spinning, words, 0L, OWN_CLOCK, null, 0);
        final long first = totalOf(Spinning.class);
        spinning.spinNs = 1_000_000;
        call(spinning, words, 0L, OWN_CLOCK, null, 0);
        final long longest = Math.max(first, totalOf(Spinning.class) - first);
        out[27] = figureOf(Spinning.class, 3);
        out[28] = longest;
        out[29] = longest;
      } catch (Exception e) {
        failed[0] = e;
      }
    }, 10000);
    if (failed[0] != null) throw new IllegalStateException(failed[0]);
    return ran ? out : null;
  }
}
