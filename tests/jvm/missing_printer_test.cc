// An app whose jankprobe classes lack com.jankprobe.LooperPrinter: the looper monitor's printer source
// fails with a reason that names the class, and the default poll source, which never loads it, runs.
#include <gtest/gtest.h>

#include <string>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

std::string LooperOnly(const char* source) {
  return std::string(R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)") +
         R"("looper":{"source":")" + source + R"("}})";
}

class MissingPrinterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const AppLaunch& launch = LaunchApp(LooperOnly("printer"));
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  }
};

TEST_F(MissingPrinterTest, PrinterSourceSaysTheClassIsMissing) {
  EXPECT_EQ(LaunchApp("").start_rc, -5) << "JANKPROBE_ERR_MONITOR expected: " << CallString("status");
  ASSERT_EQ(Configure(LooperOnly("printer")), -5) << CallString("status");
  const std::string state = StatusOf("looper").state;
  EXPECT_EQ(state.rfind("disabled: ", 0), 0u) << state;
  EXPECT_NE(state.find("com/jankprobe/LooperPrinter"), std::string::npos) << state;
  EXPECT_NE(state.find("ClassNotFoundException"), std::string::npos) << state;
  EXPECT_FALSE(Jvm()->Env()->ExceptionCheck());
}

TEST_F(MissingPrinterTest, PollSourceRunsWithoutIt) {
  ASSERT_EQ(Configure(LooperOnly("poll")), 0) << CallString("status");
  const MonitorStatus s = StatusOf("looper");
  EXPECT_EQ(s.state, "on") << CallString("status");
  EXPECT_EQ(s.Str("source"), "poll") << CallString("status");
  // The main thread still runs its messages.
  EXPECT_EQ(CallInt("pokeMain"), 1);
  // A switch to the printer by the remote flag fails, says why, and keeps the poll source.
  ASSERT_EQ(Configure(LooperOnly("printer")), 0) << CallString("status");
  const MonitorStatus after = StatusOf("looper");
  EXPECT_EQ(after.state, "on");
  EXPECT_EQ(after.Str("source"), "poll") << CallString("status");
  const std::string error = after.Str("source_error");
  EXPECT_NE(error.find("com/jankprobe/LooperPrinter"), std::string::npos) << CallString("status");
  EXPECT_NE(error.find("kept poll"), std::string::npos) << error;
  EXPECT_FALSE(Jvm()->Env()->ExceptionCheck());
}

}  // namespace
}  // namespace jp::testing
