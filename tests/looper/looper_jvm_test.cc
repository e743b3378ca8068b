// The looper monitor on a real JVM with the faithful stand-ins (Looper prints AOSP's dispatch lines,
// Choreographer delivers vsync-aligned frames): jankprobe's printer chains to the app's own, a slow message
// is reported with a confirmed stack whose key frame is the scripted method, a sleeping one shows wall far
// above CPU, a printer replaced or cleared by the app is put back within one check period, a simulated ANR
// lists the slow message in its history and the messages waiting behind it, a slow message costs the
// frames its length says, and the frame ticker parks while the main thread is idle and resumes when it gets
// busy.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "looper/looper_monitor.h"
#include "tests/jvm/app_under_test.h"
#include "tests/looper/looper_jvm_support.h"
#include "tests/proc_threads.h"

namespace jp::testing {
namespace {

constexpr int kLagMs = 300;
constexpr int kAnrMs = 1000;
constexpr int kSampleAfterMs = 40;
constexpr int kSampleIntervalMs = 30;
constexpr double kFrameMs = 1000.0 / 60;  // the Choreographer stand-in's refresh
const char* kConfig =
    R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
    R"("looper":{"source":"printer","lag_ms":300,"anr_ms":1000,"sample_after_ms":40,"sample_interval_ms":30},)"
    R"("report":{"key_packages":["com.example.app"],"max_reports_per_minute":100}})";

int ReplacePrinter(const std::string& kind) {
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(8);
  const int rc = Scenario("replacePrinter", "(Ljava/lang/String;)I", {L(Jvm()->NewString(kind))});
  env->PopLocalFrame(nullptr);
  return rc;
}


constexpr int64_t kParkAfterFrames = 30;  // FrameTicker.PARK_AFTER_FRAMES

// Waits until the frame ticker is parked (its own state, read on the main thread). Returns the frame
// callbacks run when it was seen parked, or -1 after timeout_ms (checked every 20 ms). A stretch with no
// callbacks is not proof: on a loaded machine the main thread can wait that long for a core with the ticker
// still running.
int64_t AwaitTickerParked(int64_t timeout_ms) {
  const auto t0 = Clock::now();
  for (;;) {
    const int calls = Scenario("tickerParkedFrameCallbacks");
    EXPECT_NE(calls, -4) << "FrameTicker no longer has sActive / parked: update the test probe";
    if (calls >= 0) return calls;
    if (calls == -4 || MsSince(t0) >= static_cast<double>(timeout_ms)) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// An app that keeps its main thread busy, as an animating one does: a 6 ms message every few milliseconds
// (over a quarter of every frame, so the frame ticker does not park) for about ms. Returns the frame
// callbacks run when the last busy message ended, as the main thread read it.
int64_t StayBusy(int ms) {
  const auto t0 = Clock::now();
  int64_t calls = -1;
  while (MsSince(t0) < ms) {
    calls = Scenario("runSlowThenFrameCallbacks", "(J)I", {J(6)});
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  return calls;
}

class LooperJvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const AppLaunch& launch = LaunchApp(kConfig);
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
    ASSERT_EQ(launch.start_rc, 0) << CallString("status");
    Jvm()->CallStatic(kTestApp, "clearReports", "()V");
  }
};

TEST_F(LooperJvmTest, PrinterChainsToTheAppsOwnAndRecordsEveryMessage) {
  LooperStatus s = Status();
  ASSERT_EQ(s.state, "on") << CallString("status");
  ASSERT_NE(s.details, nullptr);
  const int64_t before = s.Int("messages");
  const int early_before = Scenario("earlyPrinterLines");
  if (s.Int("reinstalls") == 0) {  // the app's printer, set before start, is still the one we chain to
    EXPECT_EQ(s.Str("chained_to"), "com.example.app.CountingPrinter");
    EXPECT_EQ(ScenarioString("printerChain").rfind("jankprobe.LooperPrinter(active -> com.example.app.CountingPrinter@", 0), 0u)
        << ScenarioString("printerChain");
  }
  constexpr int kQuick = 25;
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(kQuick)}), 0);
  s = Status();
  // Our printer saw every message (the 25 quick ones; the wait message may still be ending)...
  EXPECT_GE(s.Int("messages") - before, kQuick);
  if (s.Int("reinstalls") == 0) {
    // ... and so did the app's printer behind it.
    EXPECT_GE(Scenario("earlyPrinterLines") - early_before, kQuick + 1);
  }
  // Each message is a looper.message record named by its target class, with its what.
  const std::string trace = ExportedTrace();
  ASSERT_FALSE(trace.empty());
  EXPECT_NE(trace.find("com.example.app.WorkHandler"), std::string::npos);
  EXPECT_NE(trace.find("looper.message"), std::string::npos);
}

