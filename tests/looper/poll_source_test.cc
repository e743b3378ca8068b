// The looper's poll source natively, without a JVM: this thread is the main thread and polls the libutils.so
// fixture's looper (epoll_wait through libutils.so's GOT), so every pollOnce(0) ends one gap and starts the
// next at the same instant. What is checked: the gap records reach the timeline through the drain, not from
// the main thread; a report or export drains first (a report raised right after a gap names it), so every
// gap is in exactly one record, also while the main thread polls and another thread reports; with
// looper.record_min_us, back-to-back short gaps become one `looper.run` record (count, busy time, the span
// from the first start to the last end) when they kept the thread busy for record_min_us in all, and are
// only counted (poll_folded_gaps) when not; a slow gap gets its own record after the run before it, and a
// wait longer than record_min_us ends a run; a full ring makes the main thread append the record itself.
// The pollOnce(0) gaps are ~0.1 us: a run that must be recorded spins a known time in each of its gaps
// (BusyGaps), each gap far under record_min_us and their sum well over it.
// On a loaded host the thread can be held off its CPU for tens of milliseconds inside a gap meant to be
// short, which then rightly gets a record of its own. The tests that depend on gaps staying short check
// each attempt against this thread's own clock reads around every poll (Attempt, Disturbance) and repeat a
// disturbed attempt; what an undisturbed attempt must show is asserted unchanged.
// The main thread's blocking waits (BlockingWaitTest, at the end): their results and gap marks through the
// hook, the raw syscall WaitSlow<0> makes when the target is libc's own epoll_wait (seen from the pc a
// signal interrupts), and another tool's hook in front of libc still called for them.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <ucontext.h>

#include <algorithm>
#include <memory>
#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "hook/clock.h"
#include "hook/config.h"
#include "hook/monitor.h"
#include "hook/report_sink.h"
#include "hook/timeline.h"
#include "hook/watchdog.h"
#include "jankprobe/plt.h"
#include "looper/dispatch_timing.h"
#include "looper/timing_state.h"
#include "tests/fixtures/libutils/native_looper.h"
#include "tests/proc_threads.h"

namespace jp {
namespace {

// The gaps' clock is within 50 us of CLOCK_MONOTONIC (hook/event_clock.h).
constexpr uint64_t kClockSlackNs = 50 * 1000;

// Ground truth for lateness the host caused: how long the thread has waited on a run queue while runnable
// (/proc/<tid>/schedstat, second field). 0 when the kernel does not keep the figure.
uint64_t RunDelayNs(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  uint64_t on_cpu = 0, waited = 0;
  if (!(in >> on_cpu >> waited)) return 0;
  return waited;
}

// Whether the thread is asleep (state S in /proc/<tid>/stat: blocked in a call such as epoll_wait).
bool Asleep(pid_t tid) { return jp::testing::ThreadState(tid) == 'S'; }

// The watchdog's stack captures (one per sampling deadline), timed on CLOCK_MONOTONIC.
struct CaptureLog {
  std::mutex mu;
  std::vector<uint64_t> at_ns;
  static long Capture(void* self, char* buf, size_t cap) {
    auto* log = static_cast<CaptureLog*>(self);
    const uint64_t now = hook::MonotonicNs();
    {
      std::lock_guard<std::mutex> lock(log->mu);
      log->at_ns.push_back(now);
    }
    return std::snprintf(buf, cap, "test stack");
  }
  // The first capture at or after t (0: none).
  uint64_t FirstFrom(uint64_t t) {
    std::lock_guard<std::mutex> lock(mu);
    uint64_t first = 0;
    for (uint64_t a : at_ns) {
      if (a >= t && (first == 0 || a < first)) first = a;
    }
    return first;
  }
};

using CreateFn = jpfx_looper* (*)();
using DestroyFn = void (*)(jpfx_looper*);
using PollFn = int (*)(jpfx_looper*, int);

class PollSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    void* lib = dlopen(JP_LIBUTILS_PATH, RTLD_NOW);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto create = reinterpret_cast<CreateFn>(dlsym(lib, "jpfx_looper_create"));
    poll_ = reinterpret_cast<PollFn>(dlsym(lib, "jpfx_looper_poll_once"));
    destroy_ = reinterpret_cast<DestroyFn>(dlsym(lib, "jpfx_looper_destroy"));
    ASSERT_TRUE(create && poll_ && destroy_);
    looper_ = create();
    ASSERT_NE(looper_, nullptr);
    std::string why;
    hook::Timeline::Options options;
    options.capacity = 4096;  // room for the full-ring test's gaps, each appended on its own
    timeline_ = hook::Timeline::Create(options, &why);
    ASSERT_TRUE(timeline_) << why;
    ASSERT_TRUE(watchdog_.Start(&why)) << why;
    ctx_.timeline = timeline_.get();
    ctx_.watchdog = &watchdog_;
    ctx_.reports = &reports_;
    ctx_.main_tid = static_cast<uint32_t>(hook::CurrentTid());
    looper::ActivateTiming(&ctx_, Config());
    ASSERT_TRUE(looper::StartPollSource("libutils.so", static_cast<uintptr_t>(pthread_self()), ctx_.main_tid, &why))
        << why;
    looper::DrainPollSource();  // nothing pending from before
    base_ = GapRecords(timeline_->Snapshot());
  }
  // Stops and restarts the source between attempts: the gap left open is forgotten, everything recorded
  // so far is set aside (base_), and the first poll of the next attempt starts its first gap.
  void Restart() {
    looper::StopPollSource();
    std::string why;
    ASSERT_TRUE(looper::StartPollSource("libutils.so", static_cast<uintptr_t>(pthread_self()), ctx_.main_tid, &why))
        << why;
    looper::DrainPollSource();
    base_ = GapRecords(timeline_->Snapshot());
    marks_.clear();
  }
  void TearDown() override {
    looper::StopPollSource();
    looper::DeactivateTiming();
    watchdog_.Stop();
    if (looper_) destroy_(looper_);
  }

  // looper.record_min_us for the rest of the test.
  void SetRecordMinUs(int32_t us) {
    Config c;
    c.looper.record_min_us = us;
    looper::RetuneTiming(c);
  }
  // The same for the runs' tests, with sampling from 5 s: their slow gaps (300 ms) take the main
  // thread's fast path and are never sampled, as 30 ms ones at a tenth of the scale were with the default
  // sample_after_ms (80).
  void SetRunRecordMinUs(int32_t us) {
    Config c;
    c.looper.record_min_us = us;
    c.looper.sample_after_ms = 5000;
    looper::RetuneTiming(c);
  }
  // The sampling check's tests: sample_after_ms and sample_interval_ms, no lag report in their gaps.
  void SetSampling(int32_t after_ms, int32_t interval_ms) {
    Config c;
    c.looper.sample_after_ms = after_ms;
    c.looper.sample_interval_ms = interval_ms;
    c.looper.lag_ms = 5000;
    c.looper.anr_ms = 10000;
    looper::RetuneTiming(c);
  }
  // Reports of this type kept so far.
  size_t CountReports(const std::string& type) const {
    size_t n = 0;
    for (const std::string& json : reports_.Kept()) n += json.find("\"type\":\"" + type + "\"") != std::string::npos;
    return n;
  }

