// The idle monitor's per-class figures as the status reads them, and what keeping them costs the app:
// - the status that first reads them loads no class into the app (they are walked as an array, not through
//   a LinkedHashMap's entry set and iterator classes, which an app need not have loaded otherwise);
// - a class's figures outlive its one-shot handlers and keep none of them alive (the figures are held
//   per class name, not through any handler object the queue has let go).
// One JVM per test process; the tests run in this order and share it. The VM logs every class it loads
// to a file (-Xlog:class+load through JAVA_TOOL_OPTIONS, read when the VM is created), so a test can see
// which classes a call loaded: the lines it added to the log.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

// Every monitor off but idle (on by default).
const char* kIdleOnly = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false}})";
constexpr const char* kScenarios = "com.example.app.IdleFiguresScenarios";
constexpr const char* kOneShot = "com.example.app.IdleFiguresScenarios$OneShot";

const std::string& ClassLoadLog() {
  static const std::string path = "/tmp/jp-idle-figures-classes-" + std::to_string(getpid()) + ".log";
  return path;
}

std::string ClassLoadLogText() {
  std::ifstream in(ClassLoadLog());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int ScenarioInt(const char* method) {
  JavaResult r = Jvm()->CallStatic(kScenarios, method, "()I");
  return r.ok ? r.value.i : -1000;
}

class IdleFiguresStatusTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Before the first LaunchApp creates the VM (one per process); kept beside options already set.
    const char* options = getenv("JAVA_TOOL_OPTIONS");
    std::string with_log = options ? std::string(options) + " " : std::string();
    with_log += "-Xlog:class+load=info:file=" + ClassLoadLog();
    setenv("JAVA_TOOL_OPTIONS", with_log.c_str(), 1);
  }
  static void TearDownTestSuite() { unlink(ClassLoadLog().c_str()); }

  void SetUp() override {
    const AppLaunch& launch = LaunchApp(kIdleOnly);
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
    // No status read here: the first test measures the first one.
    ASSERT_EQ(launch.start_rc, 0);
  }
};

TEST_F(IdleFiguresStatusTest, TheFirstStatusThatReadsFiguresLoadsNoClass) {
  ASSERT_GE(ScenarioInt("runOneShot"), 1) << "the one-shot handler did not run";
  const std::string log_before = ClassLoadLogText();
  ASSERT_NE(log_before.find("com.jankprobe.TimingIdleHandlerList"), std::string::npos)
      << "no class-load log (JAVA_TOOL_OPTIONS not read?) in " << ClassLoadLog();
  // The first status since the idle monitor started: it reads the Java side's figures for the first time.
  const std::string status = CallString("status");
  const std::string log_after = ClassLoadLogText();
  ASSERT_GE(log_after.size(), log_before.size());
  EXPECT_EQ(log_after.substr(log_before.size()), "") << "classes loaded by the status: " << status;
  ASSERT_EQ(StatusOf("idle").state, "on") << status;
  const IdleClassFigures f = ClassFiguresOf(kOneShot);
  ASSERT_TRUE(f.found) << CallString("status");
  EXPECT_GE(f.calls, 1u);
}

TEST_F(IdleFiguresStatusTest, AClassKeepsItsFiguresAcrossOneShotHandlersAndNoneOfThemAlive) {
  size_t classes_before = 0;
  const IdleClassFigures before = ClassFiguresOf(kOneShot, &classes_before);
  const int calls = ScenarioInt("runOneShot");
  ASSERT_GE(calls, 1) << "the one-shot handler did not run";
  size_t classes_after = 0;
  const IdleClassFigures after = ClassFiguresOf(kOneShot, &classes_after);
  ASSERT_TRUE(after.found) << CallString("status");
  // A new handler object of a known class adds to that class's figures: no entry of its own.
  EXPECT_EQ(after.calls, before.calls + 1) << CallString("status");
  EXPECT_EQ(after.calls, static_cast<uint64_t>(calls));
  if (before.found) {
    EXPECT_EQ(classes_after, classes_before);
  }
  EXPECT_EQ(ScenarioInt("lastOneShotCollected"), 1) << "a run and removed one-shot handler is still reachable";
  // Its figures stay after the handler is gone.
  EXPECT_EQ(ClassFiguresOf(kOneShot).calls, after.calls);
}

}  // namespace
}  // namespace jp::testing
