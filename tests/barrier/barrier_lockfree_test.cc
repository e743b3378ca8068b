// A queue whose mMessages is always null (Android 17's lock-free queue, stood in by a MessageQueue variant
// that keeps its list elsewhere): the barrier check says "unsupported" instead of "no barrier", while the
// idle monitor, which does not read mMessages, still runs.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "tests/jvm/app_under_test.h"

namespace jp::testing {
namespace {

const char* kConfig = R"({"input":{"enabled":false},"looper":{"enabled":false},)"
                      R"("barrier":{"check_ms":50,"leak_ms":200}})";

TEST(BarrierLockFreeTest, CheckReportsUnsupportedNotNoBarrier) {
  const AppLaunch& launch = LaunchApp(kConfig);
  if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  ASSERT_EQ(launch.start_rc, 0) << CallString("status");
  const std::string report = AwaitReport("barrier_unsupported", "", 3000);
  ASSERT_FALSE(report.empty()) << CallString("status");
  rapidjson::Document r;
  r.Parse(report.c_str());
  EXPECT_STREQ(r["check"].GetString(), "unsupported");
  EXPECT_NE(std::string(r["reason"].GetString()).find("mMessages is null"), std::string::npos) << report;

  rapidjson::Document s;
  s.Parse(CallString("status").c_str());
  ASSERT_FALSE(s.HasParseError());
  EXPECT_STREQ(s["monitors"]["barrier"]["details"]["check"].GetString(), "unsupported");
  EXPECT_STREQ(s["monitors"]["idle"]["state"].GetString(), "on");

  // A leaked barrier on this queue is not misread as "no barrier": nothing claims a verdict either way.
  const int token = CallInt("leakBarrier");
  EXPECT_TRUE(AwaitReport("barrier_leak", "", 500).empty());
  EXPECT_TRUE(Jvm()->CallStatic(kTestApp, "removeBarrier", "(I)Z", {I(token)}).value.z);
  EXPECT_EQ(CallInt("pokeMain"), 1);  // the queue itself works
}

}  // namespace
}  // namespace jp::testing
