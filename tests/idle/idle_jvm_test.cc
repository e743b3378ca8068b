// The IdleHandler monitor on a real JVM with the faithful android.os stand-ins: handlers registered before
// start keep running, every call is timed, a slow one is reported with a stack taken while it ran, removal
// and false-return semantics survive the swap, and switching off puts back a plain list.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

constexpr int kLagMs = 150;
const char* kConfig =
    R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},"idle":{"lag_ms":150}})";

class IdleJvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const AppLaunch& launch = LaunchApp(kConfig);
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
    ASSERT_EQ(launch.start_rc, 0) << CallString("status");
  }

  rapidjson::Document Parse(const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.c_str());
    EXPECT_FALSE(d.HasParseError()) << json;
    return d;
  }

  // The idle_lag report naming `handler`, awaited, for a call that slept sleep_ms from t0: its duration lies
  // between that and the time waited for the report (ground truth), its stack was captured while the call
  // ran and has a frame containing each of `frames`. Returns the report ("" when none came) and its parse
  // in *d.
  std::string AwaitSlowCallReport(const char* handler, int sleep_ms, std::chrono::steady_clock::time_point t0,
                                  std::initializer_list<const char*> frames, rapidjson::Document* d) {
    const std::string json = AwaitReport("idle_lag", handler, 5000);
    if (json.empty()) {
      ADD_FAILURE() << "no idle_lag report for " << handler << "; status: " << CallString("status");
      return json;
    }
    const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    *d = Parse(json);
    EXPECT_GE((*d)["dur_ms"].GetDouble(), sleep_ms);
    EXPECT_LE((*d)["dur_ms"].GetDouble(), waited_ms);
    EXPECT_TRUE(d->HasMember("stack") && d->HasMember("stack_captured_while_stuck") &&
                (*d)["stack_captured_while_stuck"].GetBool())
        << json;
    for (const char* frame : frames) EXPECT_TRUE(StackHas(*d, frame)) << frame << " in " << json;
    return json;
  }

  // Whether a report's stack has a frame containing `needle`.
  static bool StackHas(const rapidjson::Document& d, const char* needle) {
    if (!d.HasMember("stack")) return false;
    for (const auto& f : d["stack"].GetArray()) {
      if (std::string(f["frame"].GetString()).find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

std::string IdleState() { return StatusOf("idle").state; }

// One of the idle monitor's counters from status() ("calls", "deadline_arms", "folded", ...), UINT64_MAX
// when absent.
uint64_t IdleDetail(const char* key) { return StatusOf("idle").Uint(key); }

// n calls of a trivial handler through its wrapper on the main thread (IdleBench.nanosOnMain): whether all
// of them ran.
bool WrappedCallsOnMain(int n) {
  JavaResult r = Jvm()->CallStatic("com.example.app.IdleBench", "nanosOnMain", "(IZ)J", {I(n), Z(true)});
  EXPECT_TRUE(r.ok) << r.why;
  EXPECT_GE(r.ok ? r.value.j : -1, 0) << "-1: a call did not keep its handler, -2: the main thread did not run them";
  return r.ok && r.value.j >= 0;
}

TEST_F(IdleJvmTest, HandlerRegisteredBeforeStartIsKeptAndTimed) {
  EXPECT_EQ(IdleState(), "on");
  const std::string list = CallString("idleHandlersDescription");
  EXPECT_EQ(list, "com.jankprobe.TimingIdleHandlerList[com.jankprobe.TimingIdleHandlerList$Timed]");
  const int before = CallInt("earlyCalls");
  ASSERT_EQ(CallInt("pokeMain"), 1);
  EXPECT_GT(CallInt("earlyCalls"), before) << "the handler the app registered before start no longer runs";
}

// Short handlers must not cost a watchdog deadline each: arming one per call meant a futex wake of the
// idle watchdog thread (and two of its wake-ups) per idle pass. One deadline serves every call that starts
// while it is armed, so arms grow with elapsed lag periods, not with calls.
TEST_F(IdleJvmTest, ShortHandlersShareOneDeadlinePerLagPeriod) {
  constexpr int kPasses = 60;
  const uint64_t calls0 = IdleDetail("calls"), arms0 = IdleDetail("deadline_arms");
  ASSERT_NE(calls0, UINT64_MAX) << CallString("status");
  ASSERT_NE(arms0, UINT64_MAX) << CallString("status");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kPasses; ++i) ASSERT_EQ(CallInt("pokeMain"), 1);
  const double elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t calls = IdleDetail("calls") - calls0, arms = IdleDetail("deadline_arms") - arms0;
  EXPECT_GE(calls, static_cast<uint64_t>(kPasses)) << "every pass runs at least the poke's own handler";
  // At most one arm per lag period that elapsed (the deadline fires, finds a short call or none, and the
  // next call arms again), plus the first.
  const uint64_t bound = 2 + static_cast<uint64_t>(elapsed_ms / kLagMs);
  EXPECT_LE(arms, bound) << calls << " calls in " << elapsed_ms << " ms";
  EXPECT_LT(arms, calls) << "one deadline per call";
}

constexpr const char* kScenarios = "com.example.app.IdleScenarios";

// "membarrier" when the watchdog's side of the Dekker pair with the Java wrapper is a membarrier (Java
// then skips the native arm while a deadline covers its calls), "full" otherwise.
std::string IdleFence() { return StatusOf("idle").Str("fence"); }

// The wrapper's steady state makes no native call for a short handler call (it ends in Java, folded): it
// writes the start into the shared word and calls nativeArm only when no armed deadline covers it, which a
// stream of short calls finds about once per lag period. Without the membarrier every call must take the native arm (its real fence).
TEST_F(IdleJvmTest, WrapperCallsTheNativeArmOnlyWhenNoDeadlineCoversItsCall) {
  constexpr int kCalls = 20000;
  const uint64_t calls0 = IdleDetail("calls"), arm0 = IdleDetail("arm_calls"), arms0 = IdleDetail("deadline_arms");
  ASSERT_NE(arm0, UINT64_MAX) << CallString("status");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(WrappedCallsOnMain(kCalls));
  const double elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t calls = IdleDetail("calls") - calls0, arm_calls = IdleDetail("arm_calls") - arm0;
  const uint64_t arms = IdleDetail("deadline_arms") - arms0;
  EXPECT_GE(calls, static_cast<uint64_t>(kCalls)) << "every wrapped call is counted";
  const std::string fence = IdleFence();
  if (fence == "membarrier") {
    // A deadline fires about once per lag period; each fire lets at most the call or two starting right
    // then find `covered` down. Plus the first call, if nothing was armed.
    const uint64_t periods = 2 + static_cast<uint64_t>(elapsed_ms / kLagMs);
    EXPECT_LE(arm_calls, 2 * periods) << calls << " calls in " << elapsed_ms << " ms, " << arms << " deadline arms; " << CallString("status");
    EXPECT_LE(arms, periods);
  } else {
    ASSERT_EQ(fence, "full");
    EXPECT_GE(arm_calls, static_cast<uint64_t>(kCalls)) << "without membarrier every call needs the native fence";
  }
}

// While calls go on, the watchdog keeps its deadline armed (and covered set) itself at each lag point, so
// a stream of calls over several lag periods makes at most the first call arm (the old protocol let the
// deadline lapse at each fire, and the next call armed it: one nativeArm per lag period on the main
// thread). Once the calls stop, the chain ends within two lag periods: no watchdog wakes for an app that
// runs no idle handlers.
TEST_F(IdleJvmTest, TheWatchdogKeepsTheDeadlineWhileCallsGoOnAndStopsWhenTheyStop) {
  if (IdleFence() != "membarrier") GTEST_SKIP() << "without membarrier every call takes the native arm";
  constexpr int kStreamMs = 6 * kLagMs;
  const uint64_t arm0 = IdleDetail("arm_calls"), rearms0 = IdleDetail("chain_rearms");
  const uint64_t arms0 = IdleDetail("deadline_arms");
  ASSERT_NE(rearms0, UINT64_MAX) << CallString("status");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(Jvm()->CallStatic(kScenarios, "startStream", "(J)V", {J(kStreamMs)}).ok);
  JavaResult streamed = Jvm()->CallStatic(kScenarios, "awaitStream", "(J)I", {J(10000)});
  ASSERT_TRUE(streamed.ok) << streamed.why;
  ASSERT_GT(streamed.value.i, 0) << "the main thread's wrapped calls stalled";
  const double elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t arm_calls = IdleDetail("arm_calls") - arm0, rearms = IdleDetail("chain_rearms") - rearms0;
  const uint64_t arms = IdleDetail("deadline_arms") - arms0;
  // The first call arms if the chain had ended before, and once more if that deadline was armed before the
  // watchdog thread reached the VM (this test run first in its process: the uncovered deadline lapses at
  // its first fire); the old protocol armed once per lag period (6 here). A watchdog thread that reaches
  // no VM leaves covered at 0 (the status says "off"), which this test does not expect.
  ASSERT_EQ(StatusOf("idle").Str("covered"), "java") << CallString("status");
  EXPECT_LE(arm_calls, 2u) << streamed.value.i << " calls in " << elapsed_ms << " ms; " << CallString("status");
  // Each fire during the stream re-arms (a late watchdog fires fewer times, never more than once a period).
  EXPECT_GE(rearms, 2u) << CallString("status");
  EXPECT_LE(arms, 2 + static_cast<uint64_t>(elapsed_ms / kLagMs)) << CallString("status");
  // Calls stopped: the second fire after them finds lastEnd where the first left it and lets the deadline
  // lapse. A watchdog thread the host runs late may take longer to get there: a few tries, each a quiet
  // span of three lag periods; a chain that never ends moves in every one.
  bool settled = false;
  for (int i = 0; i < 5 && !settled; ++i) {
    const uint64_t before = IdleDetail("chain_rearms");
    usleep(3 * kLagMs * 1000);
    settled = IdleDetail("chain_rearms") == before;
  }
  EXPECT_TRUE(settled) << "the chain goes on with no calls; " << CallString("status");
}

// A folded call ends in Java, which must clear the running-call word as the native end does: otherwise the
// watchdog, re-arming for the last start it saw, would find that call "running" past lag_ms once the main
// thread goes quiet and take a stack of a call that ended long ago.
TEST_F(IdleJvmTest, FoldedCallsLeaveNothingRunningForTheWatchdog) {
  constexpr int kCalls = 2000;
  ASSERT_EQ(IdleDetail("record_min_us"), 1000u) << CallString("status");
  const uint64_t captures0 = IdleDetail("stack_captures"), folded0 = IdleDetail("folded");
  ASSERT_NE(captures0, UINT64_MAX) << CallString("status");
  ASSERT_TRUE(WrappedCallsOnMain(kCalls));
  EXPECT_GE(IdleDetail("folded") - folded0, static_cast<uint64_t>(kCalls)) << "the calls were not folded";
  // Quiet for three lag periods: a deadline armed during the stream fires (and re-arms for any start it
  // still sees) in that time.
  usleep(3 * kLagMs * 1000);
  EXPECT_EQ(IdleDetail("stack_captures"), captures0) << CallString("status");
}

// A slow call that starts right behind a short one finds the deadline the short one armed (or found) and
// makes no native call before its handler runs; the deadline, due at the short call's lag point, must find
// the slow call running, re-arm for its lag point and capture its stack there.
TEST_F(IdleJvmTest, SlowCallBehindAShortOneIsCaughtWithItsStack) {
  constexpr int kSleepMs = 3 * kLagMs;
  const auto t0 = std::chrono::steady_clock::now();
  JavaResult r = Jvm()->CallStatic(kScenarios, "shortThenSlowOnMain", "(J)I", {J(kSleepMs)});
  ASSERT_TRUE(r.ok) << r.why;
  ASSERT_EQ(r.value.i, 1);
  rapidjson::Document d;
  EXPECT_FALSE(AwaitSlowCallReport("BehindShortHandler", kSleepMs, t0, {"BehindShortHandler.stuckBehindAShortCall"}, &d)
                   .empty());
}

// Switching the monitor off and on while the main thread streams wrapped calls: every switch completes (the
// drain waits only for calls inside the native code), the calls keep running, and afterwards the deadline
// bookkeeping is sound: a slow call is still caught with its stack (a `covered` word left up by a stop
// would make every later wrapper skip arming, and no deadline would ever fire again).
TEST_F(IdleJvmTest, SwitchingOffAndOnWhileCallsStreamKeepsSlowCallsCaught) {
  constexpr int kStreamMs = 600;
  const std::string off = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},)"
                          R"("idle":{"enabled":false,"lag_ms":150}})";
  ASSERT_TRUE(Jvm()->CallStatic(kScenarios, "startStream", "(J)V", {J(kStreamMs)}).ok);
  int switches = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(kStreamMs)) {
    ASSERT_EQ(Configure(off), 0) << CallString("status");
    ASSERT_EQ(IdleState(), "off");
    ASSERT_EQ(Configure(kConfig), 0) << CallString("status");
    ASSERT_EQ(IdleState(), "on");
    ++switches;
  }
  JavaResult streamed = Jvm()->CallStatic(kScenarios, "awaitStream", "(J)I", {J(10000)});
  ASSERT_TRUE(streamed.ok) << streamed.why;
  EXPECT_GT(streamed.value.i, 0) << "the main thread's wrapped calls stalled";
  EXPECT_GE(switches, 3);

  constexpr int kSleepMs = 3 * kLagMs;
  const auto t1 = std::chrono::steady_clock::now();
  JavaResult r = Jvm()->CallStatic(kScenarios, "slowOnMain", "(J)I", {J(kSleepMs)});
  ASSERT_TRUE(r.ok) << r.why;
  ASSERT_EQ(r.value.i, 1);
  rapidjson::Document d;
  const std::string json =
      AwaitSlowCallReport("AfterTogglingHandler", kSleepMs, t1, {"AfterTogglingHandler.stuckAfterToggling"}, &d);
  EXPECT_FALSE(json.empty()) << "after " << switches << " switches";
}

