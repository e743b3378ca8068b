// A MessageQueue whose mMessages and mIdleHandlers have other names (as on a device that differs, or one
// whose hidden-API rules deny them): both JNI monitors are disabled with the NoSuchFieldError as reason, in
// the status and in reports, no exception is left pending, and the app runs as before. Also checks the
// harness itself: the plugin's classes are visible only through the app's class loader.
#include <gtest/gtest.h>

#include <string>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

const char* kConfig = R"({"input":{"enabled":false},"looper":{"enabled":false}})";

class RenamedFieldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const AppLaunch& launch = LaunchApp(kConfig);
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  }
};

TEST_F(RenamedFieldsTest, MonitorsAreDisabledWithTheReason) {
  EXPECT_EQ(LaunchApp(kConfig).start_rc, -5) << "JANKPROBE_ERR_MONITOR expected: " << CallString("status");
  const MonitorStatus s = StatusOf("idle");
  ASSERT_FALSE(s.doc.HasParseError());
  EXPECT_TRUE(s.doc["running"].GetBool());
  const std::string idle = s.state;
  const std::string barrier = StatusOf("barrier").state;
  EXPECT_EQ(idle.rfind("disabled: ", 0), 0u) << idle;
  EXPECT_NE(idle.find("NoSuchFieldError"), std::string::npos) << idle;
  EXPECT_NE(idle.find("mIdleHandlers"), std::string::npos) << idle;
  EXPECT_EQ(barrier.rfind("disabled: ", 0), 0u) << barrier;
  EXPECT_NE(barrier.find("mMessages"), std::string::npos) << barrier;

  const std::string report = AwaitReport("monitor_disabled", "\"monitor\":\"idle\"", 2000);
  ASSERT_FALSE(report.empty());
  EXPECT_NE(report.find("disabled: "), std::string::npos);
  EXPECT_FALSE(AwaitReport("monitor_disabled", "\"monitor\":\"barrier\"", 2000).empty());
}

TEST_F(RenamedFieldsTest, NoExceptionIsLeftAndTheAppRunsAsBefore) {
  EXPECT_FALSE(Jvm()->Env()->ExceptionCheck());
  // Retrying with a new flag fails the same way and still leaves nothing pending.
  EXPECT_EQ(Configure(R"({"input":{"enabled":false},"looper":{"enabled":false},"idle":{"lag_ms":300}})"), -5);
  EXPECT_FALSE(Jvm()->Env()->ExceptionCheck());
  const int before = CallInt("earlyCalls");
  EXPECT_EQ(CallInt("pokeMain"), 1);
  EXPECT_GT(CallInt("earlyCalls"), before);
  EXPECT_EQ(CallString("idleHandlersDescription").find("error"), 0u)
      << "the renamed queue has no mIdleHandlers to describe";
}

TEST_F(RenamedFieldsTest, PluginClassesAreOnlyInTheAppLoader) {
  JNIEnv* env = Jvm()->Env();
  // This thread's FindClass uses the system loader, as a native thread's does on Android.
  jclass direct = env->FindClass("com/jankprobe/JankProbe");
  EXPECT_EQ(direct, nullptr);
  EXPECT_NE(Jvm()->TakeException().find("NoClassDefFoundError"), std::string::npos);
  std::string why;
  EXPECT_NE(Jvm()->AppClass("com.jankprobe.JankProbe", &why), nullptr) << why;
  // The stand-ins are framework classes: visible from anywhere.
  jclass looper = env->FindClass("android/os/Looper");
  EXPECT_NE(looper, nullptr);
  if (looper) env->DeleteLocalRef(looper);
}

}  // namespace
}  // namespace jp::testing
