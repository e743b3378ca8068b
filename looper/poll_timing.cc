// The poll source: message timing from the main thread's waits in the Looper, with no Java work per
// message. MessageQueue.next() calls nativePollOnce at the top of every loop iteration (timeout 0 at the
// start of every next()), which waits in epoll_wait inside libutils.so (android::Looper::pollInner); native
// fd callbacks (input events) run after epoll_wait returns. So on the main thread, the return from
// epoll_wait is "starts working" and the next call into it is "done": each gap between them is one message
// dispatch, one idle-handler pass, or one round of fd callbacks.
//
// Main thread, per gap (the proxies below): a thread-pointer compare first (other loopers wait in the same
// library), one read of the process event clock at each edge (hook/event_clock.h: the CPU counter scaled
// to CLOCK_MONOTONIC, within 50 us of it; the input monitor stamps with the same clock; the main thread
// scales with its own copy of the clock's anchor, kept beside its other per-gap words), the running gap
// published in one atomic (its start; the idle wrapper reads the same word, jni::IdleWords::gap_start),
// and the finished gap pushed into a single-producer ring (start and wall). No JNI, no allocation, no
// lock, no locked instruction, no syscall; counters, lag checks and records are the watchdog's (see "main
// thread, per gap" below). The watchdog drains the ring (every
// check period, 200 ms; before a report or export; when status is read): it appends the gaps' records to
// the timeline, adds each gap to the history window with the samples it took while the gap ran, and
// queues the lagging ones for a report.
//
// Why the record is appended by the drain and not by the main thread: the timeline is shared by every
// thread, so its append takes a locked instruction and ~70 instructions around it, the biggest part of
// a gap's cost at ~400 gaps/s. What a record appended up to 200 ms late changes: a report or an export
// drains the ring itself before it reads the timeline (the report sink's in-flight provider, see
// InFlight in dispatch_timing.cc), so a report names a gap that ended a moment ago; a process killed
// outright loses at most the gaps of its last check period from the timeline file (an ANR kill comes
// seconds into one stuck gap, after the earlier ones were drained). A full ring (the watchdog starved
// for kPollRing gaps) makes the main thread append the gap's record itself: no record is ever lost to it.
// The drain merges back-to-back gaps shorter than looper.record_min_us into runs (GapRecorder below): a
// run that kept the thread busy for record_min_us in all gets one `looper.run` record, a shorter one only
// counters. Most gaps are a few microseconds and most runs end at the next wait, a fraction of a
// millisecond later: one record each filled the timeline ring (and a trace) with noise.

// Sampling deadline: armed lazily, not per gap. Arming one per message (as the printer source does) wakes
// the watchdog with a futex whenever the new deadline is earlier than its planned wake, which on a busy
// main thread is most messages. Here one "check" deadline is outstanding while the main thread works (a
// chain the watchdog keeps going): the first gap with none outstanding arms it at start + sample_after_ms;
// when it fires it looks at the gap running then: old enough -> a stack-capturing sample deadline for
// that gap (which re-arms itself every sample_interval_ms while the gap lasts); younger -> the check moves
// to its start + sample_after_ms; none (the thread waits) but gaps ended since the chain's last look ->
// the check moves to now + sample_after_ms (a gap that starts meanwhile is looked at by its start +
// sample_after_ms, then gets its own check there); none and no gap since the last look (a whole check
// period quiet) -> the chain ends and the next gap starts one. Why the watchdog keeps it going: when the
// chain ended at the first check that found the thread waiting, which in an app that works in short
// bursts between blocking waits (the demo app: ~120 waits a second) is nearly every check, the first gap
// after the next wait armed it again: Watchdog::Arm on the main thread about once per check period (its
// deadline table's lines cold after the wait, a futex wake of the sleeping watchdog). Now a busy main
// thread arms nothing, and the watchdog costs the same as before, at most one wake per sample_after_ms
// (12.5 a second at the default 80 ms); an idle app costs it one or two wakes after its last gap (the
// check that sees it, the quiet one), then none. A race where both sides miss each other at the chain's end
// (no fence on the main thread) is caught by the periodic check within kPrinterCheckMs. The main thread's
// CPU clock is read once at the end of a gap that ran past sample_after_ms only; the watchdog reads it
// (from its tid) at the first sample, so lagging gaps carry "CPU since the first sample".
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "hook/asymmetric_fence.h"
#include "hook/clock.h"
#include "hook/event_clock.h"
#include "hook/in_flight_gate.h"
#include "hook/jni/java_stack_release.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "jankprobe/plt.h"
#include "looper/dispatch_timing.h"
#include "looper/looper_monitor.h"
#include "looper/timing_state.h"
#include "plt/prev_cache.h"
#include "plt/raw_wait.h"

#if defined(__GLIBC__) && !defined(__BIONIC__)
#include <gnu/lib-names.h>  // LIBC_SO: the host's libc soname (libc.so.6)
#endif

