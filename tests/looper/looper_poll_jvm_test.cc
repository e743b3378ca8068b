// The looper monitor's poll source on a real JVM: the stand-in MessageQueue waits in the libutils.so
// fixture's epoll_wait (as on a phone), and the monitor times the main thread's gaps between those waits.
// Ground truth: messages that spin known durations give looper.message records of those lengths, an idle
// handler's pass is a gap of its own, a quiet main thread and a second looper thread (HandlerThread, same
// library) give nothing; a stuck message is reported with the spinning method as key frame, an ANR at
// anr_ms; the source falls back / fails with a readable reason when the library is absent, switches at
// runtime, and leaves libutils.so's GOT slot as it found it when switched off (read through our own
// engine: a probe hook's previous target is what the slot held).
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hook/event_clock.h"
#include "jankprobe/plt.h"
#include "tests/jvm/app_under_test.h"
#include "tests/looper/looper_jvm_support.h"
#include "tests/proc_threads.h"

namespace jp::testing {
namespace {

constexpr int kSampleAfterMs = 40;
const char* kConfig =
    R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
    R"("looper":{"lag_ms":300,"anr_ms":1000,"sample_after_ms":40,"sample_interval_ms":30},)"
    R"("report":{"key_packages":["com.example.app"],"max_reports_per_minute":100}})";
const char* kPollName = "dispatch (poll: no message identity)";
// Extra wall time a gap may hold beyond the spinning task: the queue's own work, a stack capture's
// safepoint, a host shared with other builds.
constexpr double kSlackMs = 30;

std::string LooperConfig(const std::string& looper) {
  return std::string(R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)") +
         R"("looper":{"lag_ms":300,"anr_ms":1000,"sample_after_ms":40,"sample_interval_ms":30)" +
         (looper.empty() ? "" : "," + looper) + R"(},"report":{"key_packages":["com.example.app"],"max_reports_per_minute":100}})";
}

// Durations (ms) of the poll source's looper.message records in an exported trace.
std::vector<double> PollRecordsMs() {
  rapidjson::Document d;
  d.Parse(ExportedTrace().c_str());
  std::vector<double> out;
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("traceEvents")) return out;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (!e.HasMember("cat") || std::string(e["cat"].GetString()) != "looper.message") continue;
    if (!e.HasMember("dur") || std::string(e["name"].GetString()) != kPollName) continue;
    EXPECT_STREQ(e["args"]["source"].GetString(), "poll");
    out.push_back(e["dur"].GetDouble() / 1e3);
  }
  return out;
}

// How long this process's threads have waited on a run queue while runnable, summed (ms; schedstat's
// second field per task): ground truth for what a loaded host added to a message. A spinning message
// ends by the wall clock, but a thread held off its CPU right after the spin, or a stack sample's
// safepoint waiting for starved JVM threads, stretches the gap around it. 0 without schedstat.
double ProcessRunDelayMs() {
  double ns = 0;
  for (pid_t tid : jp::testing::ThreadIds()) ns += static_cast<double>(jp::testing::RunDelayNs(tid));
  return ns / 1e6;
}

int CountIn(const std::vector<double>& records, double lo, double hi) {
  int n = 0;
  for (double ms : records) n += ms >= lo && ms <= hi;
  return n;
}

// Waits until the frame ticker parked (no frame callback for quiet_ms): the main thread is then quiet.
bool AwaitQuietMain(int64_t quiet_ms, int64_t timeout_ms) {
  const auto t0 = Clock::now();
  int64_t last = FrameCallbacksRun();
  auto since = Clock::now();
  while (MsSince(t0) < static_cast<double>(timeout_ms)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t now = FrameCallbacksRun();
    if (now != last) {
      last = now;
      since = Clock::now();
    } else if (MsSince(since) >= static_cast<double>(quiet_ms)) {
      return true;
    }
  }
  return false;
}

// What libutils.so's GOT slot for epoll_wait holds now, read by hooking it with a probe (our own copy of
// the engine): the previous target the engine stores is the slot's content. The probe forwards, since the
// main thread may call through it meanwhile.
using EpollWaitFn = int (*)(int, struct epoll_event*, int, int);
void* g_probe_prev = nullptr;
int ProbeEpollWait(int epfd, struct epoll_event* events, int max, int timeout) {
  return reinterpret_cast<EpollWaitFn>(__atomic_load_n(&g_probe_prev, __ATOMIC_ACQUIRE))(epfd, events, max, timeout);
}
void* EpollWaitSlot(std::string* why) {
  g_probe_prev = nullptr;
  jp_plt_hook* h = jp_plt_hook_install("libutils.so", "epoll_wait", reinterpret_cast<void*>(&ProbeEpollWait), &g_probe_prev);
  if (!h) {
    *why = jp_plt_last_error();
    return nullptr;
  }
  void* held = __atomic_load_n(&g_probe_prev, __ATOMIC_ACQUIRE);
  jp_plt_hook_remove(h);
  return held;
}
std::string LibraryOf(void* fn) {
  Dl_info info{};
  return fn && dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
}

class LooperPollJvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const AppLaunch& launch = LaunchApp(kConfig);
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
    ASSERT_EQ(launch.start_rc, 0) << CallString("status");
    Jvm()->CallStatic(kTestApp, "clearReports", "()V");
    // Every test starts from the default source (auto -> poll on this host).
    ASSERT_EQ(Configure(kConfig), 0) << CallString("status");
    ASSERT_EQ(Status().Str("source"), "poll") << CallString("status");
  }
};

TEST_F(LooperPollJvmTest, TheStandInWaitsInLibutilsAndAutoPicksPoll) {
  JNIEnv* env = Jvm()->Env();
  jclass mq = env->FindClass("android/os/MessageQueue");
  ASSERT_NE(mq, nullptr);
  jfieldID f = env->GetStaticFieldID(mq, "NATIVE_POLL_ERROR", "Ljava/lang/String;");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(env->GetStaticObjectField(mq, f), nullptr) << "the stand-in does not wait in libutils.so";
  env->DeleteLocalRef(mq);
  ASSERT_NE(dlopen("libutils.so", RTLD_NOW | RTLD_NOLOAD), nullptr) << "libutils.so is not loaded";

  const LooperStatus s = Status();
  EXPECT_EQ(s.state, "on");
  EXPECT_EQ(s.Str("source_reason").rfind("auto: epoll_wait hooked in libutils.so", 0), 0u) << s.Str("source_reason");
  EXPECT_GE(s.Int("poll_slots"), 1);
  EXPECT_EQ(s.Str("printer"), "off");
  // The gaps' clock (hook/event_clock.h, shared with the input monitor) is named with its bound.
  ASSERT_TRUE(s.details && s.details->HasMember("clock") && (*s.details)["clock"].IsObject()) << CallString("status");
  const rapidjson::Value& clock = (*s.details)["clock"];
  const std::string clock_source = clock["source"].GetString();
  EXPECT_TRUE(clock_source == "tsc" || clock_source == "cntvct" || clock_source == "clock_gettime") << clock_source;
  EXPECT_EQ(clock["bound_ns"].GetUint64(), hook::EventClock::kBoundNs);
  // clock_gettime only with a reason; a counter with none.
  EXPECT_EQ(clock_source == "clock_gettime", std::string(clock["why"].GetString()).size() > 0) << CallString("status");
  // No printer of ours: the app's own is still the Looper's.
  EXPECT_EQ(ScenarioString("printerChain").find("jankprobe"), std::string::npos) << ScenarioString("printerChain");
  std::string why;
  void* slot = EpollWaitSlot(&why);
  EXPECT_NE(LibraryOf(slot).find("libjankprobe.so"), std::string::npos) << LibraryOf(slot) << " " << why;
}

TEST_F(LooperPollJvmTest, SpinningMessagesGiveRecordsOfTheirLength) {
  // Each message may also hold what the host held the process's threads meanwhile (0 on a quiet host).
  const int kMessagesMs[] = {10, 50, 200};
  double held_ms[3] = {};
  const int long_before = CountIn(PollRecordsMs(), 5, 1e9);  // earlier tests' records are in the timeline too
  for (int i = 0; i < 3; ++i) {
    const double held0 = ProcessRunDelayMs();
    ASSERT_EQ(Scenario("runSlow", "(J)I", {J(kMessagesMs[i])}), 0);
    held_ms[i] = std::max(0.0, ProcessRunDelayMs() - held0);
  }
  const std::vector<double> records = PollRecordsMs();
  ASSERT_FALSE(records.empty()) << CallString("status");
  for (int i = 0; i < 3; ++i) {
    const int ms = kMessagesMs[i];
    std::string all;
    for (double r : records) all += " " + std::to_string(r);
    const double hi = ms + kSlackMs + held_ms[i];
    EXPECT_GE(CountIn(records, ms, hi), 1) << ms << " ms message: no record in [" << ms << ", " << hi
                                           << "] ms (the host held the threads " << held_ms[i]
                                           << " ms); records (ms):" << all;
  }
  // Nothing between the spinning messages took long: every new record over 5 ms is one of the three, but
  // for a few of the harness's (3), and one more per 5 ms the host held the process's threads meanwhile (a
  // short message stretched to 5 ms needs that much; 0 on a quiet host).
  const int long_ones = CountIn(records, 5, 1e9) - long_before;
  const double held_total_ms = held_ms[0] + held_ms[1] + held_ms[2];
  EXPECT_LE(long_ones, 3 + 3 + static_cast<int>(held_total_ms / 5))
      << "the frame ticker's and the harness's messages are short; the host held the threads " << held_total_ms
      << " ms";
}