  // A main-thread looper record written during the test, with its count (1 for a gap's own record).
  struct Rec {
    uint64_t ts = 0, dur = 0;
    std::string name;
    int64_t count = 1, busy_us = -1;
    uint64_t end() const { return ts + dur; }
  };
  std::vector<Rec> Recs(const hook::TimelineRead& read) const {
    std::vector<Rec> out;
    for (const hook::Event& e : read.events) {
      if (e.kind != hook::EventKind::kLooperMessage || e.tid != ctx_.main_tid || base_.count(e.ts_ns)) continue;
      Rec r;
      r.ts = e.ts_ns;
      r.dur = e.dur_ns;
      r.name = std::string(timeline_->strings().Lookup(e.name));
      for (const hook::EventArg& a : e.args) {
        const std::string_view key = timeline_->strings().Lookup(a.key);
        if (a.type == hook::ArgType::kInt && key == "count") r.count = a.as_int();
        if (a.type == hook::ArgType::kInt && key == "busy_us") r.busy_us = a.as_int();
      }
      out.push_back(r);
    }
    return out;
  }
  static int64_t SumCounts(const std::vector<Rec>& recs) {
    int64_t n = 0;
    for (const Rec& r : recs) n += r.count;
    return n;
  }
  // Records in start order never overlap: a gap held twice (a lent copy and the drained record, or two
  // runs) would.
  static std::string Overlap(std::vector<Rec> recs) {
    std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) { return a.ts < b.ts; });
    for (size_t i = 1; i < recs.size(); ++i) {
      if (recs[i].ts < recs[i - 1].end()) {
        return "[" + std::to_string(recs[i - 1].ts) + " +" + std::to_string(recs[i - 1].dur) + " x" +
               std::to_string(recs[i - 1].count) + "] overlaps [" + std::to_string(recs[i].ts) + " +" +
               std::to_string(recs[i].dur) + " x" + std::to_string(recs[i].count) + "]";
      }
    }
    return "";
  }
  void Spin(uint64_t ns) {
    const uint64_t t0 = hook::MonotonicNs();
    for (volatile int spin = 0; hook::MonotonicNs() - t0 < ns; spin = spin + 1) {
    }
  }

  // Distinct starts of the main thread's gap records.
  std::set<uint64_t> GapRecords(const hook::TimelineRead& read) const {
    std::set<uint64_t> starts;
    for (const hook::Event& e : read.events) {
      if (e.kind == hook::EventKind::kLooperMessage && e.tid == ctx_.main_tid) starts.insert(e.ts_ns);
    }
    return starts;
  }
  size_t CountGapRecords(const hook::TimelineRead& read) const {
    return static_cast<size_t>(std::count_if(read.events.begin(), read.events.end(), [&](const hook::Event& e) {
      return e.kind == hook::EventKind::kLooperMessage && e.tid == ctx_.main_tid && !base_.count(e.ts_ns);
    }));
  }
  // One poll, with this thread's clock read around it (marks_). The source reads its clock inside the
  // call: before the wait (the gap ends: in [call, ret - timeout]) and after it (the next one starts: in
  // [call + timeout, ret]), a wait of timeout_ms with nothing to read lasting at least that long. So the
  // gap a poll ends lasted at most (ret - timeout) - (previous call + previous timeout), and the wait
  // inside a poll at most ret - call: ground truth for what the host did to the gaps.
  // short_gap: the gap this poll ends is meant to stay under record_min_us (a slow gap on purpose: false).
  void Poll(int timeout_ms, bool short_gap = true) {
    PollMark m;
    m.timeout_ns = static_cast<uint64_t>(timeout_ms) * hook::kNsPerMs;
    m.short_gap = short_gap;
    m.call = hook::MonotonicNs();
    poll_(looper_, timeout_ms);
    m.ret = hook::MonotonicNs();
    marks_.push_back(m);
  }
  // n gaps end: the first poll ends the gap begun by the last one before (or starts the first).
  void Gaps(int n) {
    for (int i = 0; i < n; ++i) Poll(0);
  }
  // n gaps end, each after spinning spin_ns in it: each is at least spin_ns long (longer only if this
  // thread is preempted), so n of them are at least n * spin_ns of busy time.
  void BusyGaps(int n, uint64_t spin_ns) {
    for (int i = 0; i < n; ++i) {
      Spin(spin_ns);
      Poll(0);
    }
  }
  // What the host did to this attempt that the test did not mean (empty: nothing): a gap meant to be
  // short that may have lasted limit_ns or more, or a wait of under limit_ns (a poll with a timeout
  // shorter than that) that may have. The first mark's gap began before the attempt: not judged.
  std::string Disturbance(uint64_t limit_ns) const {
    for (size_t i = 1; i < marks_.size(); ++i) {
      const PollMark& prev = marks_[i - 1];
      const PollMark& m = marks_[i];
      const uint64_t gap_max = (m.ret - m.timeout_ns) - (prev.call + prev.timeout_ns) + kClockSlackNs;
      if (m.short_gap && gap_max >= limit_ns) {
        return "gap " + std::to_string(i) + " may have lasted " + std::to_string(gap_max) + " ns";
      }
    }
    for (size_t i = 0; i < marks_.size(); ++i) {
      const PollMark& m = marks_[i];
      if (m.timeout_ns != 0 && m.timeout_ns < limit_ns && m.ret - m.call + kClockSlackNs >= limit_ns) {
        return "wait " + std::to_string(i) + " may have lasted " + std::to_string(m.ret - m.call) + " ns";
      }
    }
    return "";
  }
  // Runs scenario until an attempt is undisturbed (Disturbance(limit_ns) empty), restarting the source
  // before each attempt. Only the host's doing is repeated: the assertions after it judge the undisturbed
  // attempt, whatever it shows.
  template <class Scenario>
  ::testing::AssertionResult Attempt(uint64_t limit_ns, Scenario scenario) {
    std::string last;
    for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
      Restart();  // each attempt from a freshly started source: its first poll starts its first gap
      scenario();
      last = Disturbance(limit_ns);
      if (last.empty()) return ::testing::AssertionSuccess();
      // In the log, so that a host that often disturbs the runs shows before it disturbs them all.
      std::printf("[   NOTE   ] attempt %d disturbed by the host: %s\n", attempt, last.c_str());
    }
    return ::testing::AssertionFailure() << "all " << kMaxAttempts << " attempts disturbed by the host; last: " << last;
  }
  static constexpr int kMaxAttempts = 40;
  static uint64_t FoldedGaps() { return looper::TimingCounters().poll_folded_gaps; }

  PollFn poll_ = nullptr;
  DestroyFn destroy_ = nullptr;
  jpfx_looper* looper_ = nullptr;
  std::unique_ptr<hook::Timeline> timeline_;
  hook::Watchdog watchdog_;
  hook::ReportSink reports_;
  hook::PluginContext ctx_;
  std::set<uint64_t> base_;
  struct PollMark {
    uint64_t call = 0, ret = 0, timeout_ns = 0;
    bool short_gap = true;
  };
  std::vector<PollMark> marks_;
};