TEST_F(IdleJvmTest, SlowHandlerIsReportedWithItsOwnStack) {
  constexpr int kSleepMs = 450;
  const auto t0 = std::chrono::steady_clock::now();
  JavaResult r = Jvm()->CallStatic(kTestApp, "addSlowIdleHandler", "(J)I", {J(kSleepMs)});
  ASSERT_TRUE(r.ok) << r.why;
  // Ground truth: the handler sleeps kSleepMs; the measured call cannot be shorter, nor longer than the wait.
  rapidjson::Document d;
  const std::string json = AwaitSlowCallReport(
      "SlowIdleHandler", kSleepMs, t0,
      {"com.example.app.SlowIdleHandler.prefetchEverything", "android.os.MessageQueue.next"}, &d);
  ASSERT_FALSE(json.empty());
  EXPECT_STREQ(d["monitor"].GetString(), "idle");
  EXPECT_STREQ(d["handler"].GetString(), "com.example.app.SlowIdleHandler");
  EXPECT_FALSE(d["keep"].GetBool());
  EXPECT_EQ(d["lag_ms"].GetInt(), kLagMs);

  // It returned false: the queue removed it (through the wrapper) and it never runs again.
  ASSERT_EQ(CallInt("pokeMain"), 1);
  ASSERT_EQ(CallInt("pokeMain"), 1);
  EXPECT_EQ(CallInt("slowCalls"), 1);
  EXPECT_EQ(CallString("idleHandlersDescription"),
            "com.jankprobe.TimingIdleHandlerList[com.jankprobe.TimingIdleHandlerList$Timed]");
}

