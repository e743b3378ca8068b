#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "hook/report.h"
#include "hook/report_sink.h"
#include "hook/timeline.h"

namespace jp::hook {
namespace {

Event MakeEvent(EventKind kind, uint32_t tid, uint64_t ts, uint64_t dur, uint16_t name = 0) {
  Event e;
  e.kind = kind;
  e.tid = tid;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.name = name;
  return e;
}

TEST(FindBlockedBy, LongestOverlapFirstOnlyMainThreadAndNoInstants) {
  std::vector<Event> events = {
      MakeEvent(EventKind::kLooperMessage, 1, 100, 50),   // overlaps [100,150) with lag [120, 420): 30
      MakeEvent(EventKind::kIdleHandler, 1, 150, 300),    // overlap [150, 420): 270
      MakeEvent(EventKind::kLooperMessage, 2, 120, 300),  // other thread: never a culprit
      MakeEvent(EventKind::kVerdict, 1, 200, 0),          // instant
      MakeEvent(EventKind::kInputMotion, 1, 120, 300),    // the lagging event itself
      MakeEvent(EventKind::kLooperMessage, 1, 420, 10),   // starts at the end: no overlap
  };
  auto blocked = FindBlockedBy(events, 1, 120, 300, OwnRecordKinds("input"), 8);
  ASSERT_EQ(blocked.size(), 2u);
  EXPECT_EQ(blocked[0].event.kind, EventKind::kIdleHandler);
  EXPECT_EQ(blocked[0].overlap_ns, 270u);
  EXPECT_EQ(blocked[1].event.kind, EventKind::kLooperMessage);
  EXPECT_EQ(blocked[1].overlap_ns, 30u);
  EXPECT_EQ(FindBlockedBy(events, 1, 120, 300, OwnRecordKinds("input"), 1).size(), 1u);
  // A looper report leaves out its own message record, an idle report its own handler call.
  std::vector<Event> looper = {MakeEvent(EventKind::kLooperMessage, 1, 500, 900),
                               MakeEvent(EventKind::kIdleHandler, 1, 600, 100)};
  auto own_message = FindBlockedBy(looper, 1, 500, 900, OwnRecordKinds("looper"), 8);
  ASSERT_EQ(own_message.size(), 1u);
  EXPECT_EQ(own_message[0].event.kind, EventKind::kIdleHandler);
  // ...and an idle report does not name the message record that encloses its whole call (see
  // TheDispatchEnclosingAReportsOwnRecordIsNotItsCulprit).
  EXPECT_TRUE(FindBlockedBy(looper, 1, 600, 100, OwnRecordKinds("idle"), 8).empty());
  // A touch that waited through a slow message is its victim, not its culprit.
  std::vector<Event> waited = {MakeEvent(EventKind::kInputMotion, 1, 400, 1200),
                               MakeEvent(EventKind::kLooperMessage, 1, 500, 900)};
  EXPECT_TRUE(FindBlockedBy(waited, 1, 500, 900, OwnRecordKinds("looper"), 8).empty());
}

// The poll source's message record is the whole gap between two polls; an idle pass runs inside one.
TEST(FindBlockedBy, NamesTheNestedRecordThatExplainsMostOfItsEnclosingOne) {
  std::vector<Event> events = {
      MakeEvent(EventKind::kLooperMessage, 1, 1000, 360),  // the gap: overlap 360
      MakeEvent(EventKind::kIdleHandler, 1, 1005, 350),    // inside it: overlap 350 >= half of 360
      MakeEvent(EventKind::kIdleHandler, 1, 1356, 2),      // inside it too, tiny
  };
  auto blocked = FindBlockedBy(events, 1, 1000, 400, OwnRecordKinds("input"), 8);
  ASSERT_EQ(blocked.size(), 3u);
  EXPECT_EQ(blocked[0].event.kind, EventKind::kIdleHandler);
  EXPECT_EQ(blocked[0].overlap_ns, 350u);
  EXPECT_EQ(blocked[1].event.kind, EventKind::kLooperMessage);
  EXPECT_EQ(blocked[2].overlap_ns, 2u);
  EXPECT_EQ(FindBlockedBy(events, 1, 1000, 400, OwnRecordKinds("input"), 1)[0].event.kind, EventKind::kIdleHandler);

  // A short record inside a long gap does not explain it: the gap stays first.
  std::vector<Event> long_gap = {MakeEvent(EventKind::kLooperMessage, 1, 0, 1000),
                                 MakeEvent(EventKind::kIdleHandler, 1, 100, 10)};
  EXPECT_EQ(FindBlockedBy(long_gap, 1, 0, 1000, OwnRecordKinds("input"), 8)[0].event.kind, EventKind::kLooperMessage);

  // Three levels (gap > idle pass > handler) and a record of the same span as the gap: the innermost one
  // that still explains half comes first, and equal spans do not swap forever.
  std::vector<Event> nested = {MakeEvent(EventKind::kLooperMessage, 1, 0, 500),
                               MakeEvent(EventKind::kLooperMessage, 1, 0, 500, 7),
                               MakeEvent(EventKind::kIdleHandler, 1, 10, 400),
                               MakeEvent(EventKind::kIdleHandler, 1, 20, 300, 9)};
  auto three = FindBlockedBy(nested, 1, 0, 500, OwnRecordKinds("input"), 8);
  ASSERT_EQ(three.size(), 4u);
  EXPECT_EQ(three[0].event.name, 9);
  EXPECT_EQ(three[0].overlap_ns, 300u);
}

// An idle_lag report is about its own idle.handler record; the poll gap that encloses the whole call is
// the dispatch it ran in, not a culprit. Without the own record (an input lag over the same window) the
// gap is the culprit.
TEST(FindBlockedBy, TheDispatchEnclosingAReportsOwnRecordIsNotItsCulprit) {
  std::vector<Event> events = {
      MakeEvent(EventKind::kLooperMessage, 1, 1000, 360),  // poll gap around the idle pass
      MakeEvent(EventKind::kIdleHandler, 1, 1005, 350),    // the lagging call
      MakeEvent(EventKind::kIdleHandler, 1, 1355, 4),      // the next handler in the same pass
  };
  auto idle = FindBlockedBy(events, 1, 1005, 350, OwnRecordKinds("idle"), 8);
  EXPECT_TRUE(idle.empty()) << idle.size() << " culprits, first kind " << static_cast<int>(idle[0].event.kind);
  auto input = FindBlockedBy(events, 1, 1005, 350, OwnRecordKinds("input"), 8);
  ASSERT_FALSE(input.empty());
  EXPECT_EQ(input[0].event.kind, EventKind::kIdleHandler);
  EXPECT_EQ(input.size(), 2u);
}

TEST(SplitStackFrames, SkipsEmptyLinesAndLimits) {
  EXPECT_EQ(SplitStackFrames("a\n\nb\nc\n"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitStackFrames("a\nb\nc", 2), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitStackFrames("").empty());
}

TEST(IsKeyFrame, MatchesPackagePrefixesWithOrWithoutAt) {
  std::vector<std::string> pk = {"com.example.", "org.acme.app"};
  EXPECT_TRUE(IsKeyFrame("at com.example.Feed.bind(Feed.java:12)", pk));
  EXPECT_TRUE(IsKeyFrame("  org.acme.app.Main.run(Main.java:3)", pk));
  EXPECT_FALSE(IsKeyFrame("at android.os.Looper.loop(Looper.java:1)", pk));
  EXPECT_FALSE(IsKeyFrame("at com.examplex.Foo.bar(X.java:1)", {"com.example."}));
  EXPECT_FALSE(IsKeyFrame("at com.example.A.b()", {}));
}

TEST(RenderReportJson, CarriesFieldsStackKeyFrameAndBlockedBy) {
  std::string error;
  auto timeline = Timeline::Create(Timeline::Options{}, &error);
  ASSERT_TRUE(timeline) << error;
  Report r;
  r.type = "touch_lag";
  r.monitor = "input";
  r.ts_ns = 1000;
  r.dur_ns = 250'000'000;
  r.fields = {ReportField::Int("seq", 7), ReportField::String("action", "UP"), ReportField::Bool("handled", true),
              ReportField::Double("handle_ms", 250.5), ReportField::RawJson("extra", "{\"a\":[1,2]}"),
              ReportField::RawJson("broken", "{not json")};
  r.stack = {"at android.os.MessageQueue.next(MessageQueue.java:1)", "at com.example.Slow.click(Slow.java:9)"};
  r.stack_captured_while_stuck = true;
  Event culprit = MakeEvent(EventKind::kIdleHandler, 1, 900, 300'000'000, timeline->Intern("com.example.Prefetch"));
  culprit.args[0] = EventArg::Int(timeline->Intern("calls"), 3);
  std::vector<BlockedBy> blocked = {{culprit, 249'999'900}};
  std::string json = RenderReportJson(r, 42, blocked, timeline->strings(), {"com.example."});
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(json.c_str()).HasParseError()) << json;
  EXPECT_STREQ(d["type"].GetString(), "touch_lag");
  EXPECT_EQ(d["seq"].GetUint64(), 42u);
  EXPECT_DOUBLE_EQ(d["dur_ms"].GetDouble(), 250.0);
  EXPECT_EQ(d["seq"].GetInt(), 42);
  EXPECT_STREQ(d["action"].GetString(), "UP");
  EXPECT_TRUE(d["handled"].GetBool());
  EXPECT_EQ(d["extra"]["a"].Size(), 2u);
  EXPECT_TRUE(d["broken"].IsNull());  // a monitor's bad JSON never breaks the report
  ASSERT_EQ(d["stack"].Size(), 2u);
  EXPECT_FALSE(d["stack"][0]["key"].GetBool());
  EXPECT_TRUE(d["stack"][1]["key"].GetBool());
  EXPECT_STREQ(d["key_frame"].GetString(), "at com.example.Slow.click(Slow.java:9)");
  ASSERT_EQ(d["blocked_by"].Size(), 1u);
  EXPECT_STREQ(d["blocked_by"][0]["kind"].GetString(), "idle.handler");
  EXPECT_STREQ(d["blocked_by"][0]["name"].GetString(), "com.example.Prefetch");
  EXPECT_EQ(d["blocked_by"][0]["args"]["calls"].GetInt(), 3);
  EXPECT_NEAR(d["blocked_by"][0]["overlap_ms"].GetDouble(), 249.9999, 1e-3);
}

struct Received {
  std::atomic<int> count{0};
  std::atomic<bool> on_submit_thread{false};
  std::thread::id submitter;
  std::string last;
};

void Listener(const char* json, void* arg) {
  auto* r = static_cast<Received*>(arg);
  if (std::this_thread::get_id() == r->submitter) r->on_submit_thread = true;
  r->last = json;
  r->count++;
}

TEST(ReportSink, DeliversOffTheSubmittingThreadAndRateLimitsPerType) {
  ReportSink sink;
  Received received;
  received.submitter = std::this_thread::get_id();
  sink.SetListener(Listener, &received);
  sink.SetLimits(3, {});
  Report r;
  r.monitor = "idle";
  int accepted = 0;
  for (int i = 0; i < 5; ++i) {
    r.type = "idle_lag";
    accepted += sink.Submit(r, nullptr, 1);
  }
  r.type = "touch_lag";
  accepted += sink.Submit(r, nullptr, 1);
  EXPECT_EQ(accepted, 4);  // 3 idle_lag + 1 touch_lag
  EXPECT_EQ(sink.rate_limited(), 2u);
  ASSERT_TRUE(sink.Flush(5000));
  EXPECT_EQ(received.count.load(), 4);
  EXPECT_FALSE(received.on_submit_thread.load());
  EXPECT_EQ(sink.Kept().size(), 4u);
  sink.StopDelivery();
}

// A delivery burst: the listener held on the first report until the test queued two more behind it. The
// after-burst step (the text release in the library) runs once, after the third listener call, with the
// sink's lock free (it reads the sink), and before Flush returns; a later report is a burst of its own.
struct Burst {
  ReportSink* sink = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;  // the first listener call may return
  int delivered = 0;
  int after_calls = 0;
  int delivered_at_after = -1;
  uint64_t submitted_at_after = 0;
};
Burst* g_burst = nullptr;

void HeldListener(const char*, void*) {
  std::unique_lock<std::mutex> lock(g_burst->mu);
  g_burst->cv.wait_for(lock, std::chrono::seconds(5), [] { return g_burst->open; });
  ++g_burst->delivered;
}

void CountAfterBurst() {
  const uint64_t submitted = g_burst->sink->submitted();  // takes the sink's lock: a deadlock if it were held
  std::lock_guard<std::mutex> lock(g_burst->mu);
  ++g_burst->after_calls;
  g_burst->delivered_at_after = g_burst->delivered;
  g_burst->submitted_at_after = submitted;
}

TEST(ReportSink, RunsTheAfterBurstStepOnceWhenTheQueueIsEmptyAgain) {
  ReportSink sink;
  Burst burst;
  burst.sink = &sink;
  g_burst = &burst;
  sink.SetAfterBurst(CountAfterBurst);
  sink.SetListener(HeldListener, nullptr);
  sink.SetLimits(0, {});
  Report r;
  r.monitor = "input";
  r.type = "touch_lag";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sink.Submit(r, nullptr, 1));
  {
    std::lock_guard<std::mutex> lock(burst.mu);
    EXPECT_EQ(burst.after_calls, 0);  // the first report is still with the listener
    burst.open = true;
  }
  burst.cv.notify_all();
  ASSERT_TRUE(sink.Flush(5000));
  {
    std::lock_guard<std::mutex> lock(burst.mu);
    EXPECT_EQ(burst.delivered, 3);
    EXPECT_EQ(burst.after_calls, 1);
    EXPECT_EQ(burst.delivered_at_after, 3);
    EXPECT_EQ(burst.submitted_at_after, 3u);
  }
  ASSERT_TRUE(sink.Submit(r, nullptr, 1));
  ASSERT_TRUE(sink.Flush(5000));
  {
    std::lock_guard<std::mutex> lock(burst.mu);
    EXPECT_EQ(burst.delivered, 4);
    EXPECT_EQ(burst.after_calls, 2);
  }
  // Reports with no listener are only kept: no delivery, no burst.
  sink.SetListener(nullptr, nullptr);
  ASSERT_TRUE(sink.Submit(r, nullptr, 1));
  ASSERT_TRUE(sink.Flush(5000));
  sink.StopDelivery();
  std::lock_guard<std::mutex> lock(burst.mu);
  EXPECT_EQ(burst.after_calls, 2);
  g_burst = nullptr;
}

TEST(ReportSink, KeepsABoundedHistory) {
  ReportSink sink;
  sink.SetLimits(0, {});  // 0 = no rate limit
  Report r;
  r.type = "x";
  for (size_t i = 0; i < ReportSink::kMaxKept + 10; ++i) sink.Submit(r, nullptr, 1);
  auto kept = sink.Kept();
  ASSERT_EQ(kept.size(), ReportSink::kMaxKept);
  rapidjson::Document first;
  first.Parse(kept.front().c_str());
  EXPECT_EQ(first["seq"].GetUint64(), 11u);  // the 10 oldest were dropped
}

TEST(ReportSink, TrimsStacksToTheFrameLimitKeepingTheInnermost) {
  ReportSink sink;
  sink.SetLimits(0, {}, 2);
  Report r;
  r.type = "x";
  r.stack = {"at a.Inner.f()", "at a.Mid.g()", "at a.Outer.h()"};
  sink.Submit(r, nullptr, 1);
  rapidjson::Document d;
  d.Parse(sink.Kept().at(0).c_str());
  ASSERT_EQ(d["stack"].Size(), 2u);
  EXPECT_STREQ(d["stack"][0]["frame"].GetString(), "at a.Inner.f()");
  EXPECT_EQ(d["stack_frames_dropped"].GetInt(), 1);
}

// A provider for SnapshotWithInFlight: lends `pending` always and `running` only when asked for it.
struct Lender {
  std::vector<Event> pending;
  Event running;
  int calls = 0;
};
void Lend(uint64_t, bool running_too, std::vector<Event>* out, void* arg) {
  Lender* l = static_cast<Lender*>(arg);
  ++l->calls;
  out->insert(out->end(), l->pending.begin(), l->pending.end());
  if (running_too) out->push_back(l->running);
}

TEST(ReportSink, SnapshotsLendPendingRecordsOnceAndRunningWorkOnlyWhenAsked) {
  std::string why;
  std::unique_ptr<Timeline> tl = Timeline::Create(Timeline::Options(), &why);
  ASSERT_TRUE(tl) << why;
  const Event in_timeline = MakeEvent(EventKind::kLooperMessage, 7, 1000, 50);
  tl->Append(in_timeline);
  Lender lender;
  // One record the timeline already holds (appended between the provider's read and the snapshot), one it
  // does not hold yet, and the running message.
  lender.pending = {in_timeline, MakeEvent(EventKind::kLooperMessage, 7, 2000, 300)};
  lender.running = MakeEvent(EventKind::kLooperMessage, 7, 3000, 40);
  ReportSink sink;
  sink.AddInFlightProvider(&Lend, &lender);
  sink.AddInFlightProvider(&Lend, &lender);  // at most once per arg

  auto count = [](const TimelineRead& r, uint64_t ts) {
    return std::count_if(r.events.begin(), r.events.end(), [&](const Event& e) { return e.ts_ns == ts; });
  };
  const TimelineRead with_running = sink.SnapshotWithInFlight(*tl, 5000, true);
  EXPECT_EQ(lender.calls, 1);
  EXPECT_EQ(count(with_running, 1000), 1) << "a lent record the timeline holds is not added twice";
  EXPECT_EQ(count(with_running, 2000), 1);
  EXPECT_EQ(count(with_running, 3000), 1);
  const TimelineRead without = sink.SnapshotWithInFlight(*tl, 5000, false);
  EXPECT_EQ(count(without, 2000), 1);
  EXPECT_EQ(count(without, 3000), 0) << "running work is lent only when asked for (exports do not)";

  // A report right after the pending record ended names it, though the timeline does not hold it yet.
  Report r;
  r.type = "touch_lag";
  r.monitor = "input";
  r.ts_ns = 1900;
  r.dur_ns = 500;
  sink.Submit(r, tl.get(), 7);
  rapidjson::Document d;
  d.Parse(sink.Kept().at(0).c_str());
  ASSERT_TRUE(d.HasMember("blocked_by"));
  ASSERT_GE(d["blocked_by"].Size(), 1u);
  EXPECT_DOUBLE_EQ(d["blocked_by"][0]["overlap_ms"].GetDouble(), 0.0003) << "the 300 ns pending gap, first";

  sink.RemoveInFlightProvider(&Lend, &lender);
  EXPECT_EQ(count(sink.SnapshotWithInFlight(*tl, 5000, true), 2000), 0);
}

}  // namespace
}  // namespace jp::hook