// The runs' tests: record_min_us 100 ms, gaps spinning 10 ms (a tenth of it: only a 90 ms preemption makes
// one a record of its own, and Attempt repeats an attempt where the host may have done that), runs of 12 or
// more of them (at least 120 ms busy: over the threshold whatever the host does); a slow gap and a long
// wait are three times record_min_us. At a tenth of this scale (10 ms) a loaded 2-core host preempted the
// thread for over 9 ms in almost every 20-gap run.
constexpr int32_t kRunMinUs = 100 * 1000;
constexpr uint64_t kRunMinNs = uint64_t{kRunMinUs} * 1000;
constexpr uint64_t kBusyGapNs = 10 * hook::kNsPerMs;
constexpr uint64_t kSlowGapNs = 3 * kRunMinNs;
constexpr int kLongWaitMs = 3 * kRunMinUs / 1000;

TEST_F(PollSourceTest, EveryGapIsRecordedByTheDrainOrByAReportBeforeIt) {
  SetRecordMinUs(0);  // every gap its own record
  poll_(looper_, 0);  // the first gap starts
  Gaps(50);           // 50 gaps end
  // Nothing in the timeline yet (the watchdog's periodic drain is the looper monitor's, absent here)...
  EXPECT_EQ(CountGapRecords(timeline_->Snapshot()), 0u);
  // ... a report's snapshot drains first: 50 records, once each, and they stay in the timeline.
  const hook::TimelineRead lent = reports_.SnapshotWithInFlight(*timeline_, hook::MonotonicNs(), false);
  EXPECT_EQ(CountGapRecords(lent), 50u);
  EXPECT_EQ(GapRecords(lent).size() - base_.size(), 50u) << "a gap held twice would count twice above";
  EXPECT_EQ(CountGapRecords(timeline_->Snapshot()), 50u);
  looper::DrainPollSource();
  EXPECT_EQ(CountGapRecords(timeline_->Snapshot()), 50u);
  for (const Rec& r : Recs(timeline_->Snapshot())) EXPECT_EQ(r.name, "dispatch (poll: no message identity)");
}

TEST_F(PollSourceTest, BackToBackShortGapsBecomeOneRunRecord) {
  SetRunRecordMinUs(kRunMinUs);
  looper::LooperCounters c0;
  uint64_t t0 = 0, t1 = 0;
  ASSERT_TRUE(Attempt(kRunMinNs, [&] {
    c0 = looper::TimingCounters();
    t0 = hook::MonotonicNs();
    Poll(0);
    BusyGaps(20, kBusyGapNs);
    t1 = hook::MonotonicNs();
    looper::DrainPollSource();
  }));
  const std::vector<Rec> recs = Recs(timeline_->Snapshot());
  ASSERT_EQ(recs.size(), 1u) << "20 gaps of ~1 ms under record_min_us (10 ms), 20 ms busy in all";
  const Rec& run = recs[0];
  EXPECT_EQ(run.name, "looper.run");
  EXPECT_EQ(run.count, 20);
  EXPECT_GE(run.busy_us * 1000 + kClockSlackNs, 20 * kBusyGapNs);
  // The span: from the first gap's start (after t0) to the last one's end (before t1).
  EXPECT_GE(run.ts + kClockSlackNs, t0);
  EXPECT_LE(run.end(), t1 + kClockSlackNs);
  EXPECT_GT(run.dur, 0u);
  // pollOnce(0) starts the next gap where the last ended: the busy time is the whole span.
  EXPECT_EQ(run.busy_us, static_cast<int64_t>(run.dur / 1000)) << run.dur;
  const looper::LooperCounters c = looper::TimingCounters();
  EXPECT_EQ(c.poll_run_records - c0.poll_run_records, 1u);
  EXPECT_EQ(c.poll_run_gaps - c0.poll_run_gaps, 20u);
  EXPECT_EQ(c.poll_folded_gaps - c0.poll_folded_gaps, 0u);
}

TEST_F(PollSourceTest, ARunShorterThanRecordMinIsFoldedIntoCounters) {
  SetRunRecordMinUs(kRunMinUs);
  looper::LooperCounters c0, c1;
  size_t recs1 = 0;
  ASSERT_TRUE(Attempt(kRunMinNs, [&] {
    c0 = looper::TimingCounters();
    Poll(0);
    Gaps(20);  // 20 gaps of ~0.1 us: a run microseconds busy
    looper::DrainPollSource();
    recs1 = Recs(timeline_->Snapshot()).size();
    c1 = looper::TimingCounters();
    // A short run ended by a wait is folded; the busy run after the wait is recorded, holding its gaps only.
    Gaps(5);   // the gap begun before the drain and 4 more
    Poll(kLongWaitMs);  // ends the 6th, waits (over record_min_us: the run ends), starts the 7th
    BusyGaps(12, kBusyGapNs);
    looper::DrainPollSource();
  }));
  EXPECT_EQ(recs1, 0u) << "a short run leaves no record";
  EXPECT_EQ(c1.poll_folded_gaps - c0.poll_folded_gaps, 20u);
  EXPECT_EQ(c1.poll_run_records - c0.poll_run_records, 0u);
  const std::vector<Rec> recs = Recs(timeline_->Snapshot());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].name, "looper.run");
  EXPECT_EQ(recs[0].count, 12);
  const looper::LooperCounters c = looper::TimingCounters();
  EXPECT_EQ(c.poll_folded_gaps - c0.poll_folded_gaps, 26u);
  EXPECT_EQ(c.poll_run_records - c0.poll_run_records, 1u);
  EXPECT_EQ(c.poll_run_gaps - c0.poll_run_gaps, 12u);
}

TEST_F(PollSourceTest, ASlowGapGetsItsOwnRecordAfterTheRunBeforeIt) {
  SetRunRecordMinUs(kRunMinUs);
  ASSERT_TRUE(Attempt(kRunMinNs, [&] {
    Poll(0);
    BusyGaps(12, kBusyGapNs);
    Spin(kSlowGapNs);           // the 13th gap, over record_min_us
    Poll(0, /*short_gap=*/false);  // it ends
    BusyGaps(12, kBusyGapNs);      // and 12 short ones after it
    looper::DrainPollSource();
  }));
  const std::vector<Rec> recs = Recs(timeline_->Snapshot());  // in append order
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].name, "looper.run");
  EXPECT_EQ(recs[0].count, 12);
  EXPECT_EQ(recs[1].name, "dispatch (poll: no message identity)");
  EXPECT_EQ(recs[1].count, 1);
  EXPECT_GE(recs[1].dur + kClockSlackNs, kSlowGapNs);
  EXPECT_EQ(recs[2].name, "looper.run");
  EXPECT_EQ(recs[2].count, 12);
  // Back to back, in time order: each starts where the one before ended.
  EXPECT_EQ(recs[0].end(), recs[1].ts);
  EXPECT_EQ(recs[1].end(), recs[2].ts);
}

