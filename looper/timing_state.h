// The looper timing's process-wide state, shared by its two sources: the printer source
// (dispatch_timing.cc, LooperPrinter's natives) and the poll source (poll_timing.cc, the gaps between the
// main thread's epoll waits in libutils.so). Internal to looper/: the public surface is dispatch_timing.h.
//
// Memory: `g` is constant-initialised and all zero (it lands in .bss: loading the library writes none of
// it, and its pages cost nothing until touched); whatever needs a constructor or the heap (the history
// pool, samples, pending snapshots) sits in `Locked`, allocated by the first ActivateTiming and never
// freed (a printer or poll callback may still be inside the code after stop). The gap ring stays inline:
// its pages are only touched once the poll source pushes gaps, and the main thread reaches it without a
// pointer hop.
//
// Locking: `mu` guards the current message, the history and the report queue. The printer source takes it
// on the main thread (briefly, uncontended); the poll source never does: its main-thread half writes only
// atomics and a single-producer ring (PollGap) that the watchdog drains into the history.
#ifndef JANKPROBE_LOOPER_TIMING_STATE_H_
#define JANKPROBE_LOOPER_TIMING_STATE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "hook/clock.h"
#include "hook/event_clock.h"
#include "hook/jni/jni_refs.h"
#include "hook/monitor.h"
#include "looper/frame_stats.h"
#include "looper/message_history.h"
#include "looper/pending_messages.h"
#include "looper/stack_samples.h"

namespace jp::looper::internal {

// Deadline ids: a tag in the top bits, the message's sequence number below.
constexpr uint64_t kSampleTag = 0x1009ull << 48;
constexpr uint64_t kReportTag = 0x100Aull << 48;
constexpr uint64_t kPollSampleTag = 0x100Bull << 48;
// 0x100C: was the poll source's report deadline (lagging gaps are now reported by the watchdog's drain).
constexpr uint64_t kPollResumeTag = 0x100Dull << 48;
constexpr uint64_t kPollCheckTag = 0x100Eull << 48;
constexpr uint64_t kSeqMask = (1ull << 48) - 1;
constexpr size_t kReportQueue = 4;   // lagging messages waiting for the watchdog to report them
// Finished gaps waiting for the watchdog's drain (every check period, 200 ms; also before a report, an
// export, a status read). Sized for one period at a busy main thread's rate with room for a late drain:
// 512 gaps are 200 ms at 2560 gaps/s, 6.5x the demo app's ~395/s (touches at 120/s, frames, feed
// messages), or the demo's rate with the watchdog 1.3 s late. Beyond that nothing is lost: the main
// thread appends the record itself (the timeline's locked append, ~+70 instructions for that gap).
// Every slot is resident once the ring has cycled, so the size is memory the app pays for good.
constexpr size_t kPollRing = 512;

struct Current {
  uint64_t seq = 0;
  bool running = false;
  Dispatch d;
  uint64_t start_cpu_ns = 0;
  SampleSet samples;
  PendingSnapshot pending;
  bool anr_reported = false;
};

enum class ReportSource { kPrinter, kPoll };

struct Finished {
  Dispatch d;
  PendingSnapshot pending;
  bool anr_reported = false;
  ReportSource source = ReportSource::kPrinter;
  uint64_t cpu_window_start_ns = 0;  // poll: d.cpu_ns counts from here (0: no CPU figure)
};

// One finished main-thread gap, written by the main thread into the ring. 16 bytes: the gap's start is
// its identity (a sampled gap is matched by it), and the CPU clock read at its end (only for gaps past
// sample_after_ms) goes into a side array, flagged in the wall word, so most gaps write two words.
struct PollGap {
  uint64_t start_ns = 0;
  uint64_t wall_ns = 0;  // | kGapHasCpu: Timing::ring_cpu_end[same index] holds the CPU clock at its end
};
constexpr uint64_t kGapHasCpu = 1ull << 63;

// The gap being sampled, on the watchdog's side (under mu).
struct PollCurrent {
  uint64_t start_ns = 0;  // its start, i.e. its identity (0: none)
  SampleSet samples;
  PendingSnapshot pending;
  bool anr_reported = false;
  uint64_t cpu_first_ns = 0;     // the main thread's CPU clock at the first sample (0: not read)
  uint64_t cpu_first_at_ns = 0;  // when it was read
};

// The state under Timing::mu that has constructors (heap members): one per process, made at the first
// activation.
struct Locked {
  Current cur;
  MessageHistory history;
  Finished to_report[kReportQueue];
  size_t to_report_count = 0;
  PollCurrent poll_cur;
};

struct Timing {
  std::atomic<bool> active{false};
  std::atomic<int> inside{0};
  std::atomic<const hook::PluginContext*> context{nullptr};
  // Thresholds: zero until RetuneTiming (ActivateTiming calls it before anything can read them), so that
  // `g` stays all zero.
  std::atomic<uint64_t> lag_ns{0};
  std::atomic<uint64_t> anr_ns{0};
  std::atomic<uint64_t> sample_after_ns{0};
  std::atomic<uint64_t> sample_interval_ns{0};
  std::atomic<int> max_frames{0};
  // looper.record_min_us: poll gaps shorter than this are merged into runs by the drain, and a run busy
  // for less than this in all is only counted (0: every gap is recorded).
  std::atomic<uint64_t> record_min_ns{0};
  // Argument keys and names, interned at activation.
  uint16_t key_what = 0, key_cpu = 0, key_target = 0, key_callback = 0;
  uint16_t key_dropped = 0, key_gap = 0, key_interval = 0, name_frame = 0, key_running = 0;
  uint16_t key_source = 0, name_poll = 0, value_poll = 0;
  uint16_t name_run = 0, key_count = 0, key_busy_us = 0;