namespace jp::looper {
namespace internal {
void DrainPollGapsLocked();  // g.mu held

// The ring's size (timing_state.h) against the watchdog's drain period.
static_assert(kPollRing * 1000 / kPrinterCheckMs >= 2000, "the poll ring holds one drain period at 2000 gaps/s");

namespace {


constexpr int kHookCount = 2;
const char* const kSymbols[kHookCount] = {"epoll_wait", "epoll_pwait"};
void* g_prev[kHookCount];
jp_plt_hook* g_hook[kHookCount];

std::atomic<uintptr_t> g_main_thread{0};  // pthread_self() of the looper's thread; 0 = not known
std::atomic<uint32_t> g_resolve_tid{0};     // while the pthread is not known: the main thread's kernel tid
// Resolve mode only: whether this thread was found to be another one (one gettid per thread, ever).
thread_local bool t_not_main = false;

// Everything the main thread touches per gap, packed: it wakes from epoll hundreds of times a second with
// cold caches, and every distinct line its first instructions touch is a miss (in situ, perf annotate of
// MainSlowAfter, which then started the gap after a wait: the misses on the gate's depth, on the flag it pointed to and
// on the fence were nearly all its cost; with the per-gap words in the next line, that line missed again;
// the gap word shared with the idle wrapper and the event clock's anchor were a line each more). So the
// data a wake reads is one 128-byte pair of lines, jni::g_main_gap (hook/jni/jni_refs.h, MainGapBlock;
// in hook/ because the idle monitor needs its words without this file):
// - the gate's line (hook::OwnerOnlyGate: the owner's side of an InFlightGate alone): its depth, its
//   fence, its `enabled` flag (PollActive) and, as its owner words, the idle words: the one gap word
//   (PollRunning(): this file's gap start, the watchdog's and the idle wrapper's), the armed flag
//   (Armed()), the idle call's start;
// - the line after it (the pair's other half): the words the proxies and a gap's end read (the main
//   thread's pointer, the ring's room and head, the slow threshold) and the main thread's copy of the
//   event clock's anchor (MainGapClockNs: the process clock's own line is read about once per 50 ms).
// The previous-target caches are in lines of their own (g_prev_cache; their first entries are what the
// proxies read; libc's own epoll_wait, which the blocking wait compares its target with, in front of the
// first, g_wait_targets). The watchdog writes here rarely (armed: once per sampling deadline; the gate's shared
// count: never for this gate).
//
// The gate lets StopPollSource wait until the main thread is out of the timing, with no locked instruction
// on the main thread: a depth word only the main thread writes, and the fence's light half between it and
// the gate's flag, which is the source's on/off flag (PollActive); membarrier on the stopping side, full
// fences where membarrier is not available. Only the thread OnMainThread admitted gets that far.
inline hook::OwnerOnlyGate<jni::MainOwnerWords>& Gate() { return jni::g_main_gap.gate; }
// The looper thread's thread pointer, learnt by its first call through a proxy (0: not yet). Comparing the
// thread pointer register is one instruction; pthread_self() is a call into libc on every epoll wait of
// every thread of the library.
inline std::atomic<uint64_t>& MainTp() { return jni::g_main_gap.poll_words[0]; }
// Main thread only (inside the mark while the source is active; StopPollSource once it drained the mark;
// relaxed loads and stores, plain ones in the code): the ring has room below this head: the tail last read
// + kPollRing (the tail only grows, so an old value is only ever too small: the tail is read again when
// the head reaches it).
inline std::atomic<uint64_t>& RingEnd() { return jni::g_main_gap.poll_words[1]; }
// The ring's head (RingHead(), timing_state.h: every gap pushed, ever) lives here too, written by the main
// thread only (release: the drain, status and the check chain read it with acquire), in the line a gap's
// end writes anyway. It once had a copy in g next to the ring (g.ring_head), which the drain read: that
// store was a page of its own per gap (census11: 0xba000), a second TLB walk on every cold wake.
// A gap at least this long takes EndGapSlow: g.poll_slow_ns's copy for the main thread (both written by
// RefreshPollSlowThreshold; the status and tests read g's).
inline std::atomic<uint64_t>& SlowNs() { return jni::g_main_gap.poll_words[3]; }

// The previous target per proxy, cached for the first call sites (return addresses) the main thread asks
// from after StartPollSource (plt/prev_cache.h: what it saves, and its rules with the install). It does
// not depend on the thread: every Looper in the library waits from the same call site, so other threads
// use the main thread's entry too (Find: acquire, the target stored before the address). Only the main
// thread fills it (MainSlowBefore), so that other threads' call sites never take the entries the main
// thread's need; another thread whose call site is not cached asks the engine (PrevFor).
// In front of them, in their first line: libc's own epoll_wait (LibcEpollWait below), which the main
// thread compares its blocking wait's target with right after reading that line's first entry, so the
// compare adds no line to the wait (the line is read-only once filled, and the wake prefetches it).
struct alignas(64) WaitTargets {
  std::atomic<void*> libc_epoll_wait{nullptr};
  plt::PrevCache prev[kHookCount];
};
WaitTargets g_wait_targets;
constexpr plt::PrevCache* g_prev_cache = g_wait_targets.prev;

// libc's own epoll_wait, looked up in libc itself (its handle, not RTLD_DEFAULT: that finds an interposer
// first, a sanitizer's interceptor or another tool's global replacement, and the raw call would then skip
// it). Null when libc is not found by that name (not bionic, not glibc): the target is then always called.
void* ResolveLibcEpollWait() {
#if defined(__BIONIC__)
  const char* const soname = "libc.so";
#elif defined(__GLIBC__)
  const char* const soname = LIBC_SO;
#else
  const char* const soname = nullptr;
#endif
  if (soname == nullptr) return nullptr;
  void* const libc = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);  // already loaded: only a reference taken
  if (libc == nullptr) return nullptr;
  void* const fn = dlsym(libc, "epoll_wait");
  dlclose(libc);  // libc itself is never unloaded: the address stays valid
  return fn;
}
inline void* LibcEpollWait() { return g_wait_targets.libc_epoll_wait.load(std::memory_order_relaxed); }

// The gap in progress: PollRunning() (timing_state.h), the gap word of the idle words; 0: none. The
// main thread's, inside the mark while the source is active, and StopPollSource's once it drained the
// mark: the main thread reads its gap's start from it (one word, one store per gap start).
// A check or sample deadline is outstanding (0 or 1; the main thread arms the first, the watchdog the rest).
inline std::atomic<uint64_t>& Armed() { return jni::IdleSharedWords().poll_armed; }

// The cheap check every proxy call makes first. Only when the source was started off the main thread
// (a remote flag switched it) is the main pthread learnt here, by its kernel tid, once per thread.
__attribute__((noinline)) bool OnMainThreadSlow(uintptr_t tp) {
  const uintptr_t self = static_cast<uintptr_t>(pthread_self());
  const uintptr_t main = g_main_thread.load(std::memory_order_relaxed);
  if (main == 0) {
    const uint32_t tid = g_resolve_tid.load(std::memory_order_relaxed);
    if (tid == 0 || t_not_main) return false;
    if (static_cast<uint32_t>(hook::CurrentTid()) != tid) {
      t_not_main = true;
      return false;
    }
    uintptr_t expected = 0;
    if (!g_main_thread.compare_exchange_strong(expected, self, std::memory_order_relaxed) && expected != self) {
      return false;
    }
  } else if (self != main) {
    return false;
  }
  MainTp().store(tp, std::memory_order_relaxed);
  return true;
}

// The known main thread (false also while it is not known yet: OnMainThread then learns it).
inline bool OnMainThreadFast() {
  // The thread pointer is never 0, so an unknown main thread (0) never compares equal.
  return reinterpret_cast<uintptr_t>(__builtin_thread_pointer()) == MainTp().load(std::memory_order_relaxed);
}

inline bool OnMainThread() {
  const uintptr_t tp = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  const uintptr_t main_tp = MainTp().load(std::memory_order_relaxed);
  if (main_tp != 0) return tp == main_tp;
  return OnMainThreadSlow(tp);
}

// The gaps' clock (start and end on the main thread). The watchdog side reads it too wherever it compares
// with a gap's start or end (is the gap old enough, how long has it run), so that the 50 us between it and
// clock_gettime never shows up as a gap that started in the future. Deadlines stay on CLOCK_MONOTONIC:
// there 50 us is far below their millisecond granularity.
uint64_t GapClockNs() { return hook::ProcessEventClock().NowNs(); }
// The main thread's reads (a gap's edges), from its copy of the anchor in its line (see the top; the
// copy's terms: EventClock::NowNsFrom). Inside the mark only: StartPollSource empties the copy while the
// source is off, so that a recalibrated clock (a test's options) is copied afresh.
// The copy's usual read (EventClock::ReadCopy) is inline; its refill once the copy is used up (NowNsFrom:
// the process clock's read, maybe its re-anchor, the copy; about one wake in 6) is a function of its own,
// entered from every hot function that reads the clock. Inline in each of them, the refill was ~550 bytes
// of the looper's wake functions (Release x86_64), which then did not fit the text page they share with
// .plt: each cold wake paid a second page. lib/startup_order.ld places it with them (hot, by its name).
__attribute__((noinline)) uint64_t RefillMainGapClock() {
  return hook::ProcessEventClock().NowNsFrom(&jni::g_main_gap.poll_clock);
}
inline uint64_t MainGapClockNs() {
  uint64_t now;
  if (__builtin_expect(hook::EventClock::ReadCopy(jni::g_main_gap.poll_clock, &now), 1)) return now;
  return RefillMainGapClock();
}

void OnPollSample(const hook::DeadlineFired& fired, void*);
void OnPollCheck(const hook::DeadlineFired& fired, void*);
void OnPollResume(const hook::DeadlineFired& fired, void*);

// The main thread inside the timing (not in epoll_wait): it marks itself in, then checks the gate's flag
// (the source's on/off flag, in its line); StopPollSource clears it, then drains the gate. Only the thread
// OnMainThread admitted gets here (every other thread returns from the proxy before), so it enters as the
// gate's owner without the owner lookup. A nested entry (a signal handler that polls) restores the depth
// before the outer one goes on.
class PollInside {
 public:
  PollInside() : open_(Gate().EnterOwner()) {}
  ~PollInside() { Gate().LeaveOwner(); }
  // The source is active: the timing's state may be touched.
  bool open() const { return open_; }