TEST_F(PollSourceTest, AWaitLongerThanRecordMinEndsTheRun) {
  SetRunRecordMinUs(kRunMinUs);
  ASSERT_TRUE(Attempt(kRunMinNs, [&] {
    Poll(0);
    BusyGaps(11, kBusyGapNs);
    Spin(kBusyGapNs);
    Poll(kLongWaitMs);  // ends the 12th gap, waits (nothing to read), starts the 13th
    BusyGaps(12, kBusyGapNs);
    looper::DrainPollSource();
  }));
  std::vector<Rec> recs = Recs(timeline_->Snapshot());
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].count, 12);
  EXPECT_EQ(recs[1].count, 12);
  EXPECT_GE(recs[1].ts - recs[0].end() + kClockSlackNs, uint64_t{kLongWaitMs} * hook::kNsPerMs);

  // A wait shorter than record_min_us (here 200 ms; gaps of 20 ms, 220 ms busy; a wait of 30 ms) stays
  // inside the run.
  constexpr int kShortWaitMs = 30;
  SetRunRecordMinUs(2 * kRunMinUs);
  ASSERT_TRUE(Attempt(2 * kRunMinNs, [&] {
    Poll(0);  // starts the first gap
    Poll(0);  // ends it
    BusyGaps(5, 2 * kBusyGapNs);
    Spin(2 * kBusyGapNs);
    Poll(kShortWaitMs);
    BusyGaps(5, 2 * kBusyGapNs);
    looper::DrainPollSource();
  }));
  recs = Recs(timeline_->Snapshot());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].count, 12);  // the gap the second poll ended, the 5, the one before the wait, the 5
  EXPECT_GE(recs[0].dur + kClockSlackNs, uint64_t{kShortWaitMs} * hook::kNsPerMs);
  EXPECT_LE(recs[0].busy_us * 1000 + kShortWaitMs * hook::kNsPerMs, recs[0].dur + kClockSlackNs)
      << "the wait is not busy time";
}

TEST_F(PollSourceTest, AReportBetweenDrainsSeesThePartialRunOnce) {
  SetRunRecordMinUs(kRunMinUs);
  std::vector<Rec> first, second, drained, recs;
  ASSERT_TRUE(Attempt(kRunMinNs, [&] {
    Poll(0);
    BusyGaps(20, kBusyGapNs);
    first = Recs(reports_.SnapshotWithInFlight(*timeline_, hook::MonotonicNs(), false));
    BusyGaps(20, kBusyGapNs);  // the run goes on after the report: its second half is a record of its own
    second = Recs(reports_.SnapshotWithInFlight(*timeline_, hook::MonotonicNs(), false));
    looper::DrainPollSource();
    drained = Recs(timeline_->Snapshot());
    // A report that also asks for the running gap gets it once, after the last finished one (a slow one:
    // alone under record_min_us it would be folded, not recorded).
    Spin(12 * kBusyGapNs);
    Poll(0, /*short_gap=*/false);
    recs = Recs(reports_.SnapshotWithInFlight(*timeline_, hook::MonotonicNs(), true));
  }));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].count, 20);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].count + second[1].count, 40);
  EXPECT_EQ(Overlap(second), "");
  ASSERT_EQ(drained.size(), 2u) << "the drain found nothing left to append";
  EXPECT_EQ(drained[0].ts, second[0].ts);
  EXPECT_EQ(drained[1].end(), second[1].end());
  ASSERT_EQ(recs.size(), 4u);  // the two runs, the slow gap the poll ended, the one running
  EXPECT_EQ(SumCounts(recs), 42);
  EXPECT_EQ(Overlap(recs), "");
}

TEST_F(PollSourceTest, ReportsWhileTheMainThreadPollsSeeEveryGapOnce) {
  // The main thread polls (with a drain every half ring, as the watchdog's, so that no gap takes the
  // full-ring path) while another thread takes report snapshots, each of which drains too: every snapshot holds
  // each gap at most once, and in the end each gap is in exactly one record or counted as folded.
  // record_min_us 20: a drain's run of ~256 gaps (~0.3 us each) is recorded, the pieces a snapshot cuts
  // off may be folded, a preempted gap gets its own record; the records stay well under the timeline's
  // 4096.
  constexpr int kMaxSnapshots = 1000;
  SetRecordMinUs(20);
  const uint64_t folded0 = FoldedGaps();
  const uint64_t ring_full0 = looper::TimingCounters().poll_ring_full;  // the counters are the process's
  std::atomic<bool> done{false};
  std::atomic<int> snapshots{0};
  std::atomic<int64_t> polled{0};
  std::string failure;
  std::thread reporter([&] {
    while (!done.load() && snapshots.load() < kMaxSnapshots) {
      const std::vector<Rec> recs = Recs(reports_.SnapshotWithInFlight(*timeline_, hook::MonotonicNs(), false));
      // Read after the snapshot: every gap in it ended before, at most one in a poll not yet counted.
      const int64_t bound = polled.load() + 1;
      const std::string overlap = Overlap(recs);
      if (!overlap.empty() && failure.empty()) failure = overlap;
      if (SumCounts(recs) > bound && failure.empty()) failure = "more gaps than polled";
      snapshots.fetch_add(1);
    }
  });
  poll_(looper_, 0);
  int64_t gaps = 0;
  const uint64_t t0 = hook::MonotonicNs();
  // Until the reporter took 100 snapshots (it needs a moment to start), at least 20000 gaps, in batches
  // of 256 each followed by a drain. A batch starts once the reporter finished a snapshot since the last
  // one started, so that a snapshot runs beside every batch and the records stay a few per batch however
  // slowly the host runs the reporter: unpaced, a starved reporter (a loaded host, ASan) let the main
  // thread append a run per 256 gaps for seconds, and each snapshot, longer for the records, slower still.
  const uint64_t give_up = t0 + 60 * hook::kNsPerSec;
  while ((gaps < 20000 || snapshots.load() < 100) && hook::MonotonicNs() < give_up) {
    const int seen = snapshots.load();
    for (int i = 0; i < 256; ++i) {
      poll_(looper_, 0);
      polled.store(++gaps);
    }
    looper::DrainPollSource();
    while (snapshots.load() == seen && snapshots.load() < kMaxSnapshots && hook::MonotonicNs() < give_up) {
      std::this_thread::yield();
    }
  }
  done.store(true);
  reporter.join();
  EXPECT_EQ(failure, "");
  EXPECT_GE(snapshots.load(), 100);
  looper::DrainPollSource();
  const hook::TimelineRead read = timeline_->Snapshot();
  const std::vector<Rec> recs = Recs(read);
  EXPECT_EQ(SumCounts(recs) + static_cast<int64_t>(FoldedGaps() - folded0), gaps)
      << recs.size() << " records, " << FoldedGaps() - folded0 << " folded";
  EXPECT_EQ(read.lost, 0u) << "the timeline wrapped: records lost, not folded";
  EXPECT_EQ(Overlap(recs), "");
  EXPECT_EQ(looper::TimingCounters().poll_ring_full - ring_full0, 0u);
}

