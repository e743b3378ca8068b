// The barrier monitor on a real JVM with the faithful stand-ins: a leaked barrier (the scripted bug) is
// detected within leak_ms + check_ms, confirmed by the probes, removed, and the main loop resumes; barriers
// released normally (traversal-like pairs) are never reported; without auto_remove the leak is reported and
// left in place. The check calls no Java method: its clock is the native one (checked against the
// stand-in's SystemClock.uptimeMillis) and the watchdog's stack stays small across checks.
#include <dirent.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "barrier/main_queue.h"
#include "tests/jvm/app_under_test.h"
#include "tests/proc_threads.h"

namespace jp::testing {
namespace {

constexpr int kCheckMs = 100;
constexpr int kLeakMs = 500;
const char* kConfig = R"({"input":{"enabled":false},"looper":{"enabled":false},"idle":{"enabled":false},)"
                      R"("barrier":{"check_ms":100,"leak_ms":500,"auto_remove":true}})";
const char* kConfigKeep = R"({"input":{"enabled":false},"looper":{"enabled":false},"idle":{"enabled":false},)"
                          R"("barrier":{"check_ms":100,"leak_ms":500,"auto_remove":false}})";

class BarrierJvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const AppLaunch& launch = LaunchApp(kConfig);
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
    ASSERT_EQ(launch.start_rc, 0) << CallString("status");
    ASSERT_EQ(Configure(kConfig), 0);
    Jvm()->CallStatic(kTestApp, "clearReports", "()V");
  }
};

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

int LeakBarrier() { return CallInt("leakBarrier"); }

TEST_F(BarrierJvmTest, LeakedBarrierIsDetectedConfirmedRemovedAndTheLoopResumes) {
  const auto t0 = std::chrono::steady_clock::now();
  const int token = LeakBarrier();
  ASSERT_GE(token, 0);
  JavaResult work = Jvm()->CallStatic(kTestApp, "postWork", "()Ljava/util/concurrent/atomic/AtomicInteger;");
  ASSERT_TRUE(work.ok) << work.why;
  jobject counter = Jvm()->Env()->NewGlobalRef(work.value.l);

  const std::string leak = AwaitReport("barrier_leak", "\"token\":" + std::to_string(token), 5000);
  const double detect_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(leak.empty()) << CallString("status");
  rapidjson::Document d = Parse(leak);
  EXPECT_TRUE(d["confirmed"].GetBool()) << leak;
  EXPECT_NE(std::string(d["probe"].GetString()).find("confirmed"), std::string::npos);
  // The barrier was at least leak_ms old when reported, and the report came within leak_ms + check_ms
  // (plus the probes' round trip and the delivery to the Java listener, both a few ms).
  EXPECT_GE(d["age_ms"].GetInt(), kLeakMs);
  EXPECT_LE(d["age_ms"].GetDouble(), detect_ms);
  EXPECT_LE(detect_ms, kLeakMs + kCheckMs + 150) << leak;

  const std::string removed = AwaitReport("barrier_removed", "\"token\":" + std::to_string(token), 3000);
  ASSERT_FALSE(removed.empty()) << CallString("status");
  rapidjson::Document r = Parse(removed);
  EXPECT_TRUE(r["removed"].GetBool()) << removed;
  EXPECT_TRUE(r["sync_probe_ran"].GetBool()) << removed;
  // The app's own synchronous work, stuck behind the barrier, runs again.
  JavaResult ran = Jvm()->CallStatic(kTestApp, "awaitWork", "(Ljava/util/concurrent/atomic/AtomicInteger;J)Z",
                                     {L(counter), J(2000)});
  ASSERT_TRUE(ran.ok) << ran.why;
  EXPECT_TRUE(ran.value.z) << "the main loop did not resume after the barrier was removed";
  Jvm()->Env()->DeleteGlobalRef(counter);
  // The barrier is gone: removing it again is what the app would get wrong now.
  EXPECT_FALSE(Jvm()->CallStatic(kTestApp, "removeBarrier", "(I)Z", {I(token)}).value.z);
}