 private:
  bool open_;
};

// A finished gap's timeline record (the drain's and the full ring's one shape; the running gap's copy
// lent to a report adds still_running).
hook::Event GapRecord(const hook::PluginContext* ctx, uint64_t start_ns, uint64_t wall_ns) {
  hook::Event e;
  e.ts_ns = start_ns;
  e.dur_ns = wall_ns;
  e.tid = MainTid(ctx);
  e.kind = hook::EventKind::kLooperMessage;
  e.name = g.name_poll;
  e.args[0] = hook::EventArg::String(g.key_source, g.value_poll);
  return e;
}

// One drain's records (g.mu held): a gap of at least record_min_ns gets its own record; back-to-back
// shorter ones form a run. A run whose summed wall time (busy time) reaches record_min_ns is one
// `looper.run` record (ts: the first gap's start, dur: to the last one's end; args: how many gaps and
// their busy time), so that ~400 fast messages a second do not push the lags out of the timeline ring.
// A shorter run is folded: no record, its gaps counted (poll_folded_gaps). That is
// the common case: an app wakes, works a few hundred microseconds and waits again, and a slice that short
// in a trace is noise at the recording threshold, the same threshold a single gap is held to (and a run
// of one gap is always folded: its busy time is that gap's, under the threshold). A run ends
// - before a gap that gets its own record (the run is appended first: records stay in time order);
// - before a gap that followed a wait longer than record_min_ns: the slice a run draws in a trace (and
//   the overlap a report's blocked_by computes from it) then never hides more idle time in one piece than
//   a message needs to be recorded on its own: the thread was working, give or take waits too short to
//   matter at the recording threshold;
// - at the end of the drain (every 200 ms, before a report or export, when status is read): a record
//   once appended is final, so whatever reads the timeline after a drain finds each gap in exactly one
//   record or counted as folded, and a run spans at most one drain period (a busy stretch cut by a drain
//   may so fold a piece under the threshold that a longer run would have recorded).
// Every gap still goes into the history window and, past lag_ms, into a report (DrainPollGapsLocked):
// folding only decides what the timeline keeps.
class GapRecorder {
 public:
  GapRecorder(const hook::PluginContext* ctx, uint64_t record_min_ns)
      : ctx_(ctx), timeline_(ctx ? ctx->timeline : nullptr), min_(record_min_ns) {}
  void Add(uint64_t start_ns, uint64_t wall_ns) {
    if (!timeline_) return;
    if (wall_ns >= min_) {  // record_min 0: every gap
      Flush();
      Append(GapRecord(ctx_, start_ns, wall_ns));
      return;
    }
    if (count_ != 0 && start_ns > end_ && start_ns - end_ > min_) Flush();
    if (count_ == 0) start_ = start_ns;
    end_ = start_ns + wall_ns;
    busy_ += wall_ns;
    ++count_;
  }
  void Flush() {
    if (count_ == 0) return;
    if (busy_ >= min_) {
      hook::Event e = GapRecord(ctx_, start_, end_ - start_);
      e.name = g.name_run;
      e.args[1] = hook::EventArg::Int(g.key_count, count_);
      e.args[2] = hook::EventArg::Int(g.key_busy_us, static_cast<int64_t>(busy_ / 1000));
      Append(e);
      Bump(g.poll_run_records, 1);
      Bump(g.poll_run_gaps, static_cast<uint64_t>(count_));
    } else {
      Bump(g.poll_folded_gaps, static_cast<uint64_t>(count_));
    }
    count_ = 0;
    busy_ = 0;
  }

