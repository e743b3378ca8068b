// The watchdog thread: deadline accuracy against the clock, disarm races, periodic counts over a measured
// interval, idleness (no wakeups), clean stop, stack capture hook.
#include "hook/watchdog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hook/clock.h"
#include "hook/event_clock.h"
#include "hook/text_release.h"
#include "tests/proc_threads.h"

namespace jp::hook {
namespace {

// RunDelayNs is the ground truth for lateness the host caused: on a shared 2-core host under load the
// watchdog thread waits on a run queue for tens of milliseconds at a time; a deadline late by that much is
// the host's, not the watchdog's (0 where the kernel keeps no schedstat: the bounds are then the bare
// tolerance).
using jp::testing::RunDelayNs;
using jp::testing::TaskExists;
using jp::testing::VoluntarySwitches;

// Slack allowed between a deadline and its callback on top of the time the host kept the watchdog thread
// off a CPU while it was runnable (RunDelayNs): timer slack, the wake-up path, earlier callbacks.
constexpr uint64_t kTolerance = 20 * kNsPerMs;

// Counts events and lets the test wait (with a generous cap) until enough happened.
class Counter {
 public:
  void Add() {
    std::lock_guard<std::mutex> lock(mu_);
    ++n_;
    cv_.notify_all();
  }
  bool WaitFor(int n, int seconds = 10) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(seconds), [&] { return n_ >= n; });
  }
  int value() {
    std::lock_guard<std::mutex> lock(mu_);
    return n_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_ = 0;
};

struct FireLog {
  static constexpr int kMax = 1024;
  std::atomic<uint64_t> fired_ns[kMax] = {};
  std::atomic<int> fire_count[kMax] = {};
  Counter counter;
};

void RecordFire(const DeadlineFired& f, void* arg) {
  auto* log = static_cast<FireLog*>(arg);
  log->fired_ns[f.id].store(MonotonicNs());
  log->fire_count[f.id].fetch_add(1);
  log->counter.Add();
}

// Watchdog::stats() counts a fire after its callback returned, so a test that saw the callback waits a
// moment for the count.
uint64_t FiredCount(const Watchdog& w, uint64_t want) {
  const uint64_t give_up = MonotonicNs() + 5 * kNsPerSec;
  while (w.stats().deadlines_fired < want && MonotonicNs() < give_up) std::this_thread::yield();
  return w.stats().deadlines_fired;
}

// The same for the rare-text sweeps, which come up to a sweep period (kRareTextSweepNs) after a pass: polled.
uint64_t SweptCount(const Watchdog& w, uint64_t want) {
  const uint64_t give_up = MonotonicNs() + 5 * kNsPerSec;
  while (w.stats().rare_text_sweeps < want && MonotonicNs() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return w.stats().rare_text_sweeps;
}

// True once the thread is blocked in the kernel (state S in /proc): for the watchdog that means it sits
// in its futex wait, having published what it sleeps towards. Polls, bounded.
bool WaitUntilAsleep(pid_t tid) {
  const uint64_t give_up = MonotonicNs() + 5 * kNsPerSec;
  while (MonotonicNs() < give_up) {
    if (jp::testing::ThreadState(tid) == 'S') return true;
    std::this_thread::yield();
  }
  return false;
}

// join() returns once the thread has run its last instruction; the kernel unlists the task from /proc a
// moment later. Waits (bounded) for that.
bool TaskGone(pid_t tid) {
  const uint64_t give_up = MonotonicNs() + 2 * kNsPerSec;
  while (TaskExists(tid) && MonotonicNs() < give_up) std::this_thread::yield();
  return !TaskExists(tid);
}

TEST(Watchdog, DeadlinesFireWithinToleranceOfTheirTime) {
  Watchdog w;
  std::string error;
  ASSERT_TRUE(w.Start(&error)) << error;
  FireLog log;
  const uint64_t waited0 = RunDelayNs(w.thread_tid());
  std::mt19937 rng(7);
  constexpr int kCount = 40;
  uint64_t deadlines[kCount];
  const uint64_t now = MonotonicNs();
  for (int i = 0; i < kCount; ++i) {
    deadlines[i] = now + (5 + rng() % 150) * kNsPerMs;
    ASSERT_TRUE(w.Arm(i, deadlines[i], RecordFire, &log));
  }
  ASSERT_TRUE(log.counter.WaitFor(kCount));
  const uint64_t waited = RunDelayNs(w.thread_tid()) - waited0;  // runnable, not running, during the test
  for (int i = 0; i < kCount; ++i) {
    const uint64_t fired = log.fired_ns[i].load();
    EXPECT_GE(fired, deadlines[i]) << "deadline " << i << " fired early";
    EXPECT_LE(fired - deadlines[i], kTolerance + waited)
        << "deadline " << i << " late by " << (fired - deadlines[i]) << " ns; the host held the thread " << waited
        << " ns";
    EXPECT_EQ(log.fire_count[i].load(), 1);
  }
  EXPECT_EQ(FiredCount(w, kCount), uint64_t{kCount});
}

TEST(Watchdog, DeadlineInThePastFiresPromptly) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  FireLog log;
  const uint64_t waited0 = RunDelayNs(w.thread_tid());
  const uint64_t armed = MonotonicNs();
  ASSERT_TRUE(w.Arm(1, armed - kNsPerMs, RecordFire, &log));
  ASSERT_TRUE(log.counter.WaitFor(1));
  const uint64_t waited = RunDelayNs(w.thread_tid()) - waited0;
  EXPECT_LE(log.fired_ns[1].load() - armed, kTolerance + waited) << "the host held the thread " << waited << " ns";
}

TEST(Watchdog, DisarmedDeadlinesNeverFire) {
  // The first deadline is 20 ms out: an attempt in which the host held this thread that long between
  // arming and disarming (a deadline may then rightly fire before its disarm) is repeated with a fresh
  // watchdog; the first undisturbed one is judged.
  constexpr int kCount = 40;
  for (int attempt = 1; attempt <= 10; ++attempt) {
    FireLog log;  // outlives the watchdog: a disturbed attempt's deadlines are still armed at its Stop
    Watchdog w;
    ASSERT_TRUE(w.Start(nullptr));
    const uint64_t now = MonotonicNs();
    for (int i = 0; i < kCount; ++i) ASSERT_TRUE(w.Arm(i, now + (20 + i) * kNsPerMs, RecordFire, &log));
    bool disarmed[kCount] = {};
    for (int i = 0; i < kCount; i += 2) disarmed[i] = w.Disarm(i);
    if (MonotonicNs() >= now + 20 * kNsPerMs) continue;  // disturbed (the watchdog drops the rest at Stop)
    for (int i = 0; i < kCount; i += 2) EXPECT_TRUE(disarmed[i]) << i;
    EXPECT_FALSE(w.Disarm(1000));  // never armed
    // A sentinel after all of them: once it fired, every armed deadline had its chance.
    ASSERT_TRUE(w.Arm(kCount, now + (20 + kCount + 30) * kNsPerMs, RecordFire, &log));
    ASSERT_TRUE(log.counter.WaitFor(kCount / 2 + 1));
    ASSERT_EQ(log.fire_count[kCount].load(), 1);
    for (int i = 0; i < kCount; ++i) EXPECT_EQ(log.fire_count[i].load(), i % 2) << "deadline " << i;
    EXPECT_FALSE(w.Disarm(1)) << "disarming after the fire reports it";
    return;
  }
  FAIL() << "every attempt was held 20 ms between arming and disarming";
}

TEST(Watchdog, ArmAndDisarmRaceFromManyThreadsExactlyOnce) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  FireLog log;
  constexpr int kThreads = 3, kPerThread = 300;
  std::atomic<int> expected_fires{0};
  std::vector<std::atomic<int>> disarmed(kThreads * kPerThread);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      std::mt19937 rng(th);
      for (int k = 0; k < kPerThread; ++k) {
        const uint64_t id = th * kPerThread + k;
        while (!w.Arm(id, MonotonicNs() + (rng() % 4000) * 1000, RecordFire, &log)) std::this_thread::yield();
        if (rng() % 2) {
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
          if (w.Disarm(id)) {
            disarmed[id] = 1;
            continue;
          }
        }
        expected_fires.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(log.counter.WaitFor(expected_fires.load()));
  // Give a wrongly-surviving disarmed entry the time to fire anyway (all deadlines were < 4 ms out).
  FireLog tail;
  ASSERT_TRUE(w.Arm(FireLog::kMax - 1, MonotonicNs() + 10 * kNsPerMs, RecordFire, &tail));
  ASSERT_TRUE(tail.counter.WaitFor(1));
  for (int id = 0; id < kThreads * kPerThread; ++id) {
    EXPECT_EQ(log.fire_count[id].load(), disarmed[id] ? 0 : 1) << "id " << id;
  }
}

struct Chain {
  Watchdog* w;
  int remaining;
  Counter done;
};

void ReArm(const DeadlineFired& f, void* arg) {
  auto* c = static_cast<Chain*>(arg);
  if (--c->remaining > 0) {
    EXPECT_TRUE(c->w->Arm(f.id, MonotonicNs() + kNsPerMs, ReArm, c));  // from inside a callback
  } else {
    c->done.Add();
  }
}

TEST(Watchdog, CallbacksCanArmAgain) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  Chain chain{&w, 20, {}};
  ASSERT_TRUE(w.Arm(5, MonotonicNs(), ReArm, &chain));
  ASSERT_TRUE(chain.done.WaitFor(1));
  EXPECT_EQ(chain.remaining, 0);
  EXPECT_EQ(FiredCount(w, 20), 20u);
}