TEST_F(LooperJvmTest, SlowMessageIsReportedWithAConfirmedStackAndItsKeyFrame) {
  constexpr int kBusyMs = 450;
  const auto t0 = Clock::now();
  ASSERT_EQ(Scenario("runSlow", "(J)I", {J(kBusyMs)}), 0);
  const std::string json = AwaitReport("message_lag", "com.example.app.SlowTask", 3000);
  const double waited_ms = MsSince(t0);
  ASSERT_FALSE(json.empty()) << "no message_lag; status: " << CallString("status");
  rapidjson::Document d = Parse(json);
  EXPECT_STREQ(d["monitor"].GetString(), "looper");
  EXPECT_STREQ(d["callback"].GetString(), "com.example.app.SlowTask");
  EXPECT_STREQ(d["target"].GetString(), "android.os.Handler");
  EXPECT_FALSE(d["still_running"].GetBool());
  // Ground truth: it spins kBusyMs; the measured dispatch cannot be shorter, nor longer than our wait.
  const double wall = d["wall_ms"].GetDouble();
  EXPECT_GE(wall, kBusyMs);
  EXPECT_LE(wall, waited_ms);
  // CPU time: the task's own reading of its thread CPU clock is the ground truth (how much of the wall
  // time the busy loop got depends on the host's load). The dispatch adds a little: the stack captures'
  // safepoints and the printer calls.
  const double task_cpu_ms = Scenario("lastSlowCpuMicros") / 1000.0;
  ASSERT_GT(task_cpu_ms, 0.0);
  EXPECT_GE(d["cpu_ms"].GetDouble(), task_cpu_ms - 0.5) << json;
  EXPECT_LE(d["cpu_ms"].GetDouble(), task_cpu_ms + 25) << json;
  EXPECT_LE(d["cpu_ms"].GetDouble(), wall + 1);
  // Sampling from sample_after_ms every sample_interval_ms: about (wall - after) / interval + 1 samples.
  const int expected = static_cast<int>((wall - kSampleAfterMs) / kSampleIntervalMs) + 1;
  const int samples = d["sample_count"].GetInt();
  // A sample needs the main thread to stop at a safepoint and the watchdog to run: on a loaded machine they
  // get a share of the cores, which the task's CPU over its wall time measures (about 1 on a quiet machine).
  const double cpu_share = std::min(1.0, task_cpu_ms / wall);
  EXPECT_GE(samples, std::max(1, static_cast<int>(expected * cpu_share) / 2)) << json;
  EXPECT_LE(samples, expected + 1) << json;
  int merged = 0;
  for (const auto& run : d["samples"].GetArray()) {
    merged += run["count"].GetInt();
    EXPECT_GE(run["at_ms"].GetDouble(), kSampleAfterMs);
  }
  EXPECT_EQ(merged, samples);
  EXPECT_TRUE(d["confirmed"].GetBool()) << json;
  EXPECT_STREQ(d["verdict"].GetString(), "confirmed");
  ASSERT_TRUE(d.HasMember("key_frame")) << json;
  EXPECT_NE(std::string(d["key_frame"].GetString()).find("com.example.app.SlowTask.crunchNumbers"),
            std::string::npos)
      << json;
  EXPECT_TRUE(d["stack_captured_while_stuck"].GetBool());
  // The estimate divides the wall time by the refresh interval the report names (the monitor's estimate
  // when it reported, inferred from frame gaps: on a starved main thread, e.g. an ASan build on a loaded
  // machine, every recent frame can miss a vsync and it reads 2 intervals; the status read afterwards may
  // have recovered, so the report's own value is the one to hold it to). Whole frames (the division is
  // done in nanoseconds; the rendered milliseconds may round across a frame boundary: +-1).
  ASSERT_TRUE(d.HasMember("refresh_ms")) << json;
  const double refresh_ms = d["refresh_ms"].GetDouble();
  ASSERT_GT(refresh_ms, 0);
  EXPECT_NEAR(d["frames_lost_estimate"].GetInt(), std::floor(wall / refresh_ms), 1)
      << "refresh_ms " << refresh_ms << " wall_ms " << wall;
  // The history holds it as a slow entry with its samples.
  bool in_history = false;
  for (const auto& e : d["history"]["entries"].GetArray()) {
    if (std::string(e["kind"].GetString()) == "slow" && std::string(e["callback"].GetString()) == "com.example.app.SlowTask") {
      in_history = e.HasMember("samples") && e["samples"].Size() > 0;
    }
  }
  EXPECT_TRUE(in_history) << json;
}