TEST_F(BarrierJvmTest, BarriersReleasedNormallyAreNeverReported) {
  JavaResult pairs = Jvm()->CallStatic(kTestApp, "runTraversals", "(JJ)I", {J(1500), J(16)});
  ASSERT_TRUE(pairs.ok) << pairs.why;
  EXPECT_GT(pairs.value.i, 20);
  EXPECT_EQ(CallInt("countReports", "(Ljava/lang/String;)I", {L(Jvm()->NewString("barrier_leak"))}), 0);
  rapidjson::Document s = Parse(CallString("status"));
  const auto& details = s["monitors"]["barrier"]["details"];
  EXPECT_STREQ(details["check"].GetString(), "ok");
  EXPECT_GE(details["checks"].GetInt(), 1500 / kCheckMs / 2) << "the monitor was not looking";
}

TEST_F(BarrierJvmTest, WithoutAutoRemoveTheLeakIsReportedAndLeftInPlace) {
  ASSERT_EQ(Configure(kConfigKeep), 0);
  const int token = LeakBarrier();
  JavaResult work = Jvm()->CallStatic(kTestApp, "postWork", "()Ljava/util/concurrent/atomic/AtomicInteger;");
  ASSERT_TRUE(work.ok) << work.why;
  jobject counter = Jvm()->Env()->NewGlobalRef(work.value.l);
  const std::string leak = AwaitReport("barrier_leak", "\"token\":" + std::to_string(token), 5000);
  ASSERT_FALSE(leak.empty());
  EXPECT_TRUE(Parse(leak)["confirmed"].GetBool());
  // Reported once, not at every check, and not removed.
  JavaResult stuck = Jvm()->CallStatic(kTestApp, "awaitWork", "(Ljava/util/concurrent/atomic/AtomicInteger;J)Z",
                                       {L(counter), J(3 * kCheckMs)});
  EXPECT_FALSE(stuck.value.z);
  EXPECT_EQ(CallInt("countReports", "(Ljava/lang/String;)I", {L(Jvm()->NewString("barrier_leak"))}), 1);
  EXPECT_EQ(CallInt("countReports", "(Ljava/lang/String;)I", {L(Jvm()->NewString("barrier_removed"))}), 0);
  // The app fixes it itself: the work runs.
  EXPECT_TRUE(Jvm()->CallStatic(kTestApp, "removeBarrier", "(I)Z", {I(token)}).value.z);
  JavaResult ran = Jvm()->CallStatic(kTestApp, "awaitWork", "(Ljava/util/concurrent/atomic/AtomicInteger;J)Z",
                                     {L(counter), J(2000)});
  EXPECT_TRUE(ran.value.z);
  Jvm()->Env()->DeleteGlobalRef(counter);
}

// The check's clock without a Java call must be the one Message.when is on: the stand-in's uptimeMillis
// (System.nanoTime() / 1e6) read just before and just after the native one brackets it. A bracket wider
// than 1 ms (the host preempted us in between) proves nothing and is taken again.
TEST_F(BarrierJvmTest, NativeUptimeAgreesWithTheStandInsUptimeMillis) {
  int tight = 0;
  for (int attempt = 0; attempt < 200 && tight < 20; ++attempt) {
    JavaResult before = Jvm()->CallStatic("android.os.SystemClock", "uptimeMillis", "()J");
    const int64_t native_ms = barrier::UptimeMillis();
    JavaResult after = Jvm()->CallStatic("android.os.SystemClock", "uptimeMillis", "()J");
    ASSERT_TRUE(before.ok && after.ok) << before.why << after.why;
    if (after.value.j - before.value.j > 1) continue;
    ++tight;
    EXPECT_LE(before.value.j, native_ms);
    EXPECT_LE(native_ms, after.value.j);
  }
  EXPECT_GE(tight, 20) << "the host never let a 1 ms bracket through";
}

struct ThreadStack {
  std::string tid;
  bool ok = false;
  std::string why;
  size_t resident_below_sp = 0;  // bytes of the stack mapping below the thread's sp that are resident
};