struct PeriodicLog {
  static constexpr int kMax = 256;
  std::atomic<int> runs{0};
  uint64_t at[kMax] = {};
  Counter counter;
};

void RecordRun(uint64_t now, void* arg) {
  auto* log = static_cast<PeriodicLog*>(arg);
  int n = log->runs.load();
  if (n < PeriodicLog::kMax) log->at[n] = MonotonicNs();
  log->runs.store(n + 1);
  log->counter.Add();
}

TEST(Watchdog, PeriodicChecksRunOnTheirGrid) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  PeriodicLog log;
  const uint64_t period = 10 * kNsPerMs;
  const uint64_t waited0 = RunDelayNs(w.thread_tid());
  const uint64_t before = MonotonicNs();
  const int handle = w.AddPeriodic(period, RecordRun, &log);
  const uint64_t after = MonotonicNs();
  ASSERT_GE(handle, 0);
  ASSERT_TRUE(log.counter.WaitFor(25));
  const uint64_t removing = MonotonicNs();
  ASSERT_TRUE(w.RemovePeriodic(handle));
  const uint64_t removed = MonotonicNs();  // a run may still start until the remove returns
  const int runs = log.runs.load();
  const uint64_t waited = RunDelayNs(w.thread_tid()) - waited0;  // runnable, not running
  // Run k (1-based) is due at add + k * period; never early. It may be late by the tolerance plus what
  // the host held the thread, and lateness does not accumulate beyond that (the grid is fixed: runs missed
  // while the thread was held are skipped, each skip paid for by a held period).
  for (int k = 1; k <= runs && k <= PeriodicLog::kMax; ++k) {
    EXPECT_GE(log.at[k - 1], before + k * period) << "run " << k;
    EXPECT_LE(log.at[k - 1], after + k * period + kTolerance + waited)
        << "run " << k << "; the host held the thread " << waited << " ns";
  }
  // Over the measured interval the count is what the period says (the last run may still have been due;
  // runs skipped while the host held the thread are missing).
  const uint64_t due_by_removal = (removing - after) / period;
  EXPECT_GE(uint64_t(runs) + 1 + waited / period, due_by_removal) << "the host held the thread " << waited << " ns";
  EXPECT_LE(uint64_t(runs), (removed - before) / period);
  // And nothing runs after removal.
  FireLog sentinel;
  ASSERT_TRUE(w.Arm(1, MonotonicNs() + 3 * period, RecordFire, &sentinel));
  ASSERT_TRUE(sentinel.counter.WaitFor(1));
  EXPECT_EQ(log.runs.load(), runs);
}