TEST_F(LooperJvmTest, MessageBlockedInSleepShowsWallFarAboveCpu) {
  constexpr int kSleepMs = 400;
  ASSERT_EQ(Scenario("runSleepy", "(J)I", {J(kSleepMs)}), 0);
  const std::string json = AwaitReport("message_lag", "com.example.app.SleepyTask", 3000);
  ASSERT_FALSE(json.empty()) << "no message_lag; status: " << CallString("status");
  rapidjson::Document d = Parse(json);
  const double wall = d["wall_ms"].GetDouble();
  const double cpu = d["cpu_ms"].GetDouble();
  EXPECT_GE(wall, kSleepMs);
  // Sleeping costs the thread next to no CPU: a small fraction of the wall time, whatever the machine load.
  EXPECT_LT(cpu, 0.2 * wall) << json;
  EXPECT_GE(cpu, 0.0);
  ASSERT_TRUE(d.HasMember("key_frame")) << json;
  EXPECT_NE(std::string(d["key_frame"].GetString()).find("com.example.app.SleepyTask.waitForDisk"), std::string::npos);
  EXPECT_TRUE(d["confirmed"].GetBool()) << json;
}

// Polls the status until reinstalls passes `from`; returns the ms it took (or -1 after 3 s).
double AwaitReinstall(int64_t from) {
  const auto t0 = Clock::now();
  while (MsSince(t0) < 3000) {
    if (Status().Int("reinstalls") > from) return MsSince(t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

TEST_F(LooperJvmTest, ReplacedOrClearedPrinterIsReinstalledWithinOneCheckAndChained) {
  const int64_t r0 = Status().Int("reinstalls");
  ASSERT_EQ(ReplacePrinter("counting"), 0);
  const double took = AwaitReinstall(r0);
  ASSERT_GE(took, 0) << CallString("status");
  // One check period, plus the check's own JNI work and our polling step.
  EXPECT_LE(took, looper::kPrinterCheckMs + 100);
  LooperStatus s = Status();
  EXPECT_EQ(s.Str("printer"), "reinstalled");
  EXPECT_EQ(s.Str("last_replaced_by"), "com.example.app.CountingPrinter");
  EXPECT_EQ(s.Str("chained_to"), "com.example.app.CountingPrinter");
  EXPECT_EQ(ScenarioString("printerChain").rfind("jankprobe.LooperPrinter(active -> com.example.app.CountingPrinter@", 0), 0u);
  // Chained: the newcomer still sees every message, and we still time them.
  const int64_t m0 = s.Int("messages");
  const int late0 = Scenario("latePrinterLines");
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(10)}), 0);
  EXPECT_GE(Scenario("latePrinterLines") - late0, 11);
  EXPECT_GE(Status().Int("messages") - m0, 10);

  // setMessageLogging(null), as an app switching its logging off does.
  const int64_t r1 = Status().Int("reinstalls");
  ASSERT_EQ(ReplacePrinter("null"), 0);
  ASSERT_GE(AwaitReinstall(r1), 0);
  s = Status();
  EXPECT_EQ(s.Str("last_replaced_by"), "null");
  EXPECT_EQ(s.Str("chained_to"), "none");
  const int64_t m1 = s.Int("messages");
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(5)}), 0);
  EXPECT_GE(Status().Int("messages") - m1, 5);
}