 private:
  // The counters have one writer (the drain, under mu): no locked instruction.
  static void Bump(std::atomic<uint64_t>& counter, uint64_t n) {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void Append(const hook::Event& e) {
    if (timeline_) timeline_->Append(e);
  }
  const hook::PluginContext* const ctx_;
  hook::Timeline* const timeline_;
  const uint64_t min_;
  uint64_t start_ = 0, end_ = 0, busy_ = 0;
  int64_t count_ = 0;
};

// ---- main thread, per gap ----
// The fast path of a look without waiting (~86 instructions over the bare call on x86_64, callgrind; 3 of
// them mark the new gap's start for the idle wrapper, GapStartWord):
// the thread-pointer compare and the cached target (the proxy), the mark, the clock, the finished gap's
// start and wall into the ring with the head, the new gap's start published in one word, the armed check.
// Everything else moved off it: the gap and message counters are derived from the ring's head when status
// is read; a lagging gap is reported by the watchdog (its next sample finds it over, or the periodic drain
// queues it); the CPU clock, the ticker's resume and a full ring take the slow path, which only gaps past
// poll_slow_ns (sample_after_ms, or a quarter frame while the ticker is parked) or a full ring reach. A
// gap left open by StopPollSource is forgotten there (it clears the start once the mark is drained).

// The rare part of a gap's end: out of line, so that the fast path stays small.
__attribute__((noinline, cold)) void EndGapSlow(uint64_t start, uint64_t wall, uint64_t t1, uint64_t head) {
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  const uint64_t ring_end = g.ring_tail.load(std::memory_order_acquire) + kPollRing;
  RingEnd().store(ring_end, std::memory_order_relaxed);
  if (head < ring_end) {
    const size_t i = head % kPollRing;
    uint64_t wall_word = wall;
    // Only gaps the sampler may have seen read the CPU clock (a sampled gap ran past sample_after_ms).
    if (wall >= g.sample_after_ns.load(std::memory_order_relaxed)) {
      g.ring_cpu_end[i] = ThreadCpuNs();
      wall_word |= kGapHasCpu;
    }
    g.ring[i].start_ns = start;
    g.ring[i].wall_ns = wall_word;
    RingHead().store(head + 1, std::memory_order_release);
  } else {
    g.poll_ring_full.store(g.poll_ring_full.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // The drain will not see this gap: its record goes into the timeline from here, and a lag report for
    // it (which the drain would queue) is counted as dropped.
    if (ctx && ctx->timeline) ctx->timeline->Append(GapRecord(ctx, start, wall));
    if (wall >= g.lag_ns.load(std::memory_order_relaxed)) g.reports_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  // A parked frame ticker is told (from the watchdog) when a gap took a quarter of a frame.
  if (g.ticker_parked.load(std::memory_order_relaxed)) {
    const uint64_t refresh = g.refresh_ns.load(std::memory_order_relaxed);
    const uint64_t quarter = (refresh ? refresh : FrameStats::kDefaultIntervalNs) / 4;
    // The threshold goes back to sample_after_ms when the watchdog resumes the ticker (OnPollResume).
    if (wall >= quarter && g.ticker_parked.exchange(false, std::memory_order_relaxed) && ctx && ctx->watchdog) {
      ctx->watchdog->Arm(kPollResumeTag, t1, OnPollResume, nullptr);
    }
  }
}

// The gap started at PollRunning() ends at t1 (inside the mark, the source active).
inline void EndGap(uint64_t t1) {
  const uint64_t start = PollRunning().load(std::memory_order_relaxed);
  if (start == 0) return;  // no gap: the first look after the source started
  const uint64_t wall = t1 - start;
  const uint64_t head = RingHead().load(std::memory_order_relaxed);  // this thread is its only writer
  if (__builtin_expect(head < RingEnd().load(std::memory_order_relaxed) && wall < SlowNs().load(std::memory_order_relaxed), 1)) {
    // The drain reads a slot only below the head (release below), and this thread writes a slot only
    // once the tail (acquire, in EndGapSlow) has passed it.
    PollGap& slot = g.ring[head % kPollRing];
    slot.start_ns = start;
    slot.wall_ns = wall;
    RingHead().store(head + 1, std::memory_order_release);
    return;
  }
  EndGapSlow(start, wall, t1, head);
}

// Arms the chain's next check. Its deadline is the chain's (g.poll_check_due): a check that fires with
// another one is not the chain's and does nothing (see OnPollCheck).
inline void ArmCheckAt(const hook::PluginContext* ctx, uint64_t due) {
  g.poll_check_due.store(due, std::memory_order_relaxed);
  ctx->watchdog->Arm(kPollCheckTag, due, OnPollCheck, nullptr);
}

// The first gap after the chain ended (a check period without a gap) starts it again; every other gap
// finds it armed (one relaxed load in StartGap). Rare since the watchdog keeps the chain going while the
// thread works (see the top): out of line. The gap's start is read here, not passed: the fast path then
// keeps no copy of it for the call.
__attribute__((noinline)) void ArmCheck() {
  const uint64_t t0 = PollRunning().load(std::memory_order_relaxed);
  if (Armed().exchange(true, std::memory_order_acq_rel)) return;
  g.poll_check_arms.store(g.poll_check_arms.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (ctx && ctx->watchdog) {
    ArmCheckAt(ctx, t0 + g.sample_after_ns.load(std::memory_order_relaxed));
  }
}

// A gap's start as published: t0 with bit 0 saying whether an idle pass may take it as its start (only
// after a look that found nothing ready: see jni::kGapNotAnIdleStart). The gap's record, sampling and
// identity all use this value (the ring's start is the published one, so that the drain matches a sampled
// gap), and so does the end of the gap before it; it is at most 1 ns off the clock read.
inline uint64_t GapStartWord(uint64_t t0, bool idle_start) {
  return (t0 & ~jni::kGapNotAnIdleStart) | (idle_start ? 0 : jni::kGapNotAnIdleStart);
}

// A gap starts at `start` (GapStartWord; inside PollInside, open). Relaxed: the start is the whole message
// (no other word is read through it); the race with ContinueChecks that no fence orders is the one
// described at the top. The wrapper of the idle handlers reads the same word on this thread.
inline void StartGap(uint64_t start) {
  PollRunning().store(start, std::memory_order_relaxed);
  if (!Armed().load(std::memory_order_relaxed)) ArmCheck();
}

// The target for a call from return_address: the engine's lookup (JP_PLT_PREV's answer), not cached.
__attribute__((noinline)) void* PrevFor(int i, const void* return_address) {
  return plt::PrevCache::Ask(&g_hook[i], &g_prev[i], return_address);
}

// A look without waiting (timeout 0: the top of every next() while messages are queued) returns at once:
// the main thread never stopped working, so when it returns the gap ends and the next one starts at the
// same instant (one clock read per message; the syscall's own time counts as work). All of it after the
// call, so that only the result is kept across it (the proxy's fast path saves one register; out of line
// for the same reason). Inside the mark; StopPollSource must never wait for a thread in epoll, so the
// mark is not held across the call. kIdleStart: the look found nothing ready, so it ran no fd callback
// and an idle pass that follows may start at the gap's start (GapStartWord). One instance per case, chosen
// by the caller's test of the look's result: the result is then not kept across the clock read here.
// With the source stopping (the gate closed) the word is cleared, so that the idle wrapper never takes a
// gap that ended before this look for the start of a pass (StopPollSource clears it too, after the drain).
template <bool kIdleStart>
__attribute__((noinline)) void AfterLook() {
  // PollInside written out: the compiler kept the object's flag in a stack slot.
  if (Gate().EnterOwner()) {
    // The finished gap ends where the new one starts, to the nanosecond (the drain merges runs by that).
    const uint64_t t = GapStartWord(MainGapClockNs(), kIdleStart);
    EndGap(t);
    StartGap(t);
  } else {
    PollRunning().store(0, std::memory_order_relaxed);
  }
  Gate().LeaveOwner();
}

// A call that may block: the gap ends before it, and the thread says it waits (PollRunning() 0: the
// sampler leaves a waiting thread alone); the next gap starts when it returns.
// The gap is nearly always running here (a look or a wake started it), and the expectation lays its end
// out straight after the gate's test in MainSlowBefore: the compiler had put it past the cache's other
// entries and the engine's lookup, a jump to a code line of its own at every blocking wait (in situ the
// line's first instruction held about half of MainSlowBefore's samples).
void BeforeBlock() {
  if (__builtin_expect(PollRunning().load(std::memory_order_relaxed) != 0, 1)) EndGap(MainGapClockNs());
  PollRunning().store(0, std::memory_order_relaxed);
}
// Inline into WaitSlow, the blocking wait's caller: the wake's first instructions follow the call's return
// in the same function (no call, no code line of a function of its own to miss after the wait; in situ
// the first line of MainSlowAfter was ~20 % of its samples, a code miss).
template <int I>
inline __attribute__((always_inline)) void AfterBlock() {
  PollInside inside;
  // The process clock's line, asked for once the gate's line is (its load is the wake's first): the copy
  // is refilled at ~1 wake in 6 (a blocking wait usually outlasts it), and that read finds the line
  // written by the watchdog's re-anchor on another core; asked for here, it overlaps the gate line's miss.
  __builtin_prefetch(&hook::ProcessEventClock());
  // This proxy's previous-target line, which the look that follows the wake's message (the top of the
  // next next()) reads first: only the proxies touch it, so the message's Java work left it cold (in situ
  // 60-70 % of ProxyWait's samples sat right after its load).
  __builtin_prefetch(&g_prev_cache[I]);
  // Another monitor's lines the main thread's next event needs (the input proxies' previous-target lines:
  // a read right after this wake, a FINISHED at the frame's end), named in the gate's line: asked for
  // now, their misses overlap this one's instead of stalling the proxy before its syscall.
  // Expected set (a monitor that names lines is on): its prefetches then lie on the wake's straight path;
  // unset costs the jump over them.
  const uintptr_t hint = Gate().owner_words().wake_lines.load(std::memory_order_relaxed);
  if (__builtin_expect(hint != 0, 1)) {
    const uintptr_t first = hint & ~jni::kWakeLineBits;
    __builtin_prefetch(reinterpret_cast<const void*>(first));
    __builtin_prefetch(reinterpret_cast<const void*>(first + (hint & jni::kWakeLineBits) * 64));
  }
  if (__builtin_expect(inside.open(), 1)) {
    StartGap(GapStartWord(MainGapClockNs(), false));  // next() runs no idle pass after a wait
  } else {
    PollRunning().store(0, std::memory_order_relaxed);  // as in AfterLook
  }
}

// The main thread's other paths: a call that may block, or the target not cached for this call site.
// Returns the target to call; AfterBlock (a wait) or MainSlowAfter (a look) follows the call. A blocking wait (every idle period of the
// thread) is the common case here and its call site is cached: the engine is asked only on a miss.
__attribute__((noinline)) void* MainSlowBefore(int i, const void* return_address, int timeout) {
  void* const prev = g_prev_cache[i].Get(&g_hook[i], &g_prev[i], return_address);
  PollInside inside;
  if (__builtin_expect(inside.open() && timeout != 0, 1)) BeforeBlock();  // a blocking wait, the usual caller
  return prev;
}
// A look's end from a call site not cached (a blocking wait's wake runs inline in WaitSlow: AfterBlock).
__attribute__((noinline)) void MainSlowAfter(int ready) {
  if (ready == 0) {
    AfterLook<true>();
  } else {
    AfterLook<false>();
  }
}

// The proxies. The fast path (the main thread, a look without waiting, the target cached for this call
// site in the cache's first entry): a thread-pointer compare, the cached target called, then AfterLook.
// Another thread (the main one known) tail-calls the cached target. Everything else leaves by a tail call
// to an out-of-line path that gets the arguments as they came (no capture, nothing saved), so that the
// fast path keeps only the result across its calls; that path looks at every entry of the cache before
// it asks the engine (the other entries inline cost the fast paths an instruction, callgrind). PrevFor gets the proxy's own return address, as JP_PLT_PREV would. One template serves
// epoll_wait (I 0) and epoll_pwait (I 1, its signal mask in Rest): the same body, each instantiation
// compiled as a proxy of its own (its own return address).
//
// The main thread's blocking epoll_wait (I 0) whose target is libc's own epoll_wait is made here as the
// syscall itself (plt/raw_wait.h): the wake from the sleep, where every line is cold, then returns into
// this function's one line that goes on into AfterBlock, instead of into libc's wrapper's lines (glibc: the
// syscall's return and the cancellation bookkeeping; bionic: three nested returns) and then ours: one cold
// text path per wake instead of two (the lead's x86_64 measurement: libc's epoll path 300-360 -> 79-90
// main-thread samples per 30 s). Any other target (an interposer, another tool's hook, a sanitizer's
// interceptor) is called as before, and so is epoll_pwait (I 1: its signal mask is the caller's business).
// Either call's errno is set after AfterBlock (FailedWait), so nothing the wake's timing calls can change it
// before the caller reads it; the two share one AfterBlock (a copy per call was +380 bytes of WaitSlow<0>).
// A target's failure is passed on as it came (its result and its errno, whatever they are).
__attribute__((noinline, cold)) int FailedWait(int result, int error) {
  errno = error;
  return result;
}

template <int I, typename... Rest>
__attribute__((noinline)) int WaitSlow(const void* ra, int epfd, struct epoll_event* events, int max, int timeout,
                                       Rest... rest) {
  using Fn = int (*)(int, struct epoll_event*, int, int, Rest...);
  if (!OnMainThread()) {
    void* prev = g_prev_cache[I].Find(ra);  // filled by the main thread only (g_prev_cache)
    if (prev == nullptr) prev = PrevFor(I, ra);
    return reinterpret_cast<Fn>(prev)(epfd, events, max, timeout, rest...);
  }
  void* const target = MainSlowBefore(I, ra, timeout);
  if constexpr (I == 0 && plt::kHaveRawEpollWait) {
    // Expected: the main thread's blocking wait on libc (a look, timeout 0, comes here only from a call site
    // not cached, and keeps calling the target: MainSlowAfter follows it). One AfterBlock for both calls:
    // a failure's result and errno are kept across it (the kernel's -errno as libc's -1 and errno).
    if (__builtin_expect(timeout != 0, 1)) {
      int r, error = 0;
      if (__builtin_expect(target == LibcEpollWait(), 1)) {
        const long k = plt::RawEpollWait(epfd, events, max, timeout);
        r = static_cast<int>(k);
        if (__builtin_expect(k < 0, 0)) r = -1, error = static_cast<int>(-k);
      } else {
        r = reinterpret_cast<Fn>(target)(epfd, events, max, timeout, rest...);
        if (r < 0) error = errno;
      }
      AfterBlock<I>();
      return __builtin_expect(r >= 0, 1) ? r : FailedWait(r, error);
    }
  }
  const int n = reinterpret_cast<Fn>(target)(epfd, events, max, timeout, rest...);
  if (timeout != 0) {
    AfterBlock<I>();  // the wake from a blocking wait: inline, see there
  } else {
    MainSlowAfter(n);  // a look from a call site not cached
  }
  return n;
}

template <int I, typename... Rest>
int ProxyWait(int epfd, struct epoll_event* events, int max, int timeout, Rest... rest) {
  using Fn = int (*)(int, struct epoll_event*, int, int, Rest...);
  const void* ra = __builtin_return_address(0);
  if (OnMainThreadFast()) {
    void* cached;
    if (timeout == 0 && (cached = g_prev_cache[I].FindFirst(ra)) != nullptr) {
      const auto prev = reinterpret_cast<Fn>(cached);
      const int n = prev(epfd, events, max, timeout, rest...);
      if (n == 0) {
        AfterLook<true>();
      } else {
        AfterLook<false>();
      }
      return n;
    }
  } else if (MainTp().load(std::memory_order_relaxed) != 0) {
    // Not the main thread (which is known): straight through, to the cached target when its call site
    // is the main thread's first one (every Looper's), else through WaitSlow.
    if (void* const cached = g_prev_cache[I].FindFirst(ra)) {
      return reinterpret_cast<Fn>(cached)(epfd, events, max, timeout, rest...);
    }
  }
  return WaitSlow<I>(ra, epfd, events, max, timeout, rest...);
}

void* const kProxies[kHookCount] = {reinterpret_cast<void*>(&ProxyWait<0>),
                                    reinterpret_cast<void*>(&ProxyWait<1, const sigset_t*>)};

// ---- watchdog side ----

// The lazily armed deadline goes on (the caller's deadline has just fired, so none of this chain is
// outstanding): to the running gap (a sample now if it is old enough, else a check at its start +
// sample_after_ms); when the main thread waits, to now + sample_after_ms if it ended a gap since the
// chain's last look, else nowhere (the chain ends: the next gap starts one).
void ContinueChecks(const hook::PluginContext* ctx) {
  if (!ctx->watchdog || !PollActive()) {
    Armed().store(false, std::memory_order_seq_cst);
    return;
  }
  for (;;) {
    // The clock first: a gap that starts after the word below was read as 0 starts after `now`, so the
    // check armed at now + sample_after_ms is at or before its start + sample_after_ms.
    const uint64_t now = GapClockNs();
    const uint64_t start = PollRunning().load(std::memory_order_seq_cst);
    const uint64_t after = g.sample_after_ns.load(std::memory_order_relaxed);
    const uint64_t ended = PollGapsEnded();
    const bool worked = g.poll_check_seen.exchange(ended, std::memory_order_relaxed) != ended;
    if (start != 0) {
      const uint64_t due = start + after;
      if (due <= now) {
        ctx->watchdog->Arm(kPollSampleTag | (start & kSeqMask), now, OnPollSample, nullptr,
                           hook::Watchdog::kCaptureStack);
      } else {
        ArmCheckAt(ctx, due);
      }
      return;
    }
    if (worked) {  // the thread works between waits: the chain goes on, Armed() stays set
      ArmCheckAt(ctx, now + after);
      return;
    }
    // A whole check period without a gap: the chain ends, unless a gap started meanwhile (it may have
    // seen Armed() still set and armed nothing) or the main thread started a chain of its own.
    Armed().store(false, std::memory_order_seq_cst);
    if (PollRunning().load(std::memory_order_seq_cst) == 0) return;
    if (Armed().exchange(true, std::memory_order_acq_rel)) return;  // the main thread armed it meanwhile
  }
}

void OnPollCheck(const hook::DeadlineFired& fired, void*) {
  Inside guard;
  g.poll_checks.store(g.poll_checks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!guard.active() || !ctx) {
    Armed().store(false, std::memory_order_seq_cst);
    return;
  }
  // Not the chain's last check: one armed while StopPollSource ran (its Disarm missed it) that outlived
  // a restart, beside the new start's chain. Going on would keep two chains (and their wakes) running
  // while the thread works; whichever of them armed last is the chain, the other ends here, without
  // touching Armed() (the chain's). The last one armed always fires (only a stop disarms it), so one
  // chain is left; if the stale one had cleared Armed() meanwhile, the next gap starts another, and the
  // two converge the same way.
  if (fired.deadline_ns != g.poll_check_due.load(std::memory_order_relaxed)) return;
  ContinueChecks(ctx);
}

// The gap a sample deadline was armed for is over: its record, history entry and (past lag_ms) report are
// due now rather than at the next periodic drain. This is how a lagging gap is reported: the main thread
// does not look at lag_ms. A gap past lag_ms that was never sampled (lag_ms below sample_after_ms, or a
// late check) is queued by the periodic drain (DrainPollSource), at most one check period later.
void SampledGapEnded(const hook::PluginContext* ctx) {
  DrainPollGaps();
  ReportFinished();
  ContinueChecks(ctx);
}

void OnPollSample(const hook::DeadlineFired& fired, void*) {
  Inside guard;
  if (!guard.active()) return;
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!ctx) return;
  const uint64_t id = fired.id & kSeqMask;
  if (!PollActive()) {  // stopped: the chain ends here
    Armed().store(false, std::memory_order_seq_cst);
    return;
  }
  const uint64_t start = PollRunning().load(std::memory_order_acquire);
  if (start == 0 || (start & kSeqMask) != id) return SampledGapEnded(ctx);
  bool need_pending = false, need_anr = false, drained = false;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    PollCurrent& cur = g.locked->poll_cur;
    if (cur.start_ns != start) {
      DrainPollGapsLocked();  // the previous sampled gap takes its samples into the history first
      drained = true;
      cur.start_ns = start;
      cur.samples.Clear();
      cur.pending = PendingSnapshot();
      cur.anr_reported = false;
      cur.cpu_first_ns = CpuNsOfTid(MainTid(ctx));
      cur.cpu_first_at_ns = GapClockNs();  // compared with the gap's end
    }
    AddFiredSample(fired, &cur.samples);
    // fired_ns is CLOCK_MONOTONIC, start the event clock: up to 50 us apart, so never "before" the start.
    const SampleNeeds needs = NeedsAt(fired.fired_ns > start ? fired.fired_ns - start : 0, cur.pending, &cur.anr_reported);
    need_pending = needs.pending;
    need_anr = needs.anr;
  }
  g.samples.fetch_add(1, std::memory_order_relaxed);
  if (drained) ReportFinished();  // the gaps that drain queued (the previous sampled one may have lagged)
  if (need_pending || need_anr) {
    PendingSnapshot p = ReadPending();  // the queue the stuck gap is holding back
    Dispatch d;
    SampleSet samples;
    uint64_t cpu_first = 0, cpu_first_at = 0;
    bool still = false;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      if (PollRunning().load(std::memory_order_acquire) == start && g.locked->poll_cur.start_ns == start) {
        still = true;
        if (need_pending) g.locked->poll_cur.pending = p;
        if (need_anr) samples = g.locked->poll_cur.samples;
        cpu_first = g.locked->poll_cur.cpu_first_ns;
        cpu_first_at = g.locked->poll_cur.cpu_first_at_ns;
      }
    }
    if (still && need_anr) {
      const uint64_t now = GapClockNs();
      d.start_ns = start;
      d.wall_ns = now > start ? now - start : 0;
      const uint64_t cpu_now = CpuNsOfTid(MainTid(ctx));
      d.cpu_ns = cpu_first && cpu_now > cpu_first ? cpu_now - cpu_first : 0;
      g.anrs.fetch_add(1, std::memory_order_relaxed);
      SubmitReport(ctx, "anr_risk", d, true, samples, p, now, ReportSource::kPoll, cpu_first ? cpu_first_at : 0);
    }
    if (!still) return SampledGapEnded(ctx);
  }
  ArmNextSample(ctx, fired, OnPollSample);
}

void OnPollResume(const hook::DeadlineFired&, void*) {
  Inside guard;
  if (!guard.active()) return;
  RefreshPollSlowThreshold();  // the main thread cleared ticker_parked
  const jni::FrameRefs& refs = jni::Frames();
  if (!refs.ok || !refs.ticker_resume_from_native || !jni::Vm()) return;
  std::string why;
  JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-watchdog", &why);
  if (!env) return;
  jni::NoteJavaFramesRan();  // the watchdog gives back the stack this Java call leaves resident (its loop)
  env->CallStaticVoidMethod(refs.ticker, refs.ticker_resume_from_native);
  if (!jni::TakeException(env, "FrameTicker.resumeFromNative", nullptr)) g.ticker_resumes.fetch_add(1);
}

bool NotImported(const std::string& error) { return error.find(" not import ") != std::string::npos; }

void RemoveHooks() {
  for (int i = 0; i < kHookCount; ++i) {
    jp_plt_hook* h = __atomic_load_n(&g_hook[i], __ATOMIC_ACQUIRE);
    // Still chained behind another tool after a remove: inactive, and g_main_thread == 0 passes through.
    if (h && jp_plt_hook_is_active(h)) jp_plt_hook_remove(h);
  }
}

}  // namespace

// PollActive()'s flag (timing_state.h): constant-initialised, the gate's own flag.
const std::atomic<bool>* const g_poll_active = &jni::g_main_gap.gate.own_flag();

void DrainPollGapsLocked() {
  uint64_t tail = g.ring_tail.load(std::memory_order_relaxed);
  const uint64_t head = RingHead().load(std::memory_order_acquire);
  const uint64_t lag = g.lag_ns.load(std::memory_order_relaxed);
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  GapRecorder records(ctx, g.record_min_ns.load(std::memory_order_relaxed));
  PollCurrent& cur = g.locked->poll_cur;
  for (; tail != head; ++tail) {
    const size_t i = tail % kPollRing;
    const PollGap& e = g.ring[i];
    const uint64_t wall = e.wall_ns & ~kGapHasCpu;
    const uint64_t cpu_end = e.wall_ns & kGapHasCpu ? g.ring_cpu_end[i] : 0;
    records.Add(e.start_ns, wall);
    Dispatch d;
    d.start_ns = e.start_ns;
    d.wall_ns = wall;
    SampleSet none;
    SampleSet* samples = &none;
    uint64_t window_start = 0;
    const bool sampled = cur.start_ns != 0 && cur.start_ns == e.start_ns;  // the watchdog sampled this gap
    if (sampled) {
      samples = &cur.samples;
      if (cur.cpu_first_ns && cpu_end > cur.cpu_first_ns) {
        d.cpu_ns = cpu_end - cur.cpu_first_ns;
        window_start = cur.cpu_first_at_ns;
      }
    }
    if (wall >= lag) {
      if (g.locked->to_report_count < kReportQueue) {
        Finished& f = g.locked->to_report[g.locked->to_report_count++];
        f.d = d;
        f.pending = PendingSnapshot();
        if (sampled) std::swap(f.pending, cur.pending);
        f.anr_reported = sampled && cur.anr_reported;
        f.source = ReportSource::kPoll;
        f.cpu_window_start_ns = window_start;
      } else {
        g.reports_dropped.fetch_add(1, std::memory_order_relaxed);
      }
    }
    g.locked->history.Add(d, samples);  // a sampled (medium / slow) gap keeps its samples (moved)
    if (sampled) cur.start_ns = 0;
  }
  records.Flush();  // a run ends with the drain: what a drain appends never changes later
  g.ring_tail.store(tail, std::memory_order_release);
}

void DrainPollGaps() {
  std::lock_guard<std::mutex> lock(g.mu);
  DrainPollGapsLocked();
}

bool PollRunningMessage(const hook::PluginContext* ctx, uint64_t now_ns, hook::Event* out) {
  const uint64_t start = PollRunning().load(std::memory_order_acquire);
  if (start == 0) return false;
  *out = GapRecord(ctx, start, now_ns > start ? now_ns - start : 1);
  out->args[1] = hook::EventArg::Int(g.key_running, 1);
  return true;
}

void RefreshPollSlowThreshold() {
  // Under a mutex of its own: the inputs change on different threads (a remote flag, the ticker's park
  // on the main thread's JNI call, its resume on the watchdog), and a recomputation from stale inputs
  // must not land last. Never taken on a gap's path.
  std::lock_guard<std::mutex> lock(g.poll_slow_mu);
  uint64_t slow = g.sample_after_ns.load(std::memory_order_relaxed);
  if (g.ticker_parked.load(std::memory_order_relaxed)) {
    const uint64_t refresh = g.refresh_ns.load(std::memory_order_relaxed);
    const uint64_t quarter = (refresh ? refresh : FrameStats::kDefaultIntervalNs) / 4;
    if (quarter < slow) slow = quarter;
  }
  g.poll_slow_ns.store(slow, std::memory_order_relaxed);
  SlowNs().store(slow, std::memory_order_relaxed);
}

}  // namespace internal

using namespace internal;  // NOLINT

bool StartPollSource(const char* library, uintptr_t main_thread, uint32_t main_tid, std::string* why) {
  if (!g.active.load(std::memory_order_acquire)) {
    *why = "the looper timing is not active";
    return false;
  }
  if (PollActive()) return true;
  // The gaps' clock is calibrated here, on the control path, by whichever monitor starts first (~2 ms,
  // once per process); never by a proxy.
  hook::CalibrateProcessEventClock();
  // Registers the process for expedited membarrier once; without it both sides use full fences.
  std::string fence_why;
  Gate().fence().Init(&fence_why);
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.locked->poll_cur = PollCurrent();
    // The main thread is out (not active): the ring starts empty at the head it left.
    g.ring_tail.store(RingHead().load(std::memory_order_acquire), std::memory_order_release);
  }
  PollRunning().store(0, std::memory_order_release);
  Armed().store(false, std::memory_order_release);
  RefreshPollSlowThreshold();
  // WaitSlow's raw call is made only for this target: looked up before any slot is written.
  if (plt::kHaveRawEpollWait && LibcEpollWait() == nullptr) {
    g_wait_targets.libc_epoll_wait.store(ResolveLibcEpollWait(), std::memory_order_relaxed);
  }
  // Before any slot is written, and again once the installs returned (plt/prev_cache.h).
  for (plt::PrevCache& c : g_wait_targets.prev) c.Clear();
  MainTp().store(0, std::memory_order_relaxed);  // learnt again from main_thread by its next call
  jni::g_main_gap.poll_clock.limit = 0;  // the main thread's clock copies the (maybe recalibrated) anchor again
  g_main_thread.store(main_thread, std::memory_order_release);
  g_resolve_tid.store(main_tid, std::memory_order_release);
  Gate().Open();  // the source's flag (PollActive), a release of all of the above
  size_t slots = 0;
  std::string failures, not_imported;
  for (int i = 0; i < kHookCount; ++i) {
    jp_plt_hook* h = jp_plt_hook_install(library, kSymbols[i], kProxies[i], &g_prev[i]);
    if (!h) {
      const std::string error = jp_plt_last_error();
      std::string& into = NotImported(error) ? not_imported : failures;
      into += std::string(into.empty() ? "" : "; ") + kSymbols[i] + ": " + error;
      continue;
    }
    __atomic_store_n(&g_hook[i], h, __ATOMIC_RELEASE);
    const size_t n = jp_plt_hook_slot_count(h);
    if (n == 0) {
      // A pending hook: the library is not loaded. On a phone the Looper's library is loaded before any
      // app code, so it never will be: not a timing source.
      jp_plt_hook_remove(h);
      continue;
    }
    slots += n;
  }
  for (plt::PrevCache& c : g_wait_targets.prev) c.Clear();
  if (slots == 0 || !failures.empty()) {
    StopPollSource();
    if (!failures.empty()) {
      *why = std::string("hooking ") + library + ": " + failures;
    } else if (!not_imported.empty()) {
      *why = std::string(library) + " imports neither epoll_wait nor epoll_pwait (" + not_imported + ")";
    } else {
      *why = std::string(library) + " is not loaded in this process";
    }
    return false;
  }
  return true;
}