struct SelfRemoving {
  Watchdog* w;
  int handle = -1;
  std::atomic<int> runs{0};
  Counter counter;
};

void RemoveAfterThree(uint64_t, void* arg) {
  auto* s = static_cast<SelfRemoving*>(arg);
  if (s->runs.fetch_add(1) + 1 == 3) {
    EXPECT_TRUE(s->w->RemovePeriodic(s->handle));
  }
  s->counter.Add();
}

TEST(Watchdog, PeriodicCheckCanRemoveItself) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  SelfRemoving s;
  s.w = &w;
  s.handle = w.AddPeriodic(2 * kNsPerMs, RemoveAfterThree, &s);
  ASSERT_GE(s.handle, 0);
  ASSERT_TRUE(s.counter.WaitFor(3));
  FireLog sentinel;
  ASSERT_TRUE(w.Arm(1, MonotonicNs() + 20 * kNsPerMs, RecordFire, &sentinel));
  ASSERT_TRUE(sentinel.counter.WaitFor(1));
  EXPECT_EQ(s.runs.load(), 3);
}

// The event clock's re-anchor taken by the watchdog (EventClock::RefreshBeforeSleep): while a reader uses
// the process clock (a thread reading through its own anchor copy, as the main thread does), the anchor is
// kept fresh (the reader meets a used-up one at most at its start), cutting sleeps longer than the anchor
// lasts; wakes close to the anchor's end take it without a wake of their own; an anchor nobody uses adds
// no wake.
struct ProcessClockForTest {
  explicit ProcessClockForTest(uint64_t span_ns) {
    options.reanchor_ns = span_ns;
    EventClock::SetOptionsForTest(&options);
    counter = CalibrateProcessEventClock();
  }
  ~ProcessClockForTest() { EventClock::SetOptionsForTest(nullptr); }  // the next calibration: defaults
  EventClock::Options options;
  bool counter = false;
};