TEST_F(LooperPollJvmTest, AQuietMainThreadProducesNoRecordsAndASecondLooperIsNotTimed) {
  ASSERT_TRUE(AwaitQuietMain(300, 5000)) << "the frame ticker did not park";
  const int64_t gaps0 = Status().Int("poll_gaps");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Status().Int("poll_gaps"), gaps0) << "gaps on a quiet main thread";

  // A HandlerThread polls through the same libutils.so: 50 messages there, none on main.
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(32);
  auto checked = [env] { return !env->ExceptionCheck(); };  // -Xcheck:jni wants a check after each call
  jclass ht = env->FindClass("android/os/HandlerThread");
  ASSERT_TRUE(ht != nullptr && checked());
  jobject thread = env->NewObject(ht, env->GetMethodID(ht, "<init>", "(Ljava/lang/String;)V"), env->NewStringUTF("worker"));
  ASSERT_TRUE(thread != nullptr && checked());
  env->CallVoidMethod(thread, env->GetMethodID(ht, "start", "()V"));
  ASSERT_TRUE(checked());
  jobject looper = env->CallObjectMethod(thread, env->GetMethodID(ht, "getLooper", "()Landroid/os/Looper;"));
  ASSERT_TRUE(looper != nullptr && checked());
  jclass handler_class = env->FindClass("android/os/Handler");
  jobject handler = env->NewObject(handler_class, env->GetMethodID(handler_class, "<init>", "(Landroid/os/Looper;)V"), looper);
  ASSERT_TRUE(handler != nullptr && checked());
  jmethodID send = env->GetMethodID(handler_class, "sendEmptyMessage", "(I)Z");
  jmethodID has = env->GetMethodID(handler_class, "hasMessages", "(I)Z");
  for (int i = 0; i < 50; ++i) {
    const bool sent = env->CallBooleanMethod(handler, send, 5);
    ASSERT_TRUE(sent && checked());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // each one a wake of the worker's epoll
  }
  const auto t0 = Clock::now();
  bool pending = true;
  while (pending && MsSince(t0) < 5000) {
    pending = env->CallBooleanMethod(handler, has, 5);
    ASSERT_TRUE(checked());
    if (pending) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(pending) << "the worker looper did not run its messages";
  env->CallBooleanMethod(thread, env->GetMethodID(ht, "quit", "()Z"));
  ASSERT_TRUE(checked());
  env->PopLocalFrame(nullptr);
  EXPECT_EQ(Status().Int("poll_gaps"), gaps0) << "the worker looper's gaps were timed as the main thread's";

  // Positive control: the main thread's next message is counted.
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(3)}), 0);
  EXPECT_GE(Status().Int("poll_gaps") - gaps0, 3);
}