TEST_F(PollSourceTest, AReportRightAfterAGapNamesItBeforeAnyDrain) {
  poll_(looper_, 0);
  const uint64_t t0 = hook::MonotonicNs();
  Spin(3 * hook::kNsPerMs);
  poll_(looper_, 0);  // the 3 ms gap ends
  hook::Report r;
  r.type = "touch_lag";
  r.monitor = "input";
  r.ts_ns = t0;
  r.dur_ns = 3 * hook::kNsPerMs;
  ASSERT_TRUE(reports_.Submit(r, timeline_.get(), ctx_.main_tid));
  const std::string json = reports_.Kept().back();
  EXPECT_NE(json.find("\"blocked_by\":[{"), std::string::npos) << json;
  EXPECT_NE(json.find("looper.message"), std::string::npos) << json;
}

TEST_F(PollSourceTest, AFullRingLosesNoRecord) {
  // Several times more gaps than the ring holds, with no drain in between: the main thread appends the
  // overflow itself, one record per gap; the drain then appends the ring's.
  constexpr int kGaps = 3000;
  SetRecordMinUs(0);
  poll_(looper_, 0);
  Gaps(kGaps);
  EXPECT_EQ(CountGapRecords(reports_.SnapshotWithInFlight(*timeline_, hook::MonotonicNs(), false)), size_t{kGaps});
  EXPECT_GT(looper::TimingCounters().poll_ring_full, 0u) << "the ring never filled: not the path under test";
  looper::DrainPollSource();
  EXPECT_EQ(CountGapRecords(timeline_->Snapshot()), size_t{kGaps});

  // With runs: the overflow's own records, the drained run (or its gaps folded: ~512 gaps of ~0.1 us may
  // stay under 1 ms busy) still hold each gap once.
  for (const Rec& r : Recs(timeline_->Snapshot())) base_.insert(r.ts);
  SetRecordMinUs(1000);
  const uint64_t folded0 = FoldedGaps();
  Gaps(kGaps);
  looper::DrainPollSource();
  const std::vector<Rec> recs = Recs(timeline_->Snapshot());
  EXPECT_EQ(SumCounts(recs) + static_cast<int64_t>(FoldedGaps() - folded0), kGaps);
  EXPECT_EQ(Overlap(recs), "");
}

TEST_F(PollSourceTest, ALaggingGapNeverSampledIsReportedByThePeriodicDrain) {
  // lag_ms 5, sampling only from 80 ms: the 8 ms gap is never sampled, and the main thread arms nothing
  // for it; the periodic drain (the looper monitor's check, called here) queues and reports it.
  Config c;
  c.looper.lag_ms = 5;
  c.looper.anr_ms = 5000;
  looper::RetuneTiming(c);
  poll_(looper_, 0);
  Spin(8 * hook::kNsPerMs);
  poll_(looper_, 0);
  looper::DrainPollSource();
  ASSERT_EQ(CountReports("message_lag"), 1u);
  const std::string json = reports_.Kept().back();
  EXPECT_NE(json.find("\"source\":\"poll\""), std::string::npos) << json;
}

TEST_F(PollSourceTest, ASampledLaggingGapIsReportedAtItsNextSample) {
  // Sampled from 10 ms every 10 ms, lagging from 30 ms: the 40 ms gap's next sample finds it over and
  // reports it, with no drain from here; its CPU is counted from the first sample.
  Config c;
  c.looper.lag_ms = 30;
  c.looper.anr_ms = 5000;
  c.looper.sample_after_ms = 10;
  c.looper.sample_interval_ms = 10;
  looper::RetuneTiming(c);
  poll_(looper_, 0);
  Spin(40 * hook::kNsPerMs);
  // The gap ends and the main thread waits (20 ms at a time, nothing to read): no later gap runs long
  // enough to be sampled, so only the ended gap's own next sample can report it.
  const uint64_t t0 = hook::MonotonicNs();
  while (CountReports("message_lag") == 0 && hook::MonotonicNs() - t0 < 2 * hook::kNsPerSec) poll_(looper_, 20);
  ASSERT_EQ(CountReports("message_lag"), 1u) << "not reported within 2 s";
  const std::string json = reports_.Kept().back();
  EXPECT_NE(json.find("\"cpu_ms_since_first_sample\""), std::string::npos) << json;
  EXPECT_GT(looper::TimingCounters().samples, 0u);
}

TEST_F(PollSourceTest, AParkedTickerIsResumedByAGapOfAQuarterFrameOnly) {
  SetRecordMinUs(0);
  const uint64_t quarter = 16666667 / 4;  // no frames seen: the default 60 Hz interval
  looper::SetTickerParked(true);
  EXPECT_EQ(looper::internal::g.poll_slow_ns.load(), quarter) << "parked: a quarter frame takes the slow path";
  // A short gap and a 6 ms one; whether each resumed the ticker is checked against its recorded length
  // (a busy host can stretch the short one).
  for (uint64_t spin : {1 * hook::kNsPerMs, 6 * hook::kNsPerMs}) {
    looper::SetTickerParked(true);
    poll_(looper_, 0);
    Spin(spin);
    poll_(looper_, 0);
    const bool parked = looper::internal::g.ticker_parked.load();
    looper::DrainPollSource();
    const std::vector<Rec> recs = Recs(timeline_->Snapshot());
    ASSERT_FALSE(recs.empty());
    for (const Rec& r : recs) base_.insert(r.ts);
    std::string all;
    for (const Rec& r : recs) all += " " + std::to_string(r.dur);
    EXPECT_EQ(parked, recs.back().dur < quarter) << "gap of " << recs.back().dur << " ns; all:" << all;
    if (spin > quarter) {
      EXPECT_FALSE(parked) << all;
    }
  }
  // The watchdog's resume puts the slow-path threshold back to sample_after_ms (80 ms by default).
  const uint64_t t0 = hook::MonotonicNs();
  while (looper::internal::g.poll_slow_ns.load() != 80 * hook::kNsPerMs && hook::MonotonicNs() - t0 < hook::kNsPerSec) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(looper::internal::g.poll_slow_ns.load(), 80 * hook::kNsPerMs);
}

