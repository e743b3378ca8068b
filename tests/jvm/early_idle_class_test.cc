// com.jankprobe.TimingIdleHandlerList initialised by app code before the idle monitor ever started: its
// static initialiser finds nativeWords unregistered (the monitor registers the natives when it first
// resolves the class, before anything of jankprobe's initialises it), so the class fails to initialise.
// There is no fallback to words of its own (the watchdog reads the native ones): the idle monitor must
// refuse to start with a reason that names the class, leave no exception pending, and the app must run on.
#include <gtest/gtest.h>

#include <string>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

const char* kIdleOff = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},)"
                       R"("idle":{"enabled":false}})";
const char* kIdleOn = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false}})";

TEST(EarlyIdleClassTest, TheIdleMonitorSaysWhyAndTheAppRunsOn) {
  const AppLaunch& launch = LaunchApp(kIdleOff);
  if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  ASSERT_EQ(launch.start_rc, 0) << CallString("status");
  std::string why;
  EXPECT_EQ(Jvm()->AppClass("com.jankprobe.TimingIdleHandlerList", &why), nullptr) << "initialised without natives";
  EXPECT_NE(why.find("UnsatisfiedLinkError"), std::string::npos) << why;
  EXPECT_NE(why.find("nativeWords"), std::string::npos) << why;

  EXPECT_EQ(Configure(kIdleOn), -5) << "JANKPROBE_ERR_MONITOR expected: " << CallString("status");
  EXPECT_FALSE(Jvm()->Env()->ExceptionCheck());
  const std::string state = StatusOf("idle").state;
  RecordProperty("idle_state", state);  // the reason as a user reads it (--gtest_output=json)
  EXPECT_EQ(state.rfind("disabled: ", 0), 0u) << state;
  EXPECT_NE(state.find("TimingIdleHandlerList"), std::string::npos) << state;
  EXPECT_NE(state.find("NoClassDefFoundError"), std::string::npos) << state;
  // The queue keeps the app's own list, and its handlers run.
  EXPECT_EQ(CallString("idleHandlersDescription"), "java.util.ArrayList[com.example.app.CountingIdleHandler]");
  const int before = CallInt("earlyCalls");
  ASSERT_EQ(CallInt("pokeMain"), 1);
  EXPECT_GT(CallInt("earlyCalls"), before);
}

}  // namespace
}  // namespace jp::testing