TEST_F(LooperPollJvmTest, AParkedFrameTickerResumesOnALongGapWithoutAPrinter) {
  // Quick messages do not resume it (no Java call per message in poll mode)... A loaded host can hold the
  // main thread for a quarter frame inside a quick message, which then rightly resumes the ticker; such a
  // gap has a record of its own with its length (ground truth: the records are of every gap of at least
  // record_min_us, 1 ms). An attempt with one is repeated; the first without one is judged.
  const LooperStatus st = Status();
  ASSERT_TRUE(st.details && st.details->HasMember("frames")) << CallString("status");
  const double refresh_ms = st.Frames().HasMember("refresh_ms") ? st.Frames()["refresh_ms"].GetDouble() : 0;
  const double quarter_ms = (refresh_ms > 0 ? refresh_ms : 1000.0 / 60) / 4;
  int64_t resumes0 = -1, calls0 = -1, calls1 = -1, resumes1 = -1;
  int disturbed = 0;
  for (int attempt = 0; attempt < 10; ++attempt) {
    ASSERT_TRUE(AwaitQuietMain(300, 5000)) << "the frame ticker did not park";
    const int long0 = CountIn(PollRecordsMs(), quarter_ms * 0.9, 1e9);
    resumes0 = Status().Int("ticker_resumes");
    calls0 = FrameCallbacksRun();
    ASSERT_EQ(Scenario("runQuick", "(I)I", {I(5)}), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    calls1 = FrameCallbacksRun();
    resumes1 = Status().Int("ticker_resumes");
    if (CountIn(PollRecordsMs(), quarter_ms * 0.9, 1e9) == long0) break;
    ++disturbed;
  }
  ASSERT_LT(disturbed, 10) << "every attempt had a gap of a quarter frame (" << quarter_ms << " ms)";
  EXPECT_EQ(calls1, calls0) << disturbed << " attempts disturbed";
  EXPECT_EQ(resumes1, resumes0);
  // ... a gap over a quarter frame does, through the watchdog.
  ASSERT_EQ(Scenario("runSlow", "(J)I", {J(12)}), 0);
  const auto t0 = Clock::now();
  while (FrameCallbacksRun() == calls0 && MsSince(t0) < 2000) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(FrameCallbacksRun(), calls0) << CallString("status");
  EXPECT_EQ(Status().Int("ticker_resumes"), resumes0 + 1);
}

TEST_F(LooperPollJvmTest, AnIdleHandlerPassIsAGapOfItsOwn) {
  constexpr int kIdleMs = 60;
  ASSERT_EQ(CallInt("addSlowIdleHandler", "(J)I", {J(kIdleMs)}), 0);  // runs once when the queue empties
  const auto t0 = Clock::now();
  while (CallInt("slowCalls") < 1 && MsSince(t0) < 5000) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(CallInt("slowCalls"), 1);
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(1)}), 0);  // the idle pass has ended: the main thread waited again
  const std::vector<double> records = PollRecordsMs();
  EXPECT_GE(CountIn(records, kIdleMs, kIdleMs + kSlackMs), 1) << "no gap of the idle handler's length";
}

TEST_F(LooperPollJvmTest, AStuckMessageIsReportedWithTheSpinningMethodAndAnAnrAtAnrMs) {
  constexpr int kBusyMs = 450;
  const auto t0 = Clock::now();
  ASSERT_EQ(Scenario("runSlow", "(J)I", {J(kBusyMs)}), 0);
  const std::string json = AwaitReport("message_lag", "\"source\":\"poll\"", 3000);
  const double waited_ms = MsSince(t0);
  ASSERT_FALSE(json.empty()) << "no message_lag; status: " << CallString("status");
  rapidjson::Document d = Parse(json);
  EXPECT_STREQ(d["monitor"].GetString(), "looper");
  EXPECT_FALSE(d.HasMember("callback")) << "the poll source knows no message identity";
  EXPECT_FALSE(d["still_running"].GetBool());
  const double wall = d["wall_ms"].GetDouble();
  EXPECT_GE(wall, kBusyMs);
  EXPECT_LE(wall, waited_ms);
  ASSERT_TRUE(d.HasMember("key_frame")) << json;
  EXPECT_NE(std::string(d["key_frame"].GetString()).find("com.example.app.SlowTask.crunchNumbers"), std::string::npos) << json;
  EXPECT_TRUE(d["confirmed"].GetBool()) << json;
  // CPU from the first sample on (ground truth: the task spins, so CPU ~ wall over that window, less what
  // the host took; never more than the window).
  ASSERT_TRUE(d.HasMember("cpu_ms_since_first_sample")) << json;
  const double cpu = d["cpu_ms_since_first_sample"].GetDouble();
  const double window = d["wall_ms_since_first_sample"].GetDouble();
  EXPECT_GT(window, 0);
  EXPECT_LE(window, wall - kSampleAfterMs + 1);
  EXPECT_LE(cpu, window + 1);
  EXPECT_GT(cpu, 0);
  // The history holds the gap as slow with its samples.
  bool in_history = false;
  for (const auto& e : d["history"]["entries"].GetArray()) {
    if (std::string(e["kind"].GetString()) == "slow" && e.HasMember("samples") && e["samples"].Size() > 0) in_history = true;
  }
  EXPECT_TRUE(in_history) << json;

  // Stuck past anr_ms (1000): an anr_risk while it still runs.
  Jvm()->CallStatic(kTestApp, "clearReports", "()V");
  ASSERT_EQ(Scenario("simulateAnr", "(J)I", {J(1500)}), 0);
  const std::string anr = AwaitReport("anr_risk", "\"source\":\"poll\"", 4000);
  ASSERT_FALSE(anr.empty()) << CallString("status");
  rapidjson::Document a = Parse(anr);
  EXPECT_TRUE(a["still_running"].GetBool()) << anr;
  EXPECT_GE(a["wall_ms"].GetDouble(), 1000);
  EXPECT_LT(a["wall_ms"].GetDouble(), 1500);
  EXPECT_NE(std::string(a["key_frame"].GetString()).find("SlowTask.crunchNumbers"), std::string::npos) << anr;
  ASSERT_FALSE(AwaitReport("message_lag", "\"source\":\"poll\"", 4000).empty());
  Scenario("removeFutureWork");
}