TEST_F(PollSourceTest, GapsAreTimedAgainAfterARestart) {
  SetRecordMinUs(0);
  poll_(looper_, 0);
  Gaps(10);
  looper::StopPollSource();
  Gaps(10);  // through libc directly: not timed
  std::string why;
  ASSERT_TRUE(looper::StartPollSource("libutils.so", static_cast<uintptr_t>(pthread_self()), ctx_.main_tid, &why)) << why;
  const uint64_t gaps0 = looper::TimingCounters().poll_gaps;
  poll_(looper_, 0);  // starts a gap (the one open at the stop was forgotten)
  Gaps(10);
  EXPECT_EQ(looper::TimingCounters().poll_gaps - gaps0, 10u);
  looper::DrainPollSource();
  EXPECT_EQ(CountGapRecords(timeline_->Snapshot()), 20u);
}

// One gap word: what the idle wrapper reads (jni::IdleWords::gap_start, its buffer's long 2) is the start
// the poll source ends the gap from, so the gap's record starts exactly there; it is within the clock's
// bound of clock_gettime around the call that started the gap (the main thread reads its own copy of the
// event clock's anchor), with bit 0 set after a blocking wait (no idle pass may start there) and clear
// after a look that found nothing ready; a wait clears it.
TEST_F(PollSourceTest, TheIdleWrappersGapWordIsTheGapsStartWithinTheClockBound) {
  SetRecordMinUs(0);
  ASSERT_EQ(&looper::internal::PollRunning(), &jni::IdleSharedWords().gap_start);
  struct Seen {
    uint64_t word, call, ret;
    bool after_wait;
  };
  std::vector<Seen> seen;
  for (int i = 0; i < 40; ++i) {
    const bool wait = i % 4 == 0;
    const uint64_t call = hook::MonotonicNs();
    poll_(looper_, wait ? 1 : 0);  // a 1 ms wait with nothing to read, or a look that finds nothing
    const uint64_t ret = hook::MonotonicNs();
    seen.push_back({jni::IdleSharedWords().gap_start.load(std::memory_order_relaxed), call, ret, wait});
  }
  poll_(looper_, 0);  // ends the last gap
  looper::DrainPollSource();
  const std::set<uint64_t> starts = GapRecords(timeline_->Snapshot());
  for (size_t i = 0; i < seen.size(); ++i) {
    const Seen& s = seen[i];
    ASSERT_NE(s.word, 0u) << "poll " << i << ": no gap published after it returned";
    EXPECT_EQ((s.word & jni::kGapNotAnIdleStart) != 0, s.after_wait) << "poll " << i;
    // The gap starts when the call returns: after the wait inside it, before the call's return.
    const uint64_t earliest = s.call + (s.after_wait ? hook::kNsPerMs : 0);
    EXPECT_GE(s.word + kClockSlackNs, earliest) << "poll " << i;
    EXPECT_LE(s.word, s.ret + kClockSlackNs) << "poll " << i;
    EXPECT_EQ(starts.count(s.word), 1u) << "poll " << i << ": no gap record starts at the word the wrapper saw";
  }
  // A wait clears the word on the way in: read by another thread while this one blocks (a read counts when
  // this thread was asleep in its only blocking call, by the kernel's state of it, both before and after
  // the read; an attempt where the host kept the reader off its CPU for the whole wait is repeated).
  bool judged = false;
  const pid_t main_tid = static_cast<pid_t>(ctx_.main_tid);
  auto asleep = [main_tid] { return Asleep(main_tid); };
  for (int attempt = 0; attempt < 5 && !judged; ++attempt) {
    std::atomic<bool> calling{false}, returned{false};
    uint64_t nonzero_inside = 0, zero_inside = 0;
    std::thread watcher([&] {
      while (!returned.load()) {
        if (!calling.load() || !asleep()) continue;
        const uint64_t w = jni::IdleSharedWords().gap_start.load(std::memory_order_relaxed);
        if (!asleep() || returned.load()) continue;
        ++(w == 0 ? zero_inside : nonzero_inside);
      }
    });
    calling = true;
    poll_(looper_, 50);
    returned = true;
    watcher.join();
    if (zero_inside + nonzero_inside == 0) continue;
    judged = true;
    EXPECT_EQ(nonzero_inside, 0u) << "the gap word was set while the main thread waited";
  }
  EXPECT_TRUE(judged) << "the reader never ran during the main thread's waits";
}

// The sampling check chain (poll_timing.cc, ContinueChecks). A main thread that works between short blocking
// waits (a message, then a wait of 1 ms, as an app's main thread between vsyncs and touches) keeps one check
// chain going, run by the watchdog: the main thread arms it once, at the first gap after the start (when a
// check that found the thread waiting ended the chain, the gap after the next wait armed it again: about
// once per check period, 8 or 9 times here). Undisturbed (Attempt: no gap and no 1 ms wait reached half of
// sample_after_ms), no check period can pass without a gap ending in it, so the chain never ends; the
// watchdog's checks are at least half a period apart (a check moves to the running gap's start +
// sample_after_ms, and no gap runs half of it).
constexpr int32_t kCheckAfterMs = 40;
constexpr uint64_t kCheckAfterNs = uint64_t{kCheckAfterMs} * hook::kNsPerMs;

TEST_F(PollSourceTest, ABusyMainThreadWithShortWaitsArmsTheCheckOnce) {
  SetSampling(kCheckAfterMs, kCheckAfterMs);
  constexpr int kWaits = 300;
  looper::LooperCounters c0, c1;
  uint64_t fired0 = 0, fired1 = 0, t0 = 0, t1 = 0;
  ASSERT_TRUE(Attempt(kCheckAfterNs / 2, [&] {
    c0 = looper::TimingCounters();
    fired0 = watchdog_.stats().deadlines_fired;
    t0 = hook::MonotonicNs();
    for (int i = 0; i < kWaits; ++i) {
      Poll(0);  // ends a gap (the first call: starts the first one), starts the next
      Poll(1);  // ends it, waits 1 ms (nothing to read), starts the next
    }
    t1 = hook::MonotonicNs();
    c1 = looper::TimingCounters();
    fired1 = watchdog_.stats().deadlines_fired;
  }));
  EXPECT_EQ(c1.poll_gaps - c0.poll_gaps, uint64_t{2 * kWaits - 1}) << "every gap timed";
  EXPECT_EQ(c1.poll_check_arms - c0.poll_check_arms, 1u)
      << "the main thread armed the check after " << c1.poll_check_arms - c0.poll_check_arms << " of " << kWaits
      << " waits";
  const uint64_t max_checks = (t1 - t0) / (kCheckAfterNs / 2) + 2;
  EXPECT_LE(c1.poll_checks - c0.poll_checks, max_checks) << "in " << (t1 - t0) / hook::kNsPerMs << " ms";
  EXPECT_LE(fired1 - fired0, max_checks) << "the watchdog woke for more than the chain's checks";
  EXPECT_GE(c1.poll_checks - c0.poll_checks, 1u) << "in " << (t1 - t0) / hook::kNsPerMs << " ms";
}