// Another tool that re-wraps the Looper's printer whenever it is not its own (Matrix's LooperMonitor, every
// 60 s): its printer chains to ours, so ours stays behind it, timing every line. Wrapping it back would make
// the tool wrap again, and each round would add two printers to every message's chain.
TEST_F(LooperJvmTest, AToolThatWrapsOurPrinterIsLeftInFrontAndTheChainStopsGrowing) {
  const int64_t r0 = Status().Int("reinstalls");
  auto count = [](const std::string& chain, const std::string& needle) {
    size_t n = 0;
    for (size_t at = chain.find(needle); at != std::string::npos; at = chain.find(needle, at + 1)) ++n;
    return n;
  };
  const size_t ours0 = count(ScenarioString("printerChain"), "jankprobe.LooperPrinter(");
  int wraps = 0;
  for (int round = 0; round < 3; ++round) {
    wraps += Scenario("wrapPrinterLikeMatrix");
    // Three check periods: time for our check to see the newcomer (and, before the fix, wrap it).
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * looper::kPrinterCheckMs));
  }
  EXPECT_EQ(wraps, 1) << "the tool had to wrap again: its printer was wrapped; chain " << ScenarioString("printerChain");
  const std::string chain = ScenarioString("printerChain");
  EXPECT_EQ(chain.rfind("WrappingPrinter -> jankprobe.LooperPrinter(active -> ", 0), 0u) << chain;
  EXPECT_EQ(count(chain, "WrappingPrinter"), 1u) << chain;
  EXPECT_EQ(count(chain, "jankprobe.LooperPrinter("), ours0) << chain;
  LooperStatus s = Status();
  EXPECT_EQ(s.Int("reinstalls"), r0);
  EXPECT_EQ(s.Str("printer"), "behind com.example.app.WrappingPrinter");
  // Both still see every message: the tool in front, ours behind it timing them.
  const int64_t m0 = s.Int("messages");
  const int w0 = Scenario("wrappingPrinterLines");
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(10)}), 0);
  EXPECT_GE(Scenario("wrappingPrinterLines") - w0, 10);
  EXPECT_GE(Status().Int("messages") - m0, 10);

  // An app clearing the logging afterwards still gets ours put back.
  const int64_t r1 = Status().Int("reinstalls");
  ASSERT_EQ(ReplacePrinter("null"), 0);
  ASSERT_GE(AwaitReinstall(r1), 0);
  EXPECT_EQ(Status().Str("printer"), "reinstalled");
}

TEST_F(LooperJvmTest, SimulatedAnrListsTheSlowMessageAndThePendingOnes) {
  ASSERT_EQ(Scenario("runSlow", "(J)I", {J(350)}), 0);  // a slow message in the history window
  ASSERT_FALSE(AwaitReport("message_lag", "com.example.app.SlowTask", 3000).empty());
  Jvm()->CallStatic(kTestApp, "clearReports", "()V");  // from here on, reports are about the stuck message
  // anr_ms + 1000: the watchdog may wake late on a loaded machine and must still find the message running.
  constexpr int kStuckMs = 2000;
  const auto t0 = Clock::now();
  ASSERT_EQ(Scenario("simulateAnr", "(J)I", {J(kStuckMs)}), 0);
  const std::string json = AwaitReport("anr_risk", "\"still_running\":true", 3000);
  ASSERT_FALSE(json.empty()) << "no anr_risk; status: " << CallString("status");
  const double seen_ms = MsSince(t0);
  rapidjson::Document d = Parse(json);
  EXPECT_STREQ(d["callback"].GetString(), "com.example.app.SlowTask");
  const double wall = d["wall_ms"].GetDouble();
  EXPECT_GE(wall, kAnrMs);
  EXPECT_LE(wall, seen_ms);
  // Reported while the message still ran: its wall time at the report is below the message's length (when
  // the test thread got to read it is up to the scheduler; still_running was the needle).
  EXPECT_LT(wall, kStuckMs) << "the ANR risk must be reported while the message still runs";
  EXPECT_GT(d["cpu_ms"].GetDouble(), 0.0);
  EXPECT_LE(d["cpu_ms"].GetDouble(), wall + 1);
  EXPECT_EQ(d["threshold_ms"].GetInt(), kAnrMs);

  // History: the earlier slow message (350 ms) is there, with its samples.
  bool slow_seen = false;
  for (const auto& e : d["history"]["entries"].GetArray()) {
    if (std::string(e["kind"].GetString()) == "slow" && std::string(e["callback"].GetString()) == "com.example.app.SlowTask" &&
        e["wall_ms"].GetDouble() >= 350 && e["wall_ms"].GetDouble() < kAnrMs) {
      slow_seen = e.HasMember("samples");
    }
  }
  EXPECT_TRUE(slow_seen) << json;

  // Pending: 41 and 42 waiting about as long as the stuck message ran, 43 not due for a minute.
  ASSERT_TRUE(d["pending"]["read"].GetBool()) << json;
  int found = 0;
  for (const auto& m : d["pending"]["messages"].GetArray()) {
    if (!m.HasMember("target") || std::string(m["target"].GetString()) != "com.example.app.WorkHandler") continue;
    const int what = m["what"].GetInt();
    const int64_t late = m["late_ms"].GetInt64();
    if (what == 41 || what == 42) {
      ++found;
      EXPECT_GE(late, kLagMs) << json;  // read when the message crossed lag_ms, or later
      EXPECT_LE(late, wall + 100) << json;
    } else if (what == 43) {
      ++found;
      EXPECT_LT(late, -50000) << json;
    }
  }
  EXPECT_EQ(found, 3) << json;

  // When it ends: one message_lag for it, and no second anr_risk.
  const std::string lag = AwaitReport("message_lag", "com.example.app.SlowTask", 4000);
  ASSERT_FALSE(lag.empty());
  rapidjson::Document l = Parse(lag);
  EXPECT_GE(l["wall_ms"].GetDouble(), kStuckMs);
  EXPECT_EQ(CallInt("countReports", "(Ljava/lang/String;)I", {L(Jvm()->NewString("anr_risk"))}), 1);
  Scenario("removeFutureWork");
}