// kConfig with idle.record_min_us set (and, optionally, a timeline capacity, which rebuilds the timeline).
// A change of record_min_us alone retunes the running monitor (hook/config_diff.cc).
std::string WithRecordMinUs(int us, int capacity = 0) {
  std::string c = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},)"
                  R"("idle":{"lag_ms":150,"record_min_us":)" + std::to_string(us) + "}";
  if (capacity) c += R"(,"timeline":{"capacity":)" + std::to_string(capacity) + "}";
  return c + "}";
}

// The idle.handler records of an exported timeline: their names (handler classes) and durations (ms).
struct HandlerRecord {
  std::string name;
  double dur_ms = -1;
};
std::vector<HandlerRecord> IdleHandlerRecords(const std::string& trace) {
  std::vector<HandlerRecord> records;
  rapidjson::Document d;
  d.Parse(trace.c_str());
  if (d.HasParseError() || !d.HasMember("traceEvents")) {
    ADD_FAILURE() << "unreadable trace: " << trace.substr(0, 300);
    return records;
  }
  for (const auto& ev : d["traceEvents"].GetArray()) {
    if (!ev.HasMember("cat") || std::string(ev["cat"].GetString()) != "idle.handler") continue;
    records.push_back({ev["name"].GetString(), ev.HasMember("dur") ? ev["dur"].GetDouble() / 1000.0 : -1});  // us
  }
  return records;
}