// An idle main thread (one long wait) ends the chain: after the check that sees the last gaps and one
// quiet period, the watchdog gets no check deadline; the next gap starts a chain again.
TEST_F(PollSourceTest, AnIdleMainThreadEndsTheCheckChain) {
  constexpr int32_t kAfterMs = 20;
  constexpr int kIdleMs = 20 * kAfterMs;
  SetSampling(kAfterMs, kAfterMs);
  for (int i = 0; i < 50; ++i) {
    Poll(0);
    Poll(1);
  }
  const looper::LooperCounters c0 = looper::TimingCounters();
  const uint64_t fired0 = watchdog_.stats().deadlines_fired;
  const pid_t wd = watchdog_.thread_tid();
  const uint64_t delay0 = RunDelayNs(wd);
  Poll(kIdleMs);  // ends the gap, waits, and the gap it starts on return finds the chain ended
  const uint64_t delay = RunDelayNs(wd) - delay0;
  const looper::LooperCounters c1 = looper::TimingCounters();
  // At most: a check that found the last gap running (moved to its start + 20 ms), the one that saw it
  // ended (moved by a period), the quiet one that ends the chain. Never one per period of the wait (20).
  EXPECT_LE(c1.poll_checks - c0.poll_checks, 3u);
  EXPECT_LE(watchdog_.stats().deadlines_fired - fired0, 3u);
  // The chain had ended when the wait returned, unless the host kept the watchdog from its three checks:
  // then the gap after the wait may still have found it going.
  const uint64_t chain_end_ns = 3 * uint64_t{kAfterMs} * hook::kNsPerMs + delay + 5 * hook::kNsPerMs;
  if (chain_end_ns < uint64_t{kIdleMs} * hook::kNsPerMs) {
    EXPECT_EQ(c1.poll_check_arms - c0.poll_check_arms, 1u) << "the gap after the wait starts the chain again";
  } else {
    std::printf("[   NOTE   ] the watchdog waited %llu ms for a CPU: the chain's end not checked\n",
                static_cast<unsigned long long>(delay / hook::kNsPerMs));
  }
}

// A long gap after a busy stretch (the chain going, its next check anywhere in the coming period) is still
// sampled at its start + sample_after_ms: the chain's check moves to the gap's own due time when it finds it
// running. Three times, after busy stretches of different lengths (the chain's phase differs each time):
// sampling at the chain's period instead would be up to a period late, or early.
TEST_F(PollSourceTest, ALongGapAfterABusyStretchIsSampledAtItsStartPlusSampleAfter) {
  CaptureLog log;
  watchdog_.SetStackCapture(&CaptureLog::Capture, &log);
  SetSampling(kCheckAfterMs, kCheckAfterMs / 2);
  const pid_t wd = watchdog_.thread_tid();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20 + 13 * round; ++i) {
      Poll(0);
      Poll(1);
    }
    const uint64_t delay0 = RunDelayNs(wd);
    const uint64_t call = hook::MonotonicNs();
    poll_(looper_, 1);  // the long gap starts on its return: in [call + 1 ms, ret]
    const uint64_t ret = hook::MonotonicNs();
    Spin(5 * kCheckAfterNs / 2);
    const uint64_t samples0 = looper::TimingCounters().samples;
    poll_(looper_, 0);  // it ends
    const uint64_t delay = RunDelayNs(wd) - delay0;
    const uint64_t start_lo = call + hook::kNsPerMs;
    const uint64_t first = log.FirstFrom(start_lo);
    ASSERT_NE(first, 0u) << "round " << round << ": the long gap was never sampled";
    EXPECT_GT(samples0, 0u);
    EXPECT_GE(first + kClockSlackNs, start_lo + kCheckAfterNs) << "round " << round << ": sampled early";
    const uint64_t tolerance = 5 * hook::kNsPerMs + delay;
    EXPECT_LE(first, ret + kCheckAfterNs + tolerance)
        << "round " << round << ": sampled " << (first - ret - kCheckAfterNs) / 1000 << " us after its due time"
        << " (the watchdog waited " << delay / 1000 << " us for a CPU)";
  }
  watchdog_.SetStackCapture(nullptr, nullptr);
}

// ---- the main thread's blocking wait: the raw syscall when the target is libc's own (WaitSlow<0>) ----
// Which code the main thread sleeps in is seen from a signal that interrupts the wait: its handler reads
// the interrupted pc from the signal frame (the instruction after the syscall) and the module holding it
// is the one that made the call: ours (the poll source's raw call, the module of StartPollSource) when
// WaitSlow<0> made the syscall, libc when libc's epoll_wait did.

std::atomic<uintptr_t> g_interrupted_pc{0};
void RecordInterruptedPc(int, siginfo_t*, void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  g_interrupted_pc.store(static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]), std::memory_order_relaxed);
#elif defined(__aarch64__)
  g_interrupted_pc.store(static_cast<uintptr_t>(uc->uc_mcontext.pc), std::memory_order_relaxed);
#else
  (void)uc;
#endif
}

// The module (its load base) that holds addr; null when none.
const void* ModuleOf(const void* addr) {
  Dl_info info{};
  return dladdr(addr, &info) != 0 ? info.dli_fbase : nullptr;
}
const void* LibcModule() {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) return nullptr;
  const void* base = ModuleOf(dlsym(libc, "epoll_wait"));
  dlclose(libc);
  return base;
}
// Whether epoll_wait as the process resolves it is libc's own (false under a sanitizer's interceptor):
// worked out here from the loader, not from the poll source's state.
bool EpollWaitIsLibcsOwn() {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) return false;
  const bool own = dlsym(libc, "epoll_wait") == dlsym(RTLD_DEFAULT, "epoll_wait");
  dlclose(libc);
  return own;
}

class BlockingWaitTest : public PollSourceTest {
 protected:
  // One poll of up to 2 s that another thread interrupts with SIGUSR1 once this thread sleeps (its state
  // in /proc is S: its only blocking call is the wait; a futex on the way in, were there one, would also
  // be S, but the wait then runs its full 2 s and the attempt is repeated). Returns the pc the signal
  // interrupted, 0 when no attempt was interrupted in its wait. The poll's result is the fixture's: WAKE
  // for an epoll_wait that failed with errno EINTR (ERROR for any other errno), TIMEOUT when not interrupted.
  uintptr_t InterruptedWaitPc(int* result) {
    struct sigaction sa {}, old {};
    sa.sa_sigaction = RecordInterruptedPc;
    sa.sa_flags = SA_SIGINFO;  // no SA_RESTART (epoll never restarts anyway)
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
    const pid_t main_tid = static_cast<pid_t>(ctx_.main_tid);
    auto asleep = [main_tid] { return Asleep(main_tid); };
    uintptr_t pc = 0;
    for (int attempt = 0; attempt < 5 && pc == 0; ++attempt) {
      g_interrupted_pc.store(0);
      std::atomic<bool> returned{false};
      const pthread_t self = pthread_self();
      std::thread sender([&] {
        while (!returned.load() && !asleep()) std::this_thread::yield();
        if (!returned.load()) pthread_kill(self, SIGUSR1);
      });
      *result = poll_(looper_, 2000);
      returned = true;
      sender.join();
      if (*result == JPFX_POLL_WAKE) pc = g_interrupted_pc.load();
    }
    sigaction(SIGUSR1, &old, nullptr);
    return pc;
  }
  void* Sym(const char* name) {
    void* lib = dlopen(JP_LIBUTILS_PATH, RTLD_NOW | RTLD_NOLOAD);
    void* fn = lib ? dlsym(lib, name) : nullptr;
    if (lib) dlclose(lib);
    return fn;
  }
};