// The frame counters the monitor keeps (status details.frames).
struct FrameCounts {
  int64_t frames = 0, dropped = 0, janky = 0;
};
FrameCounts Frames() {
  LooperStatus s = Status();
  FrameCounts c;
  if (!s.details || !s.details->HasMember("frames")) return c;
  c.frames = s.Frames()["frames"].GetInt64();
  c.dropped = s.Frames()["dropped"].GetInt64();
  c.janky = s.Frames()["janky"].GetInt64();
  return c;
}

// The `frame` records (one per late gap) in an exported trace, by timestamp.
struct FrameRecord {
  double gap_ms = 0;
  int64_t dropped = 0;
};
std::map<std::string, FrameRecord> FrameRecords(const std::string& trace) {
  std::map<std::string, FrameRecord> out;
  rapidjson::Document d;
  d.Parse(trace.c_str());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("traceEvents")) return out;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (!e.HasMember("name") || std::string(e["name"].GetString()) != "frame" || !e.HasMember("args")) continue;
    char ts[64];
    std::snprintf(ts, sizeof ts, "%.3f", e["ts"].GetDouble());
    out[ts] = {e["args"]["gap_ms"].GetDouble(), e["args"]["dropped"].GetInt64()};
  }
  return out;
}

// The longest late gap recorded since `before` was exported (none: gap_ms 0).
FrameRecord LongestNewGap(const std::map<std::string, FrameRecord>& before) {
  FrameRecord longest;
  for (const auto& [ts, r] : FrameRecords(ExportedTrace())) {
    if (!before.count(ts) && r.gap_ms > longest.gap_ms) longest = r;
  }
  return longest;
}

TEST_F(LooperJvmTest, FramesDroppedDuringASlowMessageMatchItsLength) {
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(1)}), 0);  // whatever ran before has ended and been reported
  Jvm()->CallStatic(kTestApp, "clearReports", "()V");
  // An animating app: the main thread busy every frame, so the ticker never parks. Let it find the refresh
  // interval (the ticker hands frames over in batches, so the count moves in steps).
  const auto t0 = Clock::now();
  while (MsSince(t0) < 4000 && Status().Frames()["frames"].GetInt64() < 20) StayBusy(50);
  LooperStatus s = Status();
  ASSERT_EQ(std::string(s.Frames()["state"].GetString()), "on") << CallString("status");
  ASSERT_GE(s.Frames()["frames"].GetInt64(), 20) << CallString("status");
  EXPECT_NEAR(s.Frames()["refresh_ms"].GetDouble(), kFrameMs, 0.5);
  const int64_t dropped0 = s.Frames()["dropped"].GetInt64();
  const auto gaps0 = FrameRecords(ExportedTrace());

  StayBusy(100);  // the slow message starts while the ticker runs
  ASSERT_EQ(Scenario("runSlow", "(J)I", {J(500)}), 0);
  const std::string json = AwaitReport("message_lag", "com.example.app.SlowTask", 3000);
  ASSERT_FALSE(json.empty());
  const double wall = Parse(json)["wall_ms"].GetDouble();
  // The frame after it ends the gap (reported at once: it is late), which covers wall / interval frames;
  // that gap is a `frame` record of its own. Only that record is held to the message's length: on a loaded
  // machine frames around it come late too (real drops, each its own short record), so the total dropped
  // count grows by more than the slow message alone. Wait for that record (not just any drop).
  const auto t1 = Clock::now();
  FrameRecord gap = LongestNewGap(gaps0);
  while (MsSince(t1) < 10000 && gap.gap_ms < wall - kFrameMs) {
    StayBusy(10);
    gap = LongestNewGap(gaps0);
  }
  ASSERT_GT(gap.gap_ms, 0) << "no frame record for the slow message; " << CallString("status");
  EXPECT_NEAR(static_cast<double>(gap.dropped), wall / kFrameMs, 3) << CallString("status");
  EXPECT_GE(Status().Frames()["dropped"].GetInt64() - dropped0, gap.dropped);
}

