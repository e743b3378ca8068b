// The barrier monitor on a real JVM with the faithful stand-ins: a leaked barrier (the scripted bug) is
// detected within leak_ms + check_ms, confirmed by the probes, removed, and the main loop resumes; barriers
// released normally (traversal-like pairs) are never reported; without auto_remove the leak is reported and
// left in place.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <string>

#include "tests/jvm/app_under_test.h"

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

}  // namespace
}  // namespace jp::testing