// The main thread's blocking waits through the hook: a wake's event, a timeout and a signal come back as
// the fixture's looper expects (the signal as errno EINTR: the raw call sets errno from the kernel's
// -EINTR), and each wait ends the gap before it and starts one at its return, marked "after a wait".
TEST_F(BlockingWaitTest, BlockingWaitsReturnTheirResultsAndMarkGaps) {
  SetRecordMinUs(0);
  using WakeFn = void (*)(jpfx_looper*);
  const auto wake = reinterpret_cast<WakeFn>(Sym("jpfx_looper_wake"));
  ASSERT_NE(wake, nullptr);
  const uint64_t gaps0 = looper::TimingCounters().poll_gaps;
  poll_(looper_, 0);  // the first gap starts
  wake(looper_);
  EXPECT_EQ(poll_(looper_, -1), JPFX_POLL_WAKE) << "the wake's event";
  const uint64_t after_wake = jni::IdleSharedWords().gap_start.load();
  EXPECT_NE(after_wake, 0u);
  EXPECT_NE(after_wake & jni::kGapNotAnIdleStart, 0u) << "a gap after a wait: no idle pass starts there";
  const uint64_t call = hook::MonotonicNs();
  EXPECT_EQ(poll_(looper_, 2), JPFX_POLL_TIMEOUT) << "nothing to read";
  const uint64_t after_timeout = jni::IdleSharedWords().gap_start.load();
  EXPECT_GE(after_timeout + kClockSlackNs, call + 2 * hook::kNsPerMs) << "the gap starts after the 2 ms wait";
  EXPECT_NE(after_timeout & jni::kGapNotAnIdleStart, 0u);
  int result = 0;
  InterruptedWaitPc(&result);
  EXPECT_EQ(result, JPFX_POLL_WAKE) << "a signal: EINTR (ERROR: errno was not EINTR; TIMEOUT: never interrupted)";
  const uint64_t gaps = looper::TimingCounters().poll_gaps - gaps0;
  // Ended: the first poll's gap (at the wake's wait), the wake's (at the timeout's), the timeout's (at the
  // signal's wait, or the first of its attempts); each interrupted attempt's wait one more.
  EXPECT_GE(gaps, 3u);
  looper::DrainPollSource();
  const std::set<uint64_t> starts = GapRecords(timeline_->Snapshot());
  EXPECT_EQ(starts.count(after_wake), 1u) << "the gap the wake started was recorded";
  EXPECT_EQ(starts.count(after_timeout), 1u) << "the gap the timeout started was recorded";
}

// With epoll_wait resolving to libc's own, the main thread sleeps in the poll source's raw syscall: the
// interrupted pc is in our module. Under an interceptor (a sanitizer's), the target is called and the
// sleep is in libc, under the interceptor.
TEST_F(BlockingWaitTest, TheMainThreadSleepsInTheRawCallWhenTheTargetIsLibcs) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  GTEST_SKIP() << "the interrupted pc is read for x86_64 and aarch64 only";
#endif
  const void* ours = ModuleOf(reinterpret_cast<const void*>(&looper::StartPollSource));
  const void* libc = LibcModule();
  ASSERT_NE(ours, nullptr);
  ASSERT_NE(libc, nullptr);
  poll_(looper_, 0);
  int result = 0;
  const uintptr_t pc = InterruptedWaitPc(&result);
  ASSERT_NE(pc, 0u) << "no attempt was interrupted in its wait";
  const void* where = ModuleOf(reinterpret_cast<const void*>(pc));
  if (EpollWaitIsLibcsOwn()) {
    EXPECT_EQ(where, ours) << "the main thread's blocking wait went through libc (pc " << std::hex << pc << ")";
  } else {
    EXPECT_EQ(where, libc) << "an interposed epoll_wait was skipped (pc " << std::hex << pc << ")";
  }
}

// Another tool hooked libutils.so's epoll_wait before the poll source (its proxy is the source's previous
// target): every call, the main thread's blocking waits included, goes to it, and the waits still mark gaps.
std::atomic<int> g_other_tool_calls{0};
void* g_other_tool_prev = nullptr;
int OtherToolsEpollWait(int epfd, struct epoll_event* events, int max, int timeout) {
  g_other_tool_calls.fetch_add(1, std::memory_order_relaxed);
  using Fn = int (*)(int, struct epoll_event*, int, int);
  return reinterpret_cast<Fn>(__atomic_load_n(&g_other_tool_prev, __ATOMIC_ACQUIRE))(epfd, events, max, timeout);
}

TEST_F(BlockingWaitTest, AnotherToolsHookIsCalledForTheBlockingWait) {
  looper::StopPollSource();
  jp_plt_hook* other = jp_plt_hook_install("libutils.so", "epoll_wait", reinterpret_cast<void*>(&OtherToolsEpollWait),
                                           &g_other_tool_prev);
  ASSERT_NE(other, nullptr) << jp_plt_last_error();
  struct Uninstall {  // whatever fails below: the source goes back on libc for the other tests
    jp_plt_hook* hook;
    ~Uninstall() {
      looper::StopPollSource();
      jp_plt_hook_remove(hook);
    }
  } uninstall{other};
  std::string why;
  ASSERT_TRUE(looper::StartPollSource("libutils.so", static_cast<uintptr_t>(pthread_self()), ctx_.main_tid, &why)) << why;
  SetRecordMinUs(0);
  const int calls0 = g_other_tool_calls.load();
  const uint64_t gaps0 = looper::TimingCounters().poll_gaps;
  poll_(looper_, 0);
  poll_(looper_, 1);  // blocking: the raw call would skip the other tool
  poll_(looper_, 0);
  poll_(looper_, 1);
  EXPECT_EQ(g_other_tool_calls.load() - calls0, 4) << "every call, looks and blocking waits, reached the other tool";
  EXPECT_EQ(looper::TimingCounters().poll_gaps - gaps0, 3u) << "and the source still timed the gaps between them";
#if defined(__x86_64__) || defined(__aarch64__)
  int result = 0;
  const int calls1 = g_other_tool_calls.load();
  const uintptr_t pc = InterruptedWaitPc(&result);
  ASSERT_NE(pc, 0u) << "no attempt was interrupted in its wait";
  EXPECT_GE(g_other_tool_calls.load() - calls1, 1);
  EXPECT_EQ(ModuleOf(reinterpret_cast<const void*>(pc)), LibcModule()) << "the other tool's call sleeps in libc";
#endif
}

}  // namespace
}  // namespace jp