// The durations (ms) of those named `handler_class`.
std::vector<double> HandlerRecords(const std::string& trace, const std::string& handler_class) {
  std::vector<double> durs;
  for (const HandlerRecord& r : IdleHandlerRecords(trace)) {
    if (r.name == handler_class) durs.push_back(r.dur_ms);
  }
  return durs;
}

constexpr const char* kSlowClass = "com.example.app.SlowIdleHandler";

// Calls shorter than record_min_us leave no timeline record of their own; their class's figures count
// them, and the count and time agree with what the handlers did: n one-shot handlers, each sleeping
// kSleepMs once (ground truth: each call took at least that, all of them at most the time waited).
TEST_F(IdleJvmTest, ShortCallsAreFoldedIntoTheirClassFiguresWithoutRecords) {
  constexpr int kCalls = 5, kSleepMs = 5;
  ASSERT_EQ(Configure(WithRecordMinUs(50000)), 0) << CallString("status");  // 50 ms: the 5 ms calls fold
  ASSERT_EQ(CallInt("pokeMain"), 1);
  const size_t records0 = HandlerRecords(ExportedTrace(), kSlowClass).size();
  const IdleClassFigures f0 = ClassFiguresOf(kSlowClass);
  const uint64_t folded0 = IdleDetail("folded"), recorded0 = IdleDetail("recorded");
  ASSERT_NE(folded0, UINT64_MAX) << CallString("status");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_GE(CallInt("addSlowIdleHandler", "(J)I", {J(kSleepMs)}), 0);
    ASSERT_EQ(CallInt("pokeMain"), 1);  // the one-shot handler ran (and removed itself) in that pass
  }
  const double waited_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  const IdleClassFigures f = ClassFiguresOf(kSlowClass);
  ASSERT_TRUE(f.found) << CallString("status");
  EXPECT_EQ(f.calls - f0.calls, static_cast<uint64_t>(kCalls)) << CallString("status");
  EXPECT_EQ(f.folded - f0.folded, static_cast<uint64_t>(kCalls));
  EXPECT_GE(f.total_ns - f0.total_ns, static_cast<uint64_t>(kCalls) * kSleepMs * 1000000);
  EXPECT_LE(static_cast<double>(f.total_ns - f0.total_ns), waited_ns);
  EXPECT_GE(f.max_ns, static_cast<uint64_t>(kSleepMs) * 1000000);
  EXPECT_GE(IdleDetail("folded") - folded0, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(IdleDetail("recorded"), recorded0) << "a short call got a record of its own";
  EXPECT_EQ(HandlerRecords(ExportedTrace(), kSlowClass).size(), records0);
  ASSERT_EQ(Configure(kConfig), 0);
}