TEST_F(LooperPollJvmTest, AnAbsentLibraryFailsForcedPollAndFallsBackUnderAuto) {
  // Forced poll on a library that is not loaded: the switch fails, says why, and keeps what ran.
  ASSERT_EQ(Configure(LooperConfig(R"("source":"poll","poll_library":"libnotloaded.so")")), 0);
  LooperStatus s = Status();
  EXPECT_EQ(s.Str("source"), "poll");
  EXPECT_NE(s.Str("source_error").find("libnotloaded.so is not loaded"), std::string::npos) << CallString("status");
  EXPECT_EQ(s.Str("poll_library"), "libutils.so");
  // auto with the absent library: the printer, and the reason.
  ASSERT_EQ(Configure(LooperConfig(R"("source":"auto","poll_library":"libnotloaded.so")")), 0);
  s = Status();
  EXPECT_EQ(s.Str("source"), "printer") << CallString("status");
  EXPECT_EQ(s.Str("source_reason"), "auto: poll unavailable (libnotloaded.so is not loaded in this process)");
  EXPECT_EQ(s.Int("poll_slots"), 0);
  // Forced poll from a stopped monitor: it does not start, and the status says why.
  ASSERT_EQ(Configure(LooperConfig(R"("enabled":false)")), 0);
  EXPECT_NE(Configure(LooperConfig(R"("source":"poll","poll_library":"libnotloaded.so")")), 0)
      << "a monitor that cannot start fails the configure";
  const std::string status = CallString("status");
  EXPECT_NE(Status().state, "on") << status;
  EXPECT_NE(status.find("looper.source poll: libnotloaded.so is not loaded in this process"), std::string::npos) << status;
}

TEST_F(LooperPollJvmTest, TheSourceSwitchesAtRuntimeAndOffLeavesTheSlotUnpatched) {
  std::string why;
  void* original = dlsym(RTLD_DEFAULT, "epoll_wait");
  ASSERT_NE(original, nullptr);
  // poll -> printer: our hooks are gone, our printer is in the chain, messages are still counted.
  ASSERT_EQ(Configure(LooperConfig(R"("source":"printer")")), 0);
  LooperStatus s = Status();
  EXPECT_EQ(s.Str("source"), "printer");
  EXPECT_EQ(s.Str("printer"), "installed");
  EXPECT_EQ(s.Int("poll_slots"), 0);
  EXPECT_FALSE(s.details->HasMember("clock")) << "the printer source reads no event clock";
  EXPECT_EQ(EpollWaitSlot(&why), original) << LibraryOf(EpollWaitSlot(&why)) << " " << why;
  EXPECT_EQ(ScenarioString("printerChain").rfind("jankprobe.LooperPrinter(active -> ", 0), 0u);
  int64_t m0 = s.Int("messages");
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(5)}), 0);
  EXPECT_GE(Status().Int("messages") - m0, 5);
  // printer -> poll: the printer we chained to is back, the slot holds our proxy.
  ASSERT_EQ(Configure(LooperConfig(R"("source":"poll")")), 0);
  s = Status();
  EXPECT_EQ(s.Str("source"), "poll");
  EXPECT_EQ(s.Str("source_reason"), "configured: epoll_wait hooked in libutils.so (1 GOT slots)");
  EXPECT_EQ(ScenarioString("printerChain").find("jankprobe"), std::string::npos) << ScenarioString("printerChain");
  EXPECT_NE(LibraryOf(EpollWaitSlot(&why)).find("libjankprobe.so"), std::string::npos);
  const int64_t g0 = s.Int("poll_gaps");
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(5)}), 0);
  // The main thread may have been waiting in libc's epoll_wait since before the hook went in: the first
  // message it wakes for is then not timed (its gap has no start), the other four are.
  EXPECT_GE(Status().Int("poll_gaps") - g0, 4);
  // Off: the slot holds libc's epoll_wait again.
  ASSERT_EQ(Configure(LooperConfig(R"("enabled":false)")), 0);
  EXPECT_EQ(EpollWaitSlot(&why), original) << LibraryOf(EpollWaitSlot(&why)) << " " << why;
  ASSERT_EQ(Scenario("runQuick", "(I)I", {I(2)}), 0);  // the main thread still runs through the slot
}

}  // namespace
}  // namespace jp::testing
