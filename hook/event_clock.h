// The clock the hot paths stamp events with (the input proxies, the looper's poll source): CLOCK_MONOTONIC
// nanoseconds, read from the CPU's counter instead of through clock_gettime where that counter can be
// validated. One process-wide instance (ProcessEventClock), calibrated once on the control path by the
// first monitor start that needs it (CalibrateProcessEventClock), never on a hot path.
//
// Why: the input proxies take two timestamps per event and the vDSO's clock_gettime(CLOCK_MONOTONIC) cost
// ~20 ns each here (BENCHMARKS.md, "Input monitor") — a third of the monitor's whole budget; the poll
// source's one read per main-thread gap was ~28 of its ~45 ns. The vDSO
// itself reads the same counter (x86_64: TSC when the clocksource is tsc; arm64: CNTVCT_EL0, which is
// what bionic's vDSO reads) and scales it; we do the scaling ourselves with one multiply and shift,
// skipping its seqlock, its ordering fence and the call.
//
// Correctness contract: every value NowNs() returns is within kBoundNs (50 us) of clock_gettime at
// that moment. The packets' eventTime, the lag/ANR deadlines and the watchdog all live on
// CLOCK_MONOTONIC, and 50 us is far below the millisecond resolution anything downstream reports. How:
// - calibration (Init, control path): counter/clock pairs over ~2 ms; the counter must move forward,
//   at a sane rate (x86_64: 100 MHz..20 GHz; arm64: within 1% of CNTFRQ_EL0), and on x86_64 the kernel
//   must itself trust the TSC (clocksource "tsc", or when sysfs is unreadable, constant_tsc + nonstop_tsc
//   in /proc/cpuinfo); otherwise NowNs() is clock_gettime and why() says why;
// - re-anchoring, lazily on the hot path: a value is only extrapolated less than kReanchorNs (50 ms) past
//   its anchor; the first read after that takes a fresh (counter, clock_gettime) pair, re-measures the
//   rate over the interval (so NTP's frequency correction is followed) and becomes the new anchor. The
//   kernel slews CLOCK_MONOTONIC by at most 500 ppm, so extrapolating 50 ms with the previous interval's
//   rate is off by at most 25 us, half the bound. While readers use the clock the watchdog takes that
//   re-anchor before the anchor runs out (RefreshBeforeSleep), waking for it only when none of its own
//   wakes falls near the anchor's end; nobody wakes for a clock nobody reads;
// - checking, at every re-anchor: the old anchor's extrapolation is compared with clock_gettime; an error
//   above the bound (e.g. TSCs that are not in step across CPUs) switches the clock to clock_gettime for
//   good, and why() says by how much it was off. A system suspend shorter than the interval, on a counter
//   that keeps running in suspend (CLOCK_MONOTONIC stops), looks the same and falls back too: the
//   conservative side. Pairs are taken only when the counter reads around clock_gettime are < 2 us apart;
// - anything unusual on the hot path (a re-anchor in progress on another thread, a counter behind the
//   anchor after a CPU migration or resume, a long idle gap) returns clock_gettime itself, which is
//   always right.
// arm32 and i686 (and anything else) always use clock_gettime: no counter we can validate there.
//
// Thread safety: NowNs() from any thread, lock-free, never allocates or blocks; the anchor is a seqlock
// whose writer is the watchdog's refresh or whichever reader found it stale (one CAS every ~50 ms).
// Init/why/stats: control path.
#ifndef JANKPROBE_HOOK_EVENT_CLOCK_H_
#define JANKPROBE_HOOK_EVENT_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "hook/clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define JP_EVENT_CLOCK_HAS_COUNTER 1
#elif defined(__aarch64__)
#define JP_EVENT_CLOCK_HAS_COUNTER 1
#else
#define JP_EVENT_CLOCK_HAS_COUNTER 0
#endif

// A process-wide object that must cost nothing at load: no static constructor, no write when the library
// is loaded (the compiler rejects a dynamic initialiser). C++20's constinit, as GCC and clang spell it in C++17.
#ifndef JP_CONSTINIT
#if defined(__clang__)
#define JP_CONSTINIT [[clang::require_constant_initialization]]
#elif defined(__GNUC__)
#define JP_CONSTINIT __constinit
#else
#define JP_CONSTINIT
#endif
#endif

