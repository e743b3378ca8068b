// The looper's poll source natively, without a JVM: this thread is the main thread and polls the libutils.so
// fixture's looper (epoll_wait through libutils.so's GOT), so every pollOnce(0) ends one gap and starts the
// next. What is checked: the gap records reach the timeline through the drain, not from the main thread;
// until then the report sink's in-flight providers lend them (a report raised right after a gap names it),
// each record exactly once; a full ring makes the main thread append the record itself (none lost).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "hook/clock.h"
#include "hook/config.h"
#include "hook/monitor.h"
#include "hook/report_sink.h"
#include "hook/timeline.h"
#include "hook/watchdog.h"
#include "looper/dispatch_timing.h"
#include "tests/fixtures/libutils/native_looper.h"

namespace jp {
namespace {

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
    timeline_ = hook::Timeline::Create(hook::Timeline::Options(), &why);
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
  void TearDown() override {
    looper::StopPollSource();
    looper::DeactivateTiming();
    watchdog_.Stop();
    if (looper_) destroy_(looper_);
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
  // n gaps end: the first poll ends the gap begun by the last one before (or starts the first).
  void Gaps(int n) {
    for (int i = 0; i < n; ++i) poll_(looper_, 0);
  }

  PollFn poll_ = nullptr;
  DestroyFn destroy_ = nullptr;
  jpfx_looper* looper_ = nullptr;
  std::unique_ptr<hook::Timeline> timeline_;
  hook::Watchdog watchdog_;
  hook::ReportSink reports_;
  hook::PluginContext ctx_;
  std::set<uint64_t> base_;
};

TEST_F(PollSourceTest, GapRecordsAreAppendedByTheDrainAndLentUntilThen) {
  poll_(looper_, 0);  // the first gap starts
  Gaps(50);           // 50 gaps end
  const uint64_t now = hook::MonotonicNs();
  // Whatever the watchdog drained meanwhile is in the timeline, the rest is lent: 50 records, once each.
  const hook::TimelineRead lent = reports_.SnapshotWithInFlight(*timeline_, now, /*running_too=*/false);
  EXPECT_EQ(CountGapRecords(lent), 50u);
  EXPECT_EQ(GapRecords(lent).size() - base_.size(), 50u) << "a record lent and held would count twice above";
  EXPECT_LE(CountGapRecords(timeline_->Snapshot()), 50u);
  // The drain appends them: the timeline alone then has all 50, and nothing is lent twice.
  looper::DrainPollSource();
  EXPECT_EQ(CountGapRecords(timeline_->Snapshot()), 50u);
  EXPECT_EQ(CountGapRecords(reports_.SnapshotWithInFlight(*timeline_, now, false)), 50u);
}

TEST_F(PollSourceTest, AReportRightAfterAGapNamesItBeforeAnyDrain) {
  poll_(looper_, 0);
  const uint64_t t0 = hook::MonotonicNs();
  for (volatile int spin = 0; hook::MonotonicNs() - t0 < 3 * hook::kNsPerMs; spin = spin + 1) {
  }
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
  // More gaps than the ring holds (1024) with no drain in between unless the watchdog's happens to run:
  // the main thread appends the overflow itself.
  poll_(looper_, 0);
  Gaps(1500);
  const uint64_t now = hook::MonotonicNs();
  EXPECT_EQ(CountGapRecords(reports_.SnapshotWithInFlight(*timeline_, now, false)), 1500u);
  looper::DrainPollSource();
  EXPECT_EQ(CountGapRecords(timeline_->Snapshot()), 1500u);
}

}  // namespace
}  // namespace jp