  std::mutex mu;     // `locked` (set once, under it, by the first ActivateTiming) and all it holds
  Locked* locked = nullptr;

  FrameStats frames;  // main thread only

  // Poll source, main thread -> watchdog. Whether it is on: PollActive() below (the flag of its gate).
  // The gap in progress: PollRunning() below (it lives in the idle wrapper's shared words).
  std::atomic<bool> ticker_parked{false};       // FrameTicker parked: a long gap asks it to resume
  // A finished gap at least this long takes the main thread's slow path (CPU clock read, ticker resume):
  // sample_after_ms, or a quarter frame while the ticker is parked. Written under poll_slow_mu.
  std::atomic<uint64_t> poll_slow_ns{0};
  std::mutex poll_slow_mu;
  PollGap ring[kPollRing];
  uint64_t ring_cpu_end[kPollRing] = {};  // see PollGap; only gaps past sample_after_ms touch it
  std::atomic<uint64_t> ring_tail{0};  // written by the drainer (under mu); the head: RingHead() below

  std::atomic<uint64_t> messages{0}, lags{0}, anrs{0}, samples{0}, unmatched{0}, reports_dropped{0};
  std::atomic<uint64_t> frame_count{0}, dropped_frames{0}, janky_frames{0}, refresh_ns{0};
  // Poll gaps timed: RingHead() (every gap pushed, ever) + poll_ring_full (the ones that were not).
  std::atomic<uint64_t> poll_ring_full{0}, ticker_resumes{0}, poll_rearms{0};
  // The poll source's sampling check chain (poll_timing.cc, ContinueChecks): started by the main thread
  // (poll_check_arms: a gap found none outstanding; written by the main thread only), run by the watchdog
  // (poll_checks: check deadlines it ran).
  std::atomic<uint64_t> poll_check_arms{0};
  // The chain's side, on a line of its own (the main thread writes it only when it starts a chain):
  // poll_check_seen: gaps ended (RingHead() + poll_ring_full) when the chain last looked, so that a check
  // that finds the thread waiting knows whether it worked since; poll_check_due: the deadline of the
  // check the chain armed last (another check that fires is a stale one: OnPollCheck).
  alignas(64) std::atomic<uint64_t> poll_check_seen{0};
  std::atomic<uint64_t> poll_check_due{0};
  std::atomic<uint64_t> poll_checks{0};
  // Written by the drain (under mu): `looper.run` records and the gaps they hold; the gaps of runs too
  // short for a record (busy under record_min_ns).
  std::atomic<uint64_t> poll_run_records{0}, poll_run_gaps{0}, poll_folded_gaps{0};
};
// JP_CONSTINIT (dispatch_timing.cc). Hidden: reached PC-relative. With default visibility every reference
// went through the GOT, which the linker turns back into a lea only where the compiler loaded the address
// with a mov; a GOT load folded into another instruction (an add forming a ring slot's address) stays a
// load of the GOT's line on the RELRO page: a data page more per gap end (session 12, own_cycles annotate).
extern Timing g __attribute__((visibility("hidden")));

// The poll ring's head: gaps pushed into g.ring, ever. Written by the main thread only (release), in the
// poll words of its gap block (jni::MainGapBlock), which a gap's end writes anyway: no line or page of its
// own per gap (poll_timing.cc says more). Read with acquire by the drain, status and the check chain.
inline std::atomic<uint64_t>& RingHead() { return jni::g_main_gap.poll_words[2]; }

// Poll gaps timed so far: each one was pushed into the ring (RingHead) or, with the ring full, appended by
// the main thread itself (poll_ring_full). Not counted per gap on the main thread: status (LooperCounters'
// poll_gaps) and the sampling check chain (whether the thread worked since its last look) derive it here.
inline uint64_t PollGapsEnded() {
  return RingHead().load(std::memory_order_acquire) + g.poll_ring_full.load(std::memory_order_relaxed);
}

// The poll source's gap in progress: its start on the gaps' clock, which is also its identity (the sampling
// deadlines carry its low 48 bits, the drain matches a sampled gap by it), with bit 0 saying whether an
// idle pass may take it as its start (jni::kGapNotAnIdleStart); 0 while the main thread waits in epoll or
// the source is off. Written by the main thread only (StartGap, BeforeBlock) and by StopPollSource once
// the main thread is out. Its storage is jni::IdleWords::gap_start, the word TimingIdleHandlerList reads
// through its direct buffer: the one store per gap serves both monitors. It is also the main thread's own
// record of its gap's start (a gap ends from it), in the poll gate's owner line (jni::MainGapBlock).
inline std::atomic<uint64_t>& PollRunning() { return jni::IdleSharedWords().gap_start; }

class Inside {
 public:
  Inside() { g.inside.fetch_add(1, std::memory_order_acq_rel); }
  ~Inside() { g.inside.fetch_sub(1, std::memory_order_acq_rel); }
  bool active() const { return g.active.load(std::memory_order_acquire); }
};

uint32_t MainTid(const hook::PluginContext* ctx);
// The calling thread's CPU clock (a message's or a long gap's CPU time on the main thread).
inline uint64_t ThreadCpuNs() { return hook::ClockNs(CLOCK_THREAD_CPUTIME_ID); }
// Another thread's CPU clock from its kernel tid; 0 when it cannot be read.
uint64_t CpuNsOfTid(uint32_t tid);
// The main queue's pending messages, read from the watchdog thread.
PendingSnapshot ReadPending();

// Both sources' sampling deadlines (OnSample, OnPollSample), on the watchdog thread:
// - the stack the deadline captured (or why there is none) goes into the running message's samples;
void AddFiredSample(const hook::DeadlineFired& fired, SampleSet* samples);
// - what a message `elapsed_ns` old still needs: its pending queue read once it crosses lag_ms, one
//   anr_risk report once it crosses anr_ms (*anr_reported is set when that is now due);
struct SampleNeeds {
  bool pending = false;
  bool anr = false;
};
SampleNeeds NeedsAt(uint64_t elapsed_ns, const PendingSnapshot& pending, bool* anr_reported);
// - the next sample, one sample_interval_ms after this one (after now, if we fell behind: no burst).
void ArmNextSample(const hook::PluginContext* ctx, const hook::DeadlineFired& fired, hook::DeadlineFn fn);

// type: "message_lag" or "anr_risk". still_running: the message had not ended when this was written.
// For kPoll, d.cpu_ns covers only [cpu_window_start_ns, end] (0 = no CPU figure).
void SubmitReport(const hook::PluginContext* ctx, const char* type, const Dispatch& d, bool still_running,
                  const SampleSet& samples, const PendingSnapshot& pending, uint64_t now_ns, ReportSource source,
                  uint64_t cpu_window_start_ns = 0);

// Watchdog: reports every queued Finished message (message_lag, plus anr_risk when it was not reported
// while running).
void ReportFinished();

// Poll source (poll_timing.cc): its deadline callbacks, the watchdog-side drain, the in-flight record.
// The drain takes mu; reports and exports call it too (through the in-flight provider), so that the
// timeline holds every finished gap's record before they read it.
void DrainPollGaps();
// Whether the poll source is on (acquire): the flag of the gate its main-thread side enters, set and
// cleared by StartPollSource/StopPollSource (one flag, in the main thread's line; no copy kept beside it).
// Inline through a constant pointer (poll_timing.cc): no function of its own outside the ordered text.
extern const std::atomic<bool>* const g_poll_active;
inline bool PollActive() { return g_poll_active->load(std::memory_order_acquire); }
// Recomputes poll_slow_ns from sample_after_ns, ticker_parked and refresh_ns (after any of them changed).
void RefreshPollSlowThreshold();
bool PollRunningMessage(const hook::PluginContext* ctx, uint64_t now_ns, hook::Event* out);

}  // namespace jp::looper::internal

#endif  // JANKPROBE_LOOPER_TIMING_STATE_H_