// mincore over what lies below a sleeping thread's sp in the mapping that holds it; the sp from
// /proc/self/task/TID/syscall ("... sp pc" for a thread blocked in a system call).
ThreadStack MeasureStack(const std::string& tid) {
  ThreadStack out;
  out.tid = tid;
  uintptr_t sp = 0;
  for (int attempt = 0; attempt < 100 && sp == 0; ++attempt) {
    std::ifstream sc("/proc/self/task/" + tid + "/syscall");
    std::vector<std::string> fields;
    for (std::string f; sc >> f;) fields.push_back(f);
    if (fields.size() >= 3 && fields[0] != "running") sp = std::stoull(fields[fields.size() - 2], nullptr, 16);
    if (sp == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // retry: it was on a CPU
  }
  if (sp == 0) {
    out.why = "thread " + tid + " was never seen in a system call";
    return out;
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    uintptr_t lo = 0, hi = 0;
    if (sscanf(line.c_str(), "%zx-%zx", &lo, &hi) != 2 || sp < lo || sp >= hi) continue;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t top = sp & ~(page - 1);
    const uintptr_t from = top - lo > (1u << 20) ? top - (1u << 20) : lo;  // 1 MiB below sp is plenty
    std::vector<unsigned char> resident((top - from) / page);
    if (mincore(reinterpret_cast<void*>(from), top - from, resident.data()) != 0) {
      out.why = "mincore failed";
      return out;
    }
    for (unsigned char r : resident) out.resident_below_sp += (r & 1) ? page : 0;
    out.ok = true;
    return out;
  }
  out.why = "no mapping holds the sp of thread " + tid;
  return out;
}

// Every thread named jp-watchdog: the watchdog and the report delivery thread, which it started and which
// inherited its name (hook/report_sink.cc); both are attached to the VM.
std::vector<ThreadStack> MeasureWatchdogStacks() {
  std::vector<ThreadStack> out;
  for (pid_t tid : jp::testing::ThreadsNamed("jp-watchdog")) out.push_back(MeasureStack(std::to_string(tid)));
  return out;
}

int BarrierChecks() { return Parse(CallString("status"))["monitors"]["barrier"]["details"]["checks"].GetInt(); }

void AwaitChecks(int n) {
  const int until = BarrierChecks() + n;
  for (int i = 0; i < 100 && BarrierChecks() < until; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(kCheckMs / 2));
  ASSERT_GE(BarrierChecks(), until) << "the checks stopped";
}

// HotSpot touches ~80 KiB below sp at every Java call it makes on a thread (its stack banging), attaching
// included. The watchdog attached for this monitor; its checks call no Java method, so what the attach and
// the probes of the tests before left is given back once and stays given back across checks.
TEST_F(BarrierJvmTest, WatchdogStackStaysSmallAcrossChecks) {
  AwaitChecks(2);  // a probe step of an earlier test has ended; its release ran
  rapidjson::Document before = Parse(CallString("status"));
  const int releases = before["monitors"]["barrier"]["details"]["stack_releases"].GetInt();
  EXPECT_GE(releases, 1) << "the attach ran Java on the watchdog: at least one release";
  EXPECT_FALSE(before["monitors"]["barrier"]["details"].HasMember("stack_release_error"));
  AwaitChecks(5);
  rapidjson::Document after = Parse(CallString("status"));
  EXPECT_EQ(after["monitors"]["barrier"]["details"]["stack_releases"].GetInt(), releases)
      << "a check ran Java frames on the watchdog";
  const std::vector<ThreadStack> stacks = MeasureWatchdogStacks();
  ASSERT_FALSE(stacks.empty()) << "no jp-watchdog thread";
  for (const ThreadStack& stack : stacks) {
    ASSERT_TRUE(stack.ok) << stack.why;
    // What stays: 16 KiB kept below the loop's frame (hook/jni/java_stack_release.h) plus the few KiB the
    // native check reaches; a Java call would have left 80 KiB and more.
    EXPECT_LE(stack.resident_below_sp, 40u * 1024) << "resident below the sp of thread " << stack.tid;
  }
}

}  // namespace
}  // namespace jp::testing