namespace jp::hook {

// Aligned to a line: NowNs()'s words (seq_ to limit_ticks_, 40 bytes) and a re-anchor's are then one line,
// the only one a read touches; the process clock is read after every wait with cold caches, where each
// line is a miss.
class alignas(64) EventClock {
 public:
  static constexpr uint64_t kBoundNs = 50000;          // |NowNs() - clock_gettime| never above this
  static constexpr uint64_t kReanchorNs = 50000000;    // extrapolate at most this far past an anchor

  struct Options {
    uint64_t reanchor_ns = kReanchorNs;
    // Test hooks: a reason to fall back to clock_gettime as if validation had failed, and a rate error
    // (parts per million) put into the initial calibration, for the re-anchor check to catch.
    const char* force_fallback = nullptr;
    int64_t skew_ppm = 0;
  };

  // Control path: calibrates and validates. True when NowNs() reads the counter; false (and why())
  // when it is clock_gettime. Never call it while another thread may be inside NowNs().
  bool Init(const Options& options);
  // With the options a test set (SetOptionsForTest), else the defaults.
  bool Init();
  // Test hook: the options every later Init() uses (nullptr: the defaults), and the process clock is
  // calibrated again with them at the next monitor start. The pointee must outlive them. Only while no
  // monitor runs.
  static void SetOptionsForTest(const Options* options) noexcept;

  // Constant-initialised (no static constructor, nothing written at load): the process clock is a global.
  constexpr EventClock() = default;