void StopPollSource() {
  // The flag falls before the hooks go: until they are removed, every main-thread return from epoll still
  // runs the proxy, which now only clears the gap word (AfterLook's closed path). Removing them first would
  // leave the word holding the last gap the proxies saw while the main thread goes on through libc
  // directly, and an idle pass in that window would take a gap that ended long before as its start.
  Gate().Close();  // the source's flag (seq_cst): proxies in flight pass straight through from now
  Gate().Drain();  // whoever got in before the flag fell is short: no blocking call inside the mark
  // No proxy is inside the timing any more, and none enters it before the next start: the gap left open
  // is forgotten (the main thread's side too, race-free now: one word) and its sampling deadline disarmed
  // (unless the main thread's closed path cleared the word first: that deadline then ends its chain on
  // PollActive() == false, or as a stale sample after a restart).
  const uint64_t start = PollRunning().exchange(0, std::memory_order_acq_rel);
  RemoveHooks();
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (ctx && ctx->watchdog) {
    ctx->watchdog->Disarm(kPollCheckTag);
    if (start) ctx->watchdog->Disarm(kPollSampleTag | (start & kSeqMask));
  }
  // A deadline that fired meanwhile ends its chain on PollActive() == false; either way nothing is armed
  // for the next start.
  Armed().store(false, std::memory_order_seq_cst);
  if (ctx) DrainPollGaps();
}