void CountRun(uint64_t, void* arg) { static_cast<Counter*>(arg)->Add(); }

// Reads the process clock through its own anchor copy every millisecond until stopped.
class CopyReader {
 public:
  CopyReader() : thread_([this] {
      EventClock::Anchor copy;
      while (!stop_.load()) {
        ProcessEventClock().NowNsFrom(&copy);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }) {}
  ~CopyReader() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The refreshes since s0 over `elapsed` ns of a reader copying anchors of `span` ns: about one per anchor
// after the first (none twice), and at most two anchors run out on the reader (the calibration's anchor
// before the reader's first copy, and one more when a busy host wakes the watchdog later than the lead).
// Returns the refreshes.
uint64_t ExpectAboutOneRefreshPerAnchor(const EventClock::Stats& s0, uint64_t elapsed, uint64_t span) {
  const EventClock::Stats s1 = ProcessEventClock().stats();
  const uint64_t refreshes = s1.refreshes - s0.refreshes;
  const uint64_t met = (s1.reanchors - s0.reanchors) - refreshes;  // taken by the reader
  EXPECT_LE(met, 2u) << "refreshes " << refreshes << " over " << elapsed << " ns";
  EXPECT_GE(refreshes + met + 2, elapsed / span) << "elapsed " << elapsed << " ns";
  EXPECT_LE(refreshes, elapsed / (span / 2) + 1) << "elapsed " << elapsed << " ns";
  return refreshes;
}

TEST(Watchdog, KeepsAnEventClockAnchorInUseFreshAcrossSleepsLongerThanItLasts) {
  const uint64_t span = 40 * kNsPerMs;
  ProcessClockForTest clock(span);
  if (!clock.counter) GTEST_SKIP() << "no validated counter here: " << ProcessEventClock().why();
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  Counter runs;
  const EventClock::Stats s0 = ProcessEventClock().stats();
  const uint64_t i0 = w.stats().loop_iterations;
  uint64_t elapsed = 0;
  {
    CopyReader reader;
    const uint64_t start = MonotonicNs();
    ASSERT_GE(w.AddPeriodic(100 * kNsPerMs, CountRun, &runs), 0);  // each sleep: 100 ms, > the span
    ASSERT_TRUE(runs.WaitFor(8));
    elapsed = MonotonicNs() - start;
  }
  w.Stop();
  const uint64_t wakes = w.stats().loop_iterations - i0;
  // The lead here is span / 10 (4 ms).
  const uint64_t refreshes = ExpectAboutOneRefreshPerAnchor(s0, elapsed, span);
  // A periodic run every 100 ms, plus a wake of its own per refresh at most (the AddPeriodic's rescan too).
  EXPECT_LE(wakes, static_cast<uint64_t>(runs.value()) + refreshes + 3) << "refreshes " << refreshes;
}

TEST(Watchdog, TakesTheEventClockReanchorAtItsOwnWakesNearTheAnchorsEnd) {
  const uint64_t span = 100 * kNsPerMs;
  ProcessClockForTest clock(span);
  if (!clock.counter) GTEST_SKIP() << "no validated counter here: " << ProcessEventClock().why();
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  Counter runs;
  const EventClock::Stats s0 = ProcessEventClock().stats();
  uint64_t i0 = 0, elapsed = 0;
  int run_count = 0;
  {
    CopyReader reader;
    const uint64_t start = MonotonicNs();
    i0 = w.stats().loop_iterations;
    const int handle = w.AddPeriodic(5 * kNsPerMs, CountRun, &runs);  // wakes 5 ms apart: inside the window
    ASSERT_GE(handle, 0);
    ASSERT_TRUE(runs.WaitFor(100));
    ASSERT_TRUE(w.RemovePeriodic(handle));
    run_count = runs.value();
    elapsed = MonotonicNs() - start;
  }
  const uint64_t wakes = w.stats().loop_iterations - i0;
  w.Stop();
  // Once per anchor: a wake 5 ms from the next one re-anchors only an anchor with less than that left, not
  // at every wake of the window (span / 2).
  const uint64_t refreshes = ExpectAboutOneRefreshPerAnchor(s0, elapsed, span);
  // The runs' wakes only (the add's and the remove's rescans): a wake of its own would be one per refresh.
  EXPECT_LE(wakes, static_cast<uint64_t>(run_count) + 3) << "refreshes " << refreshes;
}

TEST(Watchdog, AddsNoWakeForAnEventClockAnchorNobodyUses) {
  const uint64_t span = 40 * kNsPerMs;
  ProcessClockForTest clock(span);
  if (!clock.counter) GTEST_SKIP() << "no validated counter here: " << ProcessEventClock().why();
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  Counter runs;
  const EventClock::Stats s0 = ProcessEventClock().stats();
  const uint64_t i0 = w.stats().loop_iterations;
  ASSERT_GE(w.AddPeriodic(100 * kNsPerMs, CountRun, &runs), 0);
  ASSERT_TRUE(runs.WaitFor(5));
  const int run_count = runs.value();
  const uint64_t wakes = w.stats().loop_iterations - i0;
  w.Stop();
  EXPECT_EQ(ProcessEventClock().stats().reanchors, s0.reanchors);
  EXPECT_LE(wakes, static_cast<uint64_t>(run_count) + 2);
}

TEST(Watchdog, IdleThreadNeverWakesUp) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  const pid_t tid = w.thread_tid();
  ASSERT_GT(tid, 0);
  // Let it reach its sleep: the first pass finds nothing and waits without a timeout.
  ASSERT_TRUE(WaitUntilAsleep(tid));
  const uint64_t iterations = w.stats().loop_iterations;
  EXPECT_EQ(iterations, 1u);
  const uint64_t switches = VoluntarySwitches(tid);
  ASSERT_NE(switches, UINT64_MAX);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(w.stats().loop_iterations, iterations);
  EXPECT_EQ(VoluntarySwitches(tid), switches) << "the idle watchdog thread was scheduled";

  // One deadline: a handful of passes, then idle again.
  FireLog log;
  ASSERT_TRUE(w.Arm(3, MonotonicNs() + 5 * kNsPerMs, RecordFire, &log));
  ASSERT_TRUE(log.counter.WaitFor(1));
  // Once the callback returned (counted), the only place the thread can block is its futex wait.
  ASSERT_EQ(FiredCount(w, 1), 1u);
  // And the one rare-text sweep those passes owe (APassIsFollowedByOneRareTextSweepBeforeTheThreadParks).
  ASSERT_EQ(SweptCount(w, 1), 1u);
  ASSERT_TRUE(WaitUntilAsleep(tid));
  const uint64_t after_fire = w.stats().loop_iterations;
  EXPECT_LE(after_fire - iterations, 5u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(w.stats().loop_iterations, after_fire);
}

// After a pass that ran anything, the thread does not park before the rare-text sweep it owes (a callback, or
// whoever armed it, may have faulted rare text back in after a release): one sweep within the sweep period
// (kRareTextSweepNs), then parked for good. The first pass owes none (start releases its own text), and an idle
// thread neither sweeps nor wakes.
TEST(Watchdog, APassIsFollowedByOneRareTextSweepBeforeTheThreadParks) {
  Watchdog w;
  const uint64_t t0 = MonotonicNs();
  ASSERT_TRUE(w.Start(nullptr));
  const pid_t tid = w.thread_tid();
  ASSERT_TRUE(WaitUntilAsleep(tid));
  EXPECT_EQ(w.stats().rare_text_sweeps, 0u);
  FireLog log;
  ASSERT_TRUE(w.Arm(1, MonotonicNs(), RecordFire, &log));
  ASSERT_TRUE(log.counter.WaitFor(1));
  ASSERT_EQ(FiredCount(w, 1), 1u);
  // The sweep comes when it is due (one period after the first pass), with nothing armed.
  ASSERT_EQ(SweptCount(w, 1), 1u) << "a parked watchdog owed a sweep and never made it";
  EXPECT_GE(MonotonicNs() - t0, kRareTextSweepNs) << "swept before the sweep was due";
  // Then parked: no pass, no sweep for longer than a sweep period.
  ASSERT_TRUE(WaitUntilAsleep(tid));
  const uint64_t passes = w.stats().loop_iterations;
  std::this_thread::sleep_for(std::chrono::nanoseconds(kRareTextSweepNs + 200 * kNsPerMs));
  EXPECT_EQ(w.stats().loop_iterations, passes);
  EXPECT_EQ(w.stats().rare_text_sweeps, 1u);
  w.Stop();
}

TEST(Watchdog, DeadlinesLaterThanThePlannedWakeNeedNoSyscall) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  FireLog log;
  ASSERT_TRUE(w.Arm(0, MonotonicNs() + 500 * kNsPerMs, RecordFire, &log));
  // Wait until the thread sleeps towards that deadline.
  ASSERT_TRUE(WaitUntilAsleep(w.thread_tid()));
  const uint64_t wakes = w.stats().wake_syscalls;
  for (int i = 1; i <= 20; ++i) ASSERT_TRUE(w.Arm(i, MonotonicNs() + kNsPerSec + i, RecordFire, &log));
  EXPECT_EQ(w.stats().wake_syscalls, wakes);
  for (int i = 0; i <= 20; ++i) EXPECT_TRUE(w.Disarm(i));
}

TEST(Watchdog, StopWithPendingDeadlinesJoinsAndDropsThem) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  const pid_t tid = w.thread_tid();
  ASSERT_TRUE(TaskExists(tid));
  FireLog log;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(w.Arm(i, MonotonicNs() + 10 * kNsPerSec, RecordFire, &log));
  EXPECT_TRUE(w.Stop());
  EXPECT_FALSE(w.running());
  EXPECT_TRUE(TaskGone(tid)) << "the watchdog thread outlived Stop";
  EXPECT_EQ(w.stats().dropped_at_stop, 10u);
  EXPECT_EQ(log.counter.value(), 0);
  // Restartable, with an empty table.
  ASSERT_TRUE(w.Start(nullptr));
  ASSERT_TRUE(w.Arm(1, MonotonicNs(), RecordFire, &log));
  ASSERT_TRUE(log.counter.WaitFor(1));
  EXPECT_EQ(log.fire_count[1].load(), 1);
  EXPECT_EQ(log.fire_count[2].load(), 0);
}

