// JankProbe.start with every monitor off (a remote flag that keeps the library loaded but watches nothing):
// the timeline ring is made only when something may record into it. Until a monitor is on, the status has
// no ring (no capacity), no watchdog thread runs; an export still works (an empty trace, the ring made for
// it); the first monitor switched on by a new flag gets its ring. One JVM per test process; the tests run
// in this order and share it.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

const char* kEveryMonitorOff = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
                               R"("looper":{"enabled":false}})";
const char* kIdleOn = R"({"input":{"enabled":false},"barrier":{"enabled":false},"looper":{"enabled":false}})";

// The status's "timeline" object, parsed into *doc; null when the status has none.
const rapidjson::Value* TimelineStatus(rapidjson::Document* doc, std::string* text) {
  *text = CallString("status");
  doc->Parse(text->c_str());
  if (doc->HasParseError() || !doc->IsObject() || !doc->HasMember("timeline")) return nullptr;
  return &(*doc)["timeline"];
}

class StartWithoutMonitorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const AppLaunch& launch = LaunchApp(kEveryMonitorOff);
    if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
    ASSERT_EQ(launch.start_rc, 0);
  }
};

TEST_F(StartWithoutMonitorsTest, NoRingWhileEveryMonitorIsOff) {
  rapidjson::Document doc;
  std::string text;
  const rapidjson::Value* timeline = TimelineStatus(&doc, &text);
  ASSERT_NE(timeline, nullptr) << text;
  EXPECT_TRUE(doc["running"].GetBool()) << text;
  EXPECT_FALSE(timeline->HasMember("capacity")) << "a ring was made with every monitor off: " << text;
  ASSERT_TRUE(timeline->HasMember("previous_run_records")) << text;
  EXPECT_EQ((*timeline)["previous_run_records"].GetUint64(), 0u);
  for (const char* m : {"input", "idle", "barrier", "looper"}) EXPECT_EQ(StatusOf(m).state, "off") << m;
}

TEST_F(StartWithoutMonitorsTest, AnExportBeforeAnyMonitorRanIsAnEmptyTrace) {
  const std::string trace = ExportedTrace();
  rapidjson::Document doc;
  doc.Parse(trace.c_str());
  ASSERT_FALSE(doc.HasParseError()) << trace;
  ASSERT_TRUE(doc.IsObject() && doc.HasMember("traceEvents") && doc["traceEvents"].IsArray()) << trace;
  for (const auto& e : doc["traceEvents"].GetArray()) {
    // Only the trace's own metadata (process and thread names): nothing was recorded.
    ASSERT_TRUE(e.HasMember("ph")) << trace;
    EXPECT_STREQ(e["ph"].GetString(), "M") << trace;
  }
  rapidjson::Document status;
  std::string text;
  const rapidjson::Value* timeline = TimelineStatus(&status, &text);
  ASSERT_NE(timeline, nullptr) << text;
  EXPECT_FALSE(timeline->HasMember("capacity")) << "the export made a ring for an empty trace: " << text;
}

TEST_F(StartWithoutMonitorsTest, AMonitorSwitchedOnLaterRecordsIntoItsRing) {
  ASSERT_EQ(Configure(kIdleOn), 0) << CallString("status");
  EXPECT_EQ(StatusOf("idle").state, "on");
  rapidjson::Document doc;
  std::string text;
  const rapidjson::Value* timeline = TimelineStatus(&doc, &text);
  ASSERT_NE(timeline, nullptr) << text;
  ASSERT_TRUE(timeline->HasMember("capacity")) << text;
  // The monitor's switch is on the timeline (Plugin::MarkStateLocked): the ring is the one it records into.
  EXPECT_GE((*timeline)["appended"].GetUint64(), 1u) << text;
}

}  // namespace
}  // namespace jp::testing