// A call at least record_min_us long gets its record, with its duration (and is counted as recorded, not
// folded); the same handler class folds again below the threshold (the remote flag applies at once).
TEST_F(IdleJvmTest, ACallOfAtLeastRecordMinUsGetsItsRecord) {
  constexpr int kSleepMs = 5;
  ASSERT_EQ(Configure(WithRecordMinUs(2000)), 0) << CallString("status");
  EXPECT_EQ(IdleDetail("record_min_us"), 2000u);
  const size_t records0 = HandlerRecords(ExportedTrace(), kSlowClass).size();
  const IdleClassFigures f0 = ClassFiguresOf(kSlowClass);
  const uint64_t recorded0 = IdleDetail("recorded");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_GE(CallInt("addSlowIdleHandler", "(J)I", {J(kSleepMs)}), 0);
  ASSERT_EQ(CallInt("pokeMain"), 1);
  const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<double> records = HandlerRecords(ExportedTrace(), kSlowClass);
  ASSERT_EQ(records.size(), records0 + 1) << "no record for a call over record_min_us";
  EXPECT_GE(records.back(), kSleepMs);
  EXPECT_LE(records.back(), waited_ms);
  EXPECT_GE(IdleDetail("recorded") - recorded0, 1u);
  const IdleClassFigures f = ClassFiguresOf(kSlowClass);
  EXPECT_EQ(f.calls - f0.calls, 1u);
  EXPECT_EQ(f.folded, f0.folded) << "a recorded call counted as folded";

  // Raised past the call's length: the next such call folds.
  ASSERT_EQ(Configure(WithRecordMinUs(100000)), 0) << CallString("status");
  ASSERT_GE(CallInt("addSlowIdleHandler", "(J)I", {J(kSleepMs)}), 0);
  ASSERT_EQ(CallInt("pokeMain"), 1);
  EXPECT_EQ(HandlerRecords(ExportedTrace(), kSlowClass).size(), records0 + 1);
  EXPECT_EQ(ClassFiguresOf(kSlowClass).folded, f0.folded + 1);
  ASSERT_EQ(Configure(kConfig), 0);
}