void TryStop(const DeadlineFired&, void* arg) {
  auto* w = static_cast<Watchdog*>(arg);
  EXPECT_FALSE(w->Stop()) << "Stop from the watchdog thread must be refused, not deadlock";
}

TEST(Watchdog, StopFromACallbackIsRefused) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  ASSERT_TRUE(w.Arm(1, MonotonicNs(), TryStop, &w));
  EXPECT_EQ(FiredCount(w, 1), 1u);
  EXPECT_TRUE(w.running());
}

TEST(Watchdog, FullTableRefusesArmAndCountsIt) {
  Watchdog w;  // not started: arming before Start is allowed
  FireLog log;
  for (int i = 0; i < Watchdog::kMaxDeadlines; ++i) ASSERT_TRUE(w.Arm(i, UINT64_MAX - 1, RecordFire, &log));
  EXPECT_FALSE(w.Arm(999, UINT64_MAX - 1, RecordFire, &log));
  EXPECT_EQ(w.stats().arm_failures, 1u);
  EXPECT_TRUE(w.Disarm(17));
  EXPECT_TRUE(w.Arm(999, UINT64_MAX - 1, RecordFire, &log));
}

struct StackLog {
  std::string text, error;
  bool ok = false;
  bool had_stack = false;
  Counter counter;
};