// The main thread's messages (looper.message records) in an exported trace: "ts name" -> wall ms.
std::map<std::string, double> MessageRecords(const std::string& trace) {
  std::map<std::string, double> out;
  rapidjson::Document d;
  d.Parse(trace.c_str());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("traceEvents")) return out;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (!e.HasMember("cat") || std::string(e["cat"].GetString()) != "looper.message" || !e.HasMember("dur")) continue;
    char ts[64];
    std::snprintf(ts, sizeof ts, "%.3f ", e["ts"].GetDouble());
    out[ts + std::string(e["name"].GetString())] = e["dur"].GetDouble() / 1000;
  }
  return out;
}

// Messages recorded since `before` that may have made a frame busy: at least half the quarter frame that
// makes one (a frame's busy time is the sum of the messages since the previous frame, here at most the
// frame's own message and one of the test's probes).
int64_t NewBusyMessages(const std::map<std::string, double>& before) {
  int64_t n = 0;
  for (const auto& [key, wall_ms] : MessageRecords(ExportedTrace())) {
    if (!before.count(key) && wall_ms >= kFrameMs / 4 / 2) ++n;
  }
  return n;
}

// How long the app's main thread (its kernel tid: LooperScenarios.mainTid) has waited on a run queue while
// runnable, in ms (schedstat): the host's hold on it, ground truth for what load did to a window of the
// test. 0 if the kernel keeps no schedstat (the bounds are then the unloaded ones).
double MainHeldMs(pid_t main_tid) { return static_cast<double>(RunDelayNs(main_tid)) / 1e6; }

// Frames the host's hold of the main thread may have made busy: a frame is busy at a quarter frame of
// messages since the previous one, and a held message counts its hold; the test's own probe messages
// (~0.1-1 ms) fill the rest. So each half quarter frame of hold, rounded up (any hold at all counts as one),
// may restart the run once.
int64_t HeldRestarts(double held_ms) { return static_cast<int64_t>(std::ceil(held_ms / (kFrameMs / 4 / 2))); }

// The main looper's dispatches so far, each from before its ">>>>>" printer line to after its "<<<<<" one,
// in ms (the stand-in Looper's own clock: whatever a Printer measures of a dispatch lies inside).
double MainDispatchMs() { return static_cast<double>(CallStaticLong("android.os.Looper", "mainDispatchNanos")) / 1e6; }

// The ticker parks after kParkAfterFrames quiet on-time frames in a row. A late frame (a gap with a dropped
// frame: "janky") or a busy one (a quarter frame of messages since the previous frame) restarts that run, and
// on a loaded machine both happen without the app doing anything (the vsync thread or the main thread waits
// for a core, inside a message or between them). So the bound on the frames it takes to park is computed from
// how many late frames the monitor counted and how many long messages it recorded meanwhile, not from the
// nominal 30. On a quiet machine both stay put and the bound is the nominal one.
int64_t ParkBound(int64_t restarts) { return (std::max<int64_t>(restarts, 0) + 1) * (kParkAfterFrames + 3); }