// record_min_us 0: every call has its record, the trivial ones too (the handler registered before start
// runs once per idle pass).
TEST_F(IdleJvmTest, RecordMinUsZeroRecordsEveryCall) {
  constexpr int kPasses = 3;
  const char* counting = "com.example.app.CountingIdleHandler";
  ASSERT_EQ(Configure(WithRecordMinUs(0)), 0) << CallString("status");
  ASSERT_EQ(CallInt("pokeMain"), 1);
  const size_t records0 = HandlerRecords(ExportedTrace(), counting).size();
  const uint64_t folded0 = IdleDetail("folded");
  const int early0 = CallInt("earlyCalls");
  for (int i = 0; i < kPasses; ++i) ASSERT_EQ(CallInt("pokeMain"), 1);
  const int early = CallInt("earlyCalls") - early0;
  ASSERT_GE(early, kPasses);
  // Every call of the counting class since (the early handler's, and any other CountingIdleHandler's).
  EXPECT_GE(HandlerRecords(ExportedTrace(), counting).size() - records0, static_cast<size_t>(early));
  EXPECT_EQ(IdleDetail("folded"), folded0) << "a call was folded with record_min_us 0";
  ASSERT_EQ(Configure(kConfig), 0);
}

// The wrapper caches the key of its interned class name; a new timeline (a capacity change rebuilds it and
// restarts the monitors) has a new string table, so a stale key must be noticed and the name interned again.
TEST_F(IdleJvmTest, HandlerNamesSurviveATimelineRebuild) {
  ASSERT_EQ(Configure(WithRecordMinUs(0)), 0) << CallString("status");
  ASSERT_EQ(CallInt("pokeMain"), 1);  // the counting handler's wrapper now holds a key
  ASSERT_EQ(Configure(WithRecordMinUs(0, 2048)), 0) << CallString("status");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(CallInt("pokeMain"), 1);
  const std::string trace = ExportedTrace();
  ASSERT_EQ(Configure(kConfig), 0);
  // Every idle.handler record of the new timeline carries a handler class name, the counting one among them.
  const std::vector<HandlerRecord> records = IdleHandlerRecords(trace);
  int counting = 0;
  for (const HandlerRecord& r : records) {
    EXPECT_EQ(r.name.rfind("com.example.app.", 0), 0u) << "a stale key named a record " << r.name;
    counting += r.name == "com.example.app.CountingIdleHandler";
  }
  EXPECT_GE(records.size(), 3u);
  EXPECT_GE(counting, 3);
}

// The bytes of com.example.app.CountingIdleHandler with its name changed to `name` (same length: every
// occurrence in the constant pool, the class itself and descriptors, is replaced in place), defined in the
// app's loader: a distinct handler class per name, as many as a test needs.
jclass DefineCountingClass(JNIEnv* env, const std::string& name) {
  static std::string bytes = [env] {
    std::string b;
    if (env->PushLocalFrame(16) != 0) return b;
    struct PopFrame {
      JNIEnv* env;
      ~PopFrame() { env->PopLocalFrame(nullptr); }
    } pop{env};
    jobject loader = Jvm()->app_loader();
    jclass loader_class = env->GetObjectClass(loader);
    jmethodID get = env->GetMethodID(loader_class, "getResourceAsStream", "(Ljava/lang/String;)Ljava/io/InputStream;");
    jobject in = env->CallObjectMethod(loader, get, env->NewStringUTF("com/example/app/CountingIdleHandler.class"));
    if (!in || env->ExceptionCheck()) return b;
    jmethodID read_all = env->GetMethodID(env->GetObjectClass(in), "readAllBytes", "()[B");
    auto arr = static_cast<jbyteArray>(env->CallObjectMethod(in, read_all));
    if (!arr || env->ExceptionCheck()) return b;
    b.resize(static_cast<size_t>(env->GetArrayLength(arr)));
    env->GetByteArrayRegion(arr, 0, env->GetArrayLength(arr), reinterpret_cast<jbyte*>(b.data()));
    return b;
  }();
  const std::string from = "com/example/app/CountingIdleHandler";
  if (bytes.empty() || name.size() != from.size()) return nullptr;
  std::string renamed = bytes;
  for (size_t at = renamed.find(from); at != std::string::npos; at = renamed.find(from, at + from.size())) {
    renamed.replace(at, from.size(), name);
  }
  return env->DefineClass(name.c_str(), Jvm()->app_loader(), reinterpret_cast<const jbyte*>(renamed.data()),
                          static_cast<jsize>(renamed.size()));
}