  // Hot path: CLOCK_MONOTONIC ns, within kBoundNs of clock_gettime.
  uint64_t NowNs() noexcept {
#if JP_EVENT_CLOCK_HAS_COUNTER
    // No separate "counter in use" test: limit_ticks_ is 0 whenever the counter is not (before Init, after
    // a fall-back), so no d is below it and the read goes to Slow, which returns clock_gettime.
    const uint32_t s = seq_.load(std::memory_order_acquire);
    const uint64_t c = ReadCounter();
    const uint64_t base_c = base_counter_.load(std::memory_order_relaxed);
    const uint64_t base_ns = base_ns_.load(std::memory_order_relaxed);
    const uint64_t mult = mult_.load(std::memory_order_relaxed);
    const uint64_t limit = limit_ticks_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    // A counter behind the anchor wraps to a huge d and takes the slow path too.
    const uint64_t d = c - base_c;
    if (d < limit && seq_.load(std::memory_order_relaxed) == s && (s & 1) == 0) {
      return base_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(d) * mult) >> kShift);
    }
    return Slow();
#else
    return MonotonicNs();
#endif
  }

  // For the watchdog's loop, once per wake, before it sleeps until next_wake_ns (CLOCK_MONOTONIC; UINT64_MAX:
  // no timeout) at now_ns. Returns when the thread should wake instead (<= next_wake_ns): the clock keeps an
  // anchor fresh for its readers while they use it, so that no hot-path reader meets a used-up one.
  // - The anchor outlives the sleep: nothing (returns next_wake_ns).
  // - It runs out before that wake and is in use (a reader other than this refresh copied an anchor or made
  //   one within the last two spans: used_, consumed here into last_use_ns_): re-anchored now when it is
  //   within span / 2 of its end, else the sleep is cut to span / 10 before its end, where the next pass
  //   re-anchors it. A wake is only added when none of the thread's own falls in the window.
  // - It runs out before the wake and nobody used the clock for two spans: left to run out (an idle app costs
  //   at most two wakes after its last read; the first reader after the end re-anchors, which marks the
  //   clock in use again). By time, not by anchor: a reader's copy lasts to its anchor's end, so it may skip
  //   an anchor this refresh replaced early.
  // Why: the re-anchor is due once per kReanchorNs while anyone reads, and before this rule the first reader
  // after a used-up anchor took it whenever the watchdog slept past the anchor's end (its 80 ms checks, the
  // span is 50 ms): the demo's main thread took 3.2-3.9 a second (uprobe on Slow), ~300 ns in situ each
  // (the CAS on a line another core wrote, a cold clock_gettime). The session-9 rule (re-anchor past half
  // the span when it runs out before the next wake) could not cover a sleep longer than the span.
  // Inline: no function of its own outside the ordered text (lib/startup_order.ld). One caller thread.
  uint64_t RefreshBeforeSleep(uint64_t now_ns, uint64_t next_wake_ns) noexcept {
#if JP_EVENT_CLOCK_HAS_COUNTER
    const uint64_t limit = limit_ticks_.load(std::memory_order_relaxed);
    if (limit == 0) return next_wake_ns;
    if (used_.load(std::memory_order_relaxed) != 0) {  // a reader's mark: consumed, so that use must recur
      last_use_ns_.store(now_ns, std::memory_order_relaxed);
      used_.store(0, std::memory_order_relaxed);
    }
    const uint64_t until_wake = next_wake_ns > now_ns ? next_wake_ns - now_ns : 0;
    const uint64_t left = LeftNs(limit);
    if (left > until_wake) return next_wake_ns;
    const uint64_t span = reanchor_ns_;
    const uint64_t last_use = last_use_ns_.load(std::memory_order_relaxed);
    if (last_use == 0 || now_ns >= last_use + 2 * span) return next_wake_ns;
    if (left > span / kRefreshWindowDiv) return now_ns + left - span / kWakeLeadDiv;
    const uint32_t before = reanchors_.load(std::memory_order_relaxed);
    Slow();
    const uint64_t new_limit = limit_ticks_.load(std::memory_order_relaxed);
    if (new_limit == 0) return next_wake_ns;  // fell back: clock_gettime from now on, nothing to keep
    if (reanchors_.load(std::memory_order_relaxed) == before) {
      // Refused (an interrupted pair, or another thread re-anchoring): look again soon, before the end.
      const uint64_t retry = now_ns + span / kWakeLeadDiv / 4;
      return retry < next_wake_ns ? retry : next_wake_ns;
    }
    // Slow marked the anchor as a reader's: it is this thread's. (A reader's mark in between is lost: it
    // marks again at its next copy, and the last use is at most two spans old meanwhile.)
    used_.store(0, std::memory_order_relaxed);
    refreshes_.store(refreshes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    const uint64_t fresh_end = now_ns + span - span / kWakeLeadDiv;
    return fresh_end < next_wake_ns ? fresh_end : next_wake_ns;
#else
    (void)now_ns;
    return next_wake_ns;
#endif
  }

  // A copy of the anchor kept by one thread for itself (NowNsFrom), where that thread keeps the words it
  // touches anyway: the looper's main thread reads the clock at every wake from epoll, with cold caches,
  // and the process clock's line was a miss of its own there (it is written by every re-anchor, read by
  // the input proxies too). Plain words: one thread reads and writes its copy; another may reset it
  // (limit = 0) only while that thread is known to be out of its reads (the poll source: its gate closed
  // and drained). Constant-initialised; limit 0: no anchor copied (the next read copies one).
  struct Anchor {
    uint64_t counter = 0;
    uint64_t ns = 0;
    uint64_t mult = 0;
    uint64_t limit = 0;  // ticks past `counter` this copy may be extrapolated (the anchor's own limit)
  };

  // Hot path for the thread that owns *copy: the value NowNs() gives from the same anchor, so within
  // kBoundNs of clock_gettime on the same terms (an anchor is only ever extrapolated less than its span,
  // whichever thread does it: the span's 500 ppm slew bound holds for a copy as for the original). Once the
  // copy is used up (or empty, or the counter is behind it after a migration or resume) the process clock
  // is read (NowNs: it may re-anchor, or be clock_gettime) and its anchor copied (CopyAnchor: about once
  // per kReanchorNs while the thread works, once per wake after a wait longer than that; inline, so that
  // it adds no function outside the ordered text, lib/startup_order.ld: a cold branch of its callers).
  // One difference from NowNs(): a fall-back to clock_gettime (an anchor found off by more than the bound
  // at a re-anchor) reaches a copy when it is used up, at most kReanchorNs later, not at once; NowNs()
  // readers had used the same bad anchor until that re-anchor checked it, so the copy extends their
  // exposure by at most one span. Reading a copy never writes the process clock's line.
  uint64_t NowNsFrom(Anchor* copy) noexcept {
#if JP_EVENT_CLOCK_HAS_COUNTER
    uint64_t now;
    if (ReadCopy(*copy, &now)) return now;
    return CopyAnchor(NowNs(), copy);  // NowNs first: it re-anchors if the process anchor is used up
#else
    (void)copy;
    return MonotonicNs();
#endif
  }
  // NowNsFrom's usual path alone: true with *now while the copy holds (the counter less than its limit past
  // the copy's), false with nothing read but the counter once it does not (or without a counter: arm32,
  // i686). For a caller that wants the refill (NowNsFrom) as a rare exit of its own (the input proxies:
  // InputTracker::EventNowNs), so that the refill's code and the clock's address it keeps across Slow's
  // call stay off its usual path. Static: the copy and the counter are all it reads.
  __attribute__((always_inline)) static bool ReadCopy(const Anchor& copy, uint64_t* now) noexcept {
#if JP_EVENT_CLOCK_HAS_COUNTER
    const uint64_t d = ReadCounter() - copy.counter;
    if (d >= copy.limit) return false;
    *now = copy.ns + static_cast<uint64_t>((static_cast<unsigned __int128>(d) * copy.mult) >> kShift);
    return true;
#else
    (void)copy;
    (void)now;
    return false;
#endif
  }

  // "tsc", "cntvct" or "clock_gettime".
  const char* source() const noexcept;
  // Why the clock is clock_gettime ("" while it reads the counter). Control path.
  std::string why() const;

  struct Stats {
    uint64_t reanchors = 0;
    uint64_t refreshes = 0;      // of those, the watchdog's (RefreshBeforeSleep): the rest met a used-up anchor
    uint64_t checked = 0;        // re-anchors that compared the old extrapolation with clock_gettime
    uint64_t max_error_ns = 0;   // the largest |extrapolated - clock_gettime| those saw
    double counter_mhz = 0;      // the counter rate last measured
  };
  Stats stats() const noexcept;
  // For the status: {"source":...,"why":...,"bound_ns":...,"reanchors":...,"max_error_ns":...}
  std::string StatusJson() const;

 private:
  static constexpr int kShift = 32;  // mult = ns per tick << kShift
  // RefreshBeforeSleep: a wake within span / 2 (25 ms) of the anchor's end re-anchors when its sleep would
  // outlast the anchor; a cut sleep ends span / 10 (5 ms) before the end, room for the wake's own lateness
  // on a busy host. Why half: the demo's watchdog sleeps 80 ms (its checks) several times a second; with a
  // window of span / 5 more of those needed a cut (jp-watchdog's voluntary switches 32 -> 49 a second, vs
  // 32 -> 40-42 at span / 2; at 3/4 of the span no fewer, with more re-anchors; BENCHMARKS.md, clock10).
  static constexpr uint64_t kRefreshWindowDiv = 2;
  static constexpr uint64_t kWakeLeadDiv = 10;

  enum class Fallback : uint32_t { kNone, kNotInitialised, kForced, kNoCounter, kNotTrusted, kCalibration, kError };

  struct Sample {
    uint64_t counter;
    uint64_t ns;
  };

#if JP_EVENT_CLOCK_HAS_COUNTER
  static uint64_t ReadCounter() noexcept {
#if defined(__x86_64__)
    // No lfence/rdtscp: the read may move a few instructions, far below the bound, and the fence would
    // cost what we are saving.
    return __rdtsc();
#else
    // The isb keeps the read from being hoisted above earlier instructions, as the vDSO does.
    uint64_t v;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#endif
  }
#endif
  // A (counter, clock_gettime) pair taken close together; false if the thread was interrupted between.
  static bool TakeSample(Sample* out) noexcept;
  __attribute__((noinline)) uint64_t Slow() noexcept;
#if JP_EVENT_CLOCK_HAS_COUNTER
  // Nanoseconds until the current anchor is used up (0 when it is, or the counter is behind it), given its
  // limit_ticks_. No seqlock: it only decides whether to re-anchor or when to wake, Slow gets it right.
  uint64_t LeftNs(uint64_t limit) const noexcept {
    const uint64_t age = ReadCounter() - base_counter_.load(std::memory_order_relaxed);
    if (age >= limit) return 0;
    return static_cast<uint64_t>((static_cast<unsigned __int128>(limit - age) *
                                  mult_.load(std::memory_order_relaxed)) >> kShift);
  }
  // NowNsFrom's refill, after its NowNs() read `now`: the anchor that read used or made (or a newer one),
  // copied whole (a seqlock read) or not at all (a re-anchor in progress on another thread: limit 0, the
  // next read tries again). Returns now.
  uint64_t CopyAnchor(uint64_t now, Anchor* copy) noexcept {
    const uint32_t s = seq_.load(std::memory_order_acquire);
    copy->counter = base_counter_.load(std::memory_order_relaxed);
    copy->ns = base_ns_.load(std::memory_order_relaxed);
    copy->mult = mult_.load(std::memory_order_relaxed);
    const uint64_t limit = limit_ticks_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    // limit_ticks_ is 0 while the counter is not in use: such a copy holds nothing either.
    copy->limit = (s & 1) == 0 && seq_.load(std::memory_order_relaxed) == s ? limit : 0;
    // The clock is in use (RefreshBeforeSleep keeps it fresh): a store only when the watchdog consumed the
    // last mark, in the line just read.
    if (used_.load(std::memory_order_relaxed) == 0) used_.store(1, std::memory_order_relaxed);
    return now;
  }
#endif
  void FallBack(Fallback why, uint64_t value) noexcept;

  std::atomic<bool> counter_{false};
  // 1 once a reader copied an anchor (CopyAnchor) or made one (Slow) since the watchdog's refresh last
  // looked (RefreshBeforeSleep consumes it). In the padding before seq_: the first line.
  std::atomic<uint8_t> used_{0};
  // Seqlock over the anchor: odd while a re-anchor writes it.
  std::atomic<uint32_t> seq_{0};
  std::atomic<uint64_t> base_counter_{0};
  std::atomic<uint64_t> base_ns_{0};
  std::atomic<uint64_t> mult_{0};
  // Ticks an anchor may be extrapolated; 0 while the counter is not in use (NowNs relies on it: see there).
  std::atomic<uint64_t> limit_ticks_{0};
  // The rest of the first line: what every re-anchor (Slow, 20 times a second while the app is busy, and
  // at the first read after a long wait) reads or counts besides the words above, so it touches no
  // second line in the common case.
  uint64_t max_sample_ticks_ = 0;  // widest counter bracket around a clock_gettime we accept
  // Written only by the re-anchoring thread (the one whose CAS made seq_ odd) and by Init: plain loads and
  // stores, no locked add (two locked instructions per re-anchor were half of Slow's samples in situ).
  // 32 bits each, so that the largest error (read at every checked re-anchor) fits this line too: at 20
  // re-anchors a second they wrap after ~6 years.
  std::atomic<uint32_t> checked_{0}, reanchors_{0};
  std::atomic<uint64_t> max_error_ns_{0};
  // (The words above are NowNs()'s and the re-anchor's; the ones below the control path's and the rare.)

  uint64_t reanchor_ns_ = kReanchorNs;
  // RefreshBeforeSleep's own (one caller thread): when it last found a reader's mark (0: never), and its
  // re-anchors (32 bits, as reanchors_, so that it packs with fallback_: the clock stays 256 bytes).
  std::atomic<uint64_t> last_use_ns_{0};
  std::atomic<uint32_t> fallback_{static_cast<uint32_t>(Fallback::kNotInitialised)};
  std::atomic<uint32_t> refreshes_{0};
  std::atomic<uint64_t> fallback_value_{0};
  // Detail of an Init failure (control path). A fixed buffer, not a std::string, so that the clock stays
  // constant-initialised and trivially destructible.
  char note_[160] = {};
};

namespace internal {
extern EventClock g_process_event_clock;
}  // namespace internal

// The one clock of the process: input proxies and the looper's poll source read it, so both monitors'
// records are on the same (calibrated once) base. NowNs() before calibration is clock_gettime.
inline EventClock& ProcessEventClock() noexcept { return internal::g_process_event_clock; }

// Control path (a monitor's start, before its hot path can run): calibrates the process clock the first
// time, or again after SetOptionsForTest; otherwise returns at once. True when it reads the counter.
bool CalibrateProcessEventClock();

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_EVENT_CLOCK_H_