void DrainPollSource() {
  Inside guard;  // DeactivateTiming waits for it: the context stays valid for the reports below
  if (!guard.active() || !PollActive()) return;
  DrainPollGaps();
  ReportFinished();  // what this drain (or a report's or a status read's since the last one) queued
  // The race ContinueChecks and StartGap can both lose (no fence on the main thread): a gap running with
  // nothing armed gets its check now.
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (ctx && PollRunning().load(std::memory_order_seq_cst) != 0 &&
      !Armed().exchange(true, std::memory_order_acq_rel)) {
    g.poll_rearms.fetch_add(1, std::memory_order_relaxed);
    ContinueChecks(ctx);
  }
}

size_t PollSourceSlots() {
  size_t n = 0;
  for (int i = 0; i < kHookCount; ++i) {
    jp_plt_hook* h = __atomic_load_n(&g_hook[i], __ATOMIC_ACQUIRE);
    if (h && jp_plt_hook_is_active(h)) n += jp_plt_hook_slot_count(h);
  }
  return n;
}

// Mirrors the ticker whatever the source, so that a switch to poll while it is parked still resumes it.
void SetTickerParked(bool parked) {
  g.ticker_parked.store(parked, std::memory_order_relaxed);
  RefreshPollSlowThreshold();
}

}  // namespace jp::looper