// More handler classes than the wrapper keeps figures for: the extra classes are still timed (their calls go
// through the native end, which counts and, with record_min_us 0, records them), the figures stay bounded.
TEST_F(IdleJvmTest, MoreHandlerClassesThanFiguresAreStillTimed) {
  constexpr int kClasses = 70;  // TimingIdleHandlerList.MAX_CLASSES is 64
  JNIEnv* env = Jvm()->Env();
  // 70 classes' records: a ring larger than the default 1024, so that passes of them do not wrap it.
  ASSERT_EQ(Configure(WithRecordMinUs(0, 4096)), 0) << CallString("status");
  std::vector<jobject> handlers;
  std::vector<std::string> names;
  for (int i = 0; i < kClasses; ++i) {
    char name[64];
    snprintf(name, sizeof name, "com/example/app/CountingIdleHand%03d", i);
    ASSERT_EQ(env->PushLocalFrame(16), 0);
    jclass c = DefineCountingClass(env, name);
    jobject h = c ? env->NewObject(c, env->GetMethodID(c, "<init>", "()V")) : nullptr;
    if (h) handlers.push_back(env->NewGlobalRef(h));
    env->PopLocalFrame(nullptr);
    ASSERT_NE(h, nullptr) << name << ": " << Jvm()->TakeException();
    std::string dotted = name;
    for (char& ch : dotted) ch = ch == '/' ? '.' : ch;
    names.push_back(dotted);
  }
  const uint64_t calls0 = IdleDetail("calls");
  for (jobject h : handlers) {
    ASSERT_TRUE(Jvm()->CallStatic(kTestApp, "addIdleHandler", "(Landroid/os/MessageQueue$IdleHandler;)V", {L(h)}).ok);
  }
  ASSERT_EQ(CallInt("pokeMain"), 1);
  ASSERT_EQ(CallInt("pokeMain"), 1);
  for (jobject h : handlers) {
    ASSERT_TRUE(Jvm()->CallStatic(kTestApp, "removeIdleHandler", "(Landroid/os/MessageQueue$IdleHandler;)V", {L(h)}).ok);
  }
  const std::string trace = ExportedTrace();
  const uint64_t calls = IdleDetail("calls") - calls0;
  ASSERT_EQ(Configure(kConfig), 0);
  // Ground truth: each handler's own count (CountingIdleHandler.calls, an AtomicInteger). Every call is
  // counted and recorded, whether its class has figures or not.
  uint64_t ran_total = 0;
  int with_figures = 0;
  size_t classes = 0;
  for (int i = 0; i < kClasses; ++i) {
    const std::string& name = names[static_cast<size_t>(i)];
    ASSERT_EQ(env->PushLocalFrame(16), 0);
    jobject counter = env->GetObjectField(
        handlers[static_cast<size_t>(i)],
        env->GetFieldID(env->GetObjectClass(handlers[static_cast<size_t>(i)]), "calls",
                        "Ljava/util/concurrent/atomic/AtomicInteger;"));
    const jint ran = counter ? env->CallIntMethod(counter, env->GetMethodID(env->GetObjectClass(counter), "get", "()I")) : -1;
    const std::string thrown = Jvm()->TakeException();
    env->PopLocalFrame(nullptr);
    ASSERT_TRUE(thrown.empty()) << name << ": " << thrown;
    ASSERT_GE(ran, 2) << name;
    ran_total += static_cast<uint64_t>(ran);
    // The ring keeps the latest records (passes of 70 classes may wrap it, as under ASan): the last pass's
    // are there, none more than the calls.
    const size_t records = HandlerRecords(trace, name).size();
    EXPECT_GE(records, 1u) << name;
    EXPECT_LE(records, static_cast<size_t>(ran)) << name;
    const IdleClassFigures f = ClassFiguresOf(name, &classes);
    if (f.found) {
      ++with_figures;
      EXPECT_EQ(f.calls, static_cast<uint64_t>(ran)) << name;
      EXPECT_EQ(f.folded, 0u) << name;
    }
  }
  EXPECT_GE(calls, ran_total);
  EXPECT_EQ(classes, 64u) << "figures are kept for at most MAX_CLASSES classes";
  EXPECT_GT(with_figures, 0);
  EXPECT_LT(with_figures, kClasses);
  for (jobject h : handlers) env->DeleteGlobalRef(h);
}