TEST_F(LooperJvmTest, IdleLooperParksTheTickerAndAMessageResumesIt) {
  // Ground truth: the ticker's own parked state and the stand-in Choreographer's counts of frame callbacks
  // run (the ticker is the only one) and of frames skipped (delivered late), all read on the main thread.
  // Deadlines are bounds on waiting for an event (parked, resumed), generous for a loaded machine and an
  // ASan build; the test goes on as soon as the event happens.
  const int64_t kParkTimeoutMs = 15000;
  const int64_t kParkedHoldMs = 400;  // 24 intervals: counted as a gap, it would be 23 dropped frames
  // The host's hold on the main thread (MainHeldMs) is read from its /proc entry. (Its name, "main", is not
  // unique: the JVM's launching thread took it too now and then.)
  const pid_t main_tid = Scenario("mainTid");
  ASSERT_GT(main_tid, 0) << "the main thread's tid was not read";
  const int64_t calls0 = AwaitTickerParked(kParkTimeoutMs);
  ASSERT_GE(calls0, 0) << "the ticker never parked; " << CallString("status");
  // Parked, it asks for no frame: none runs however long the main thread stays idle.
  std::this_thread::sleep_for(std::chrono::milliseconds(kParkedHoldMs));
  EXPECT_EQ(FrameCallbacksRun(), calls0) << "a parked ticker ran frame callbacks";
  const FrameCounts f0 = Frames();
  const int skipped0 = Scenario("skippedFrames");

  // Busy: frames are counted; idle again: the ticker stops kParkAfterFrames quiet frames after the last busy
  // message (plus one run per late frame).
  const auto busy_t0 = Clock::now();
  const int64_t calls_busy_end = StayBusy(700);
  const double busy_ms = MsSince(busy_t0);
  ASSERT_GE(calls_busy_end, 0);
  const FrameCounts f_busy = Frames();
  const auto messages_busy_end = MessageRecords(ExportedTrace());
  // While it runs every refresh interval is a frame, on time or dropped (late ones are what load causes).
  EXPECT_GE((calls_busy_end - calls0) + (f_busy.dropped - f0.dropped), busy_ms / kFrameMs / 2)
      << "the ticker did not run while the app was busy; " << CallString("status");
  const double held_busy_end = MainHeldMs(main_tid);
  const int64_t calls1 = AwaitTickerParked(kParkTimeoutMs);
  ASSERT_GE(calls1, 0) << "the ticker never parked; " << CallString("status");
  const FrameCounts f1 = Frames();
  const double held1 = MainHeldMs(main_tid) - held_busy_end;
  // It cannot park before kParkAfterFrames quiet frames (the frame after the last busy message is not quiet),
  // whatever the load...
  EXPECT_GE(calls1 - calls_busy_end, kParkAfterFrames) << CallString("status");
  // ... and it does park once that many came in a row. (Late frames counted from before the busy spell: any
  // read after it comes after some frames of the countdown, and a late one missed would make the bound too
  // tight.)
  // (Messages: those recorded after the busy spell's export, which may miss one that ended in between, hence
  // one more run. Held: the host kept the main thread off a CPU for that long meanwhile, and the probes'
  // messages so stretched can add up to a busy frame without one of them reaching half a quarter frame.)
  EXPECT_LE(calls1 - calls_busy_end,
            ParkBound(f1.janky - f0.janky + NewBusyMessages(messages_busy_end) + 1 + HeldRestarts(held1)))
      << "main thread held " << held1 << " ms; " << CallString("status");
  // Parked means flushed: the monitor has seen every frame the Choreographer ran for it.
  EXPECT_EQ(f1.frames - f0.frames, calls1 - calls0) << CallString("status");
  // The parked period before the busy spell was not counted as dropped frames: the monitor's drops are the
  // frames the Choreographer itself delivered late (what load causes), not more. A counted parked gap would
  // add kParkedHoldMs / interval - 1 = 23.
  const int skipped1 = Scenario("skippedFrames");
  EXPECT_LE(f1.dropped - f0.dropped, skipped1 - skipped0 + 2) << "skipped " << skipped1 - skipped0 << "; " << CallString("status");

  // Quick messages (far below a quarter frame) leave it parked. "Quick" is what the main thread's dispatches
  // took, as the stand-in Looper timed them around the printer lines (whatever the ticker measures of a
  // dispatch lies inside): on a loaded host a dispatch can be held off a CPU or stopped at a JVM safepoint
  // (blocked, not runnable: no run delay shows it) for milliseconds, and then resuming is right (the ticker
  // is parked again before the next step either way). Below a quarter frame in all, no window of them can
  // reach one, and the ticker must not have resumed.
  // While parked the ticker sums the busy time of the dispatches that end within one refresh interval
  // (FrameTicker.onDispatchEnd), not just the batch's. The probes above (skippedFrames, the parked check's
  // reflection) are main-thread messages too: on a loaded host they can resume the ticker themselves, before
  // the batch, or share the batch's window (CI, ASan and host runs: "quick messages (139 us ...)", and with a
  // 0.3 ms batch). So the batch starts from a known state: after a wait longer than any interval the
  // ticker takes for a frame's (MAX_INTERVAL_NANOS, 50 ms) with nothing posted to the main thread, the
  // dispatch clock is read, then a check that the ticker is still parked (a probe whose dispatch counts in
  // the sum below); if the probes resumed it, it parks again and the wait starts over.
  int64_t calls_before = -1;
  double held_quick0 = 0, dispatch_quick0 = 0;
  for (int attempt = 0; attempt < 5 && calls_before < 0; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    held_quick0 = MainHeldMs(main_tid);
    dispatch_quick0 = MainDispatchMs();
    calls_before = AwaitTickerParked(0);
    if (calls_before < 0) {
      ASSERT_GE(AwaitTickerParked(kParkTimeoutMs), 0) << "the ticker never parked again; " << CallString("status");
    }
  }
  ASSERT_GE(calls_before, 0) << "the probes kept resuming the ticker; " << CallString("status");
  const int quick_us = Scenario("runQuickTimed", "(I)I", {I(5)});
  ASSERT_GE(quick_us, 0);
  int64_t calls_quick = AwaitTickerParked(0);  // -1: it resumed
  // Every dispatch since the clock was read: the parked check's, the batch's, at most part of the last check.
  const double batch_ms = MainDispatchMs() - dispatch_quick0;
  const double held_quick = MainHeldMs(main_tid) - held_quick0;
  if (batch_ms < kFrameMs / 4) {
    EXPECT_EQ(calls_quick, calls_before) << "quick messages (" << batch_ms << " ms of dispatches in all, "
                                         << quick_us << " us from the first to the last, main thread held "
                                         << held_quick << " ms) woke the ticker";
  }
  if (calls_quick < 0) calls_quick = AwaitTickerParked(kParkTimeoutMs);
  ASSERT_GE(calls_quick, 0) << CallString("status");
  std::this_thread::sleep_for(std::chrono::milliseconds(kParkedHoldMs));
  const FrameCounts f_quick = Frames();
  const int skipped_quick = Scenario("skippedFrames");
  const auto messages_quick = MessageRecords(ExportedTrace());

  // A message that keeps the main thread busy for a frame resumes it; with nothing after it, it parks again.
  ASSERT_GE(Scenario("runSlowThenFrameCallbacks", "(J)I", {J(20)}), 0);
  const auto t0 = Clock::now();
  while (MsSince(t0) < kParkTimeoutMs && FrameCallbacksRun() == calls_quick) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GT(FrameCallbacksRun(), calls_quick) << "a busy message did not resume the ticker";
  const double held_slow0 = MainHeldMs(main_tid);
  const int64_t calls2 = AwaitTickerParked(kParkTimeoutMs);
  ASSERT_GE(calls2, 0) << "the ticker never parked again; " << CallString("status");
  const FrameCounts f2 = Frames();
  const double held2 = MainHeldMs(main_tid) - held_slow0;
  EXPECT_GE(calls2 - calls_quick, kParkAfterFrames) << CallString("status");
  // (The 20 ms message itself is one of the long messages: the run it starts is the first one.)
  EXPECT_LE(calls2 - calls_quick,
            ParkBound(f2.janky - f_quick.janky + NewBusyMessages(messages_quick) - 1 + HeldRestarts(held2)))
      << "main thread held " << held2 << " ms; " << CallString("status");
  EXPECT_EQ(f2.frames - f0.frames, calls2 - calls0) << CallString("status");
  const int skipped2 = Scenario("skippedFrames");
  EXPECT_LE(f2.dropped - f_quick.dropped, skipped2 - skipped_quick + 2)
      << "the parked gap counted as dropped frames; skipped " << skipped2 - skipped_quick << "; " << CallString("status");
}