void RecordStack(const DeadlineFired& f, void* arg) {
  auto* log = static_cast<StackLog*>(arg);
  log->had_stack = f.stack != nullptr;
  if (f.stack) {
    log->ok = f.stack->ok;
    log->text = f.stack->text;
    log->error = f.stack->error;
  }
  log->counter.Add();
}

long FakeStack(void* ctx, char* buf, size_t cap) {
  ++*static_cast<int*>(ctx);
  const char text[] = "at com.example.Prefetch.run(Prefetch.java:42)";
  snprintf(buf, cap, "%s", text);
  return static_cast<long>(strlen(text));
}

long FailingStack(void*, char* buf, size_t cap) {
  snprintf(buf, cap, "main thread is not attached to the JVM");
  return -1;
}

TEST(Watchdog, StackCaptureGoesThroughThePluggedHook) {
  Watchdog w;
  ASSERT_TRUE(w.Start(nullptr));
  StackLog none;
  ASSERT_TRUE(w.Arm(1, MonotonicNs(), RecordStack, &none, Watchdog::kCaptureStack));
  ASSERT_TRUE(none.counter.WaitFor(1));
  EXPECT_TRUE(none.had_stack);
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.error.find("no stack capture hook"), std::string::npos) << none.error;

  int calls = 0;
  w.SetStackCapture(FakeStack, &calls);
  StackLog got;
  ASSERT_TRUE(w.Arm(2, MonotonicNs(), RecordStack, &got, Watchdog::kCaptureStack));
  ASSERT_TRUE(got.counter.WaitFor(1));
  EXPECT_TRUE(got.ok);
  EXPECT_EQ(got.text, "at com.example.Prefetch.run(Prefetch.java:42)");
  EXPECT_EQ(calls, 1);

  StackLog plain;  // without the flag no capture happens
  ASSERT_TRUE(w.Arm(3, MonotonicNs(), RecordStack, &plain));
  ASSERT_TRUE(plain.counter.WaitFor(1));
  EXPECT_FALSE(plain.had_stack);
  EXPECT_EQ(calls, 1);

  w.SetStackCapture(FailingStack, nullptr);
  StackLog failed;
  ASSERT_TRUE(w.Arm(4, MonotonicNs(), RecordStack, &failed, Watchdog::kCaptureStack));
  ASSERT_TRUE(failed.counter.WaitFor(1));
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.error, "main thread is not attached to the JVM");
}

}  // namespace
}  // namespace jp::hook