// The app adds its counting handler, sees it run, removes it: two more idle passes must not run it.
void ExpectAddedHandlerRunsAndRemovedOneStops() {
  ASSERT_GE(CallInt("addCountingIdleHandler"), 0);
  ASSERT_EQ(CallInt("pokeMain"), 1);
  EXPECT_GT(CallInt("countingCalls"), 0);
  ASSERT_EQ(CallInt("removeCountingIdleHandler"), 1);
  const int after_remove = CallInt("countingCalls");
  ASSERT_EQ(CallInt("pokeMain"), 1);
  ASSERT_EQ(CallInt("pokeMain"), 1);
  EXPECT_EQ(CallInt("countingCalls"), after_remove) << "a removed handler still ran";
}

TEST_F(IdleJvmTest, RemoveIdleHandlerFindsTheWrappedHandler) {
  ExpectAddedHandlerRunsAndRemovedOneStops();
  EXPECT_EQ(CallString("idleHandlersDescription"),
            "com.jankprobe.TimingIdleHandlerList[com.jankprobe.TimingIdleHandlerList$Timed]");
}

TEST_F(IdleJvmTest, SwitchingOffRestoresAPlainListWithTheAppsHandlers) {
  ASSERT_EQ(Configure(R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},)"
                      R"("idle":{"enabled":false}})"),
            0);
  EXPECT_EQ(IdleState(), "off");
  EXPECT_EQ(CallString("idleHandlersDescription"), "java.util.ArrayList[com.example.app.CountingIdleHandler]");
  const int before = CallInt("earlyCalls");
  ASSERT_EQ(CallInt("pokeMain"), 1);
  EXPECT_GT(CallInt("earlyCalls"), before);
  // And back on: the same handler is taken over again.
  ASSERT_EQ(Configure(kConfig), 0);
  EXPECT_EQ(IdleState(), "on");
  EXPECT_EQ(CallString("idleHandlersDescription"),
            "com.jankprobe.TimingIdleHandlerList[com.jankprobe.TimingIdleHandlerList$Timed]");
}

// Another tool's list in mIdleHandlers (ForeignIdleHandlerList, modelled on Tencent Matrix's idle tracer,
// which wraps each handler and finds the wrapper in remove): jankprobe leaves it in place and says why, so
// the app's removeIdleHandler keeps working. Wrapping its wrappers made remove miss: a removed handler ran on
// every idle pass.
TEST_F(IdleJvmTest, AnotherToolsListIsLeftInPlaceSayingWhy) {
  const std::string idle_off = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},)"
                               R"("idle":{"enabled":false}})";
  ASSERT_EQ(Configure(idle_off), 0);
  ASSERT_EQ(CallInt("swapIdleHandlerList", "(Z)I", {Z(false)}), 1);
  const std::string foreign = CallString("idleHandlersDescription");
  ASSERT_EQ(foreign.rfind("com.example.app.ForeignIdleHandlerList[", 0), 0u) << foreign;

  Configure(kConfig);  // idle cannot start: the call's result says so for the whole config
  EXPECT_EQ(IdleState().rfind("disabled: ", 0), 0u) << IdleState();
  EXPECT_NE(IdleState().find("mIdleHandlers holds a com.example.app.ForeignIdleHandlerList"), std::string::npos)
      << IdleState();
  EXPECT_EQ(CallString("idleHandlersDescription"), foreign) << "the tool's list was replaced or changed";

  // The app's remove still finds its handler through the tool's list.
  ExpectAddedHandlerRunsAndRemovedOneStops();

  // The tool gone (a plain list back), the monitor starts again and takes the handlers over.
  ASSERT_EQ(CallInt("swapIdleHandlerList", "(Z)I", {Z(true)}), 1);
  ASSERT_EQ(Configure(idle_off), 0);
  ASSERT_EQ(Configure(kConfig), 0);
  EXPECT_EQ(IdleState(), "on");
  EXPECT_EQ(CallString("idleHandlersDescription").rfind("com.jankprobe.TimingIdleHandlerList[", 0), 0u);
}

}  // namespace
}  // namespace jp::testing