TEST_F(LooperJvmTest, SwitchedOffItPutsBackThePrinterItChainedToAndOnAgainItChainsAgain) {
  const char* kOff = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
                     R"("looper":{"enabled":false}})";
  const std::string chained = Status().Str("chained_to");
  ASSERT_EQ(Configure(kOff), 0) << CallString("status");
  EXPECT_EQ(Status().state, "off");
  const std::string chain = ScenarioString("printerChain");
  EXPECT_EQ(chain.find("jankprobe"), std::string::npos) << chain;
  EXPECT_EQ(chain.rfind(chained == "none" ? "null" : chained, 0), 0u) << chain << " vs " << chained;
  // Off means off: messages are no longer counted.
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(5)}), 0);
  EXPECT_EQ(Status().details, nullptr);

  ASSERT_EQ(Configure(kConfig), 0) << CallString("status");
  LooperStatus s = Status();
  EXPECT_EQ(s.state, "on");
  EXPECT_EQ(s.Str("printer"), "installed");
  EXPECT_EQ(ScenarioString("printerChain").rfind("jankprobe.LooperPrinter(active -> ", 0), 0u);
  const int64_t m0 = s.Int("messages");
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(5)}), 0);
  EXPECT_GE(Status().Int("messages") - m0, 5);
}

}  // namespace
}  // namespace jp::testing
