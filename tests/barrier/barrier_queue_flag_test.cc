// The barrier check settles the main queue's kind once at start. Android 16's MessageQueue holds two
// implementations and says which one a queue uses in `final boolean mUseConcurrent`; these stand-in
// variants keep the ordinary list and add only that flag, so the flag alone decides:
// - JP_QUEUE_FLAG_CONCURRENT=1: the flag is true. The check must say "unsupported" with the flag as its
//   reason, although mMessages reads fine here (a device's concurrent queue keeps it null), and must never
//   report on a barrier it was told it cannot see.
// - JP_QUEUE_FLAG_CONCURRENT=0: the flag is false (Android 16's legacy list). A leaked barrier is found,
//   confirmed and removed as on older releases.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "tests/jvm/app_under_test.h"

namespace jp::testing {
namespace {

const char* kConfig = R"({"input":{"enabled":false},"looper":{"enabled":false},"idle":{"enabled":false},)"
                      R"("barrier":{"check_ms":50,"leak_ms":300,"auto_remove":true}})";

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

#if JP_QUEUE_FLAG_CONCURRENT

TEST(BarrierQueueFlagTest, ConcurrentFlagIsRefusedWithItsReason) {
  const AppLaunch& launch = LaunchApp(kConfig);
  if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  ASSERT_EQ(launch.start_rc, 0) << CallString("status");
  const std::string report = AwaitReport("barrier_unsupported", "", 3000);
  ASSERT_FALSE(report.empty()) << CallString("status");
  rapidjson::Document r = Parse(report);
  EXPECT_STREQ(r["check"].GetString(), "unsupported");
  EXPECT_NE(std::string(r["reason"].GetString()).find("mUseConcurrent is true"), std::string::npos) << report;

  rapidjson::Document s = Parse(CallString("status"));
  const auto& details = s["monitors"]["barrier"]["details"];
  EXPECT_STREQ(details["check"].GetString(), "unsupported");
  EXPECT_NE(std::string(details["reason"].GetString()).find("mUseConcurrent"), std::string::npos);

  // mMessages would show this barrier; the monitor was told the queue is not a list and stays out of it.
  const int token = CallInt("leakBarrier");
  EXPECT_TRUE(AwaitReport("barrier_leak", "", 700).empty());
  EXPECT_EQ(Parse(CallString("status"))["monitors"]["barrier"]["details"]["checks"].GetInt(), 0);
  EXPECT_TRUE(Jvm()->CallStatic(kTestApp, "removeBarrier", "(I)Z", {I(token)}).value.z);
  EXPECT_EQ(CallInt("pokeMain"), 1);
}

#else

TEST(BarrierQueueFlagTest, LegacyFlagIsWatchedAsAList) {
  const AppLaunch& launch = LaunchApp(kConfig);
  if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  ASSERT_EQ(launch.start_rc, 0) << CallString("status");
  const int token = CallInt("leakBarrier");
  ASSERT_GE(token, 0);
  const std::string leak = AwaitReport("barrier_leak", "\"token\":" + std::to_string(token), 5000);
  ASSERT_FALSE(leak.empty()) << CallString("status");
  EXPECT_TRUE(Parse(leak)["confirmed"].GetBool()) << leak;
  const std::string removed = AwaitReport("barrier_removed", "\"token\":" + std::to_string(token), 3000);
  ASSERT_FALSE(removed.empty()) << CallString("status");
  EXPECT_TRUE(Parse(removed)["sync_probe_ran"].GetBool()) << removed;
  rapidjson::Document s = Parse(CallString("status"));
  EXPECT_STREQ(s["monitors"]["barrier"]["details"]["check"].GetString(), "ok");
  EXPECT_EQ(CallInt("countReports", "(Ljava/lang/String;)I", {L(Jvm()->NewString("barrier_unsupported"))}), 0);
}

#endif

}  // namespace
}  // namespace jp::testing
