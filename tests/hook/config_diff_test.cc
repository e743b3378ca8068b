// The diff the lifecycle applies when a new remote flag arrives: which monitors start, stop or retune.
#include <string>

#include <gtest/gtest.h>

#include "hook/config.h"

namespace jp {
namespace {

Config Parse(const char* json) {
  ConfigParseResult r = ParseConfig(json);
  EXPECT_TRUE(r.ok()) << r.error;
  return r.ok() ? *r.config : Config{};
}

TEST(ConfigDiffTest, SameConfigChangesNothing) {
  ConfigDiff d = DiffConfigs(Config{}, Config{});
  EXPECT_FALSE(d.any());
  for (size_t i = 0; i < kMonitorCount; ++i) EXPECT_EQ(d.monitors[i], MonitorChange::kUnchanged);
  EXPECT_EQ(d.Describe(), "no change");
}

TEST(ConfigDiffTest, MonitorSwitchedOffAndOn) {
  Config on = Parse("{}");
  Config off = Parse(R"({"idle": {"enabled": false}})");
  ConfigDiff d = DiffConfigs(on, off);
  EXPECT_EQ(d.of(Monitor::kIdle), MonitorChange::kStopped);
  EXPECT_EQ(d.of(Monitor::kInput), MonitorChange::kUnchanged);
  EXPECT_EQ(d.of(Monitor::kBarrier), MonitorChange::kUnchanged);
  EXPECT_EQ(d.of(Monitor::kLooper), MonitorChange::kUnchanged);
  EXPECT_EQ(d.Describe(), "idle: stopped");
  EXPECT_EQ(DiffConfigs(off, on).of(Monitor::kIdle), MonitorChange::kStarted);
}

TEST(ConfigDiffTest, ThresholdChangesAreRetunesWithDetails) {
  Config before = Parse("{}");
  Config after = Parse(R"({"input": {"lag_ms": 150, "anr_ms": 4000}, "barrier": {"auto_remove": true}})");
  ConfigDiff d = DiffConfigs(before, after);
  EXPECT_EQ(d.of(Monitor::kInput), MonitorChange::kRetuned);
  EXPECT_EQ(d.details[static_cast<size_t>(Monitor::kInput)], "lag_ms 100 -> 150, anr_ms 5000 -> 4000");
  EXPECT_EQ(d.of(Monitor::kBarrier), MonitorChange::kRetuned);
  EXPECT_EQ(d.of(Monitor::kIdle), MonitorChange::kUnchanged);
  EXPECT_EQ(d.Describe(), "input: retuned (lag_ms 100 -> 150, anr_ms 5000 -> 4000); barrier: retuned (auto_remove 0 -> 1)");
}

// record_min_us alone must reach the running monitors (it decides which calls/messages get records).
TEST(ConfigDiffTest, RecordMinUsAloneIsARetune) {
  Config before = Parse("{}");
  Config after = Parse(R"({"idle": {"record_min_us": 0}, "looper": {"record_min_us": 5000}})");
  ConfigDiff d = DiffConfigs(before, after);
  EXPECT_EQ(d.of(Monitor::kIdle), MonitorChange::kRetuned);
  EXPECT_EQ(d.details[static_cast<size_t>(Monitor::kIdle)], "record_min_us 1000 -> 0");
  EXPECT_EQ(d.of(Monitor::kLooper), MonitorChange::kRetuned);
  EXPECT_EQ(d.details[static_cast<size_t>(Monitor::kLooper)], "record_min_us 1000 -> 5000");
}

TEST(ConfigDiffTest, LooperSourceSwitchIsARetuneThatNamesBothSources) {
  Config before = Parse(R"({"looper": {"source": "printer"}})");
  Config after = Parse(R"({"looper": {"source": "poll", "poll_library": "/system/lib64/libutils.so"}})");
  ConfigDiff d = DiffConfigs(before, after);
  EXPECT_EQ(d.of(Monitor::kLooper), MonitorChange::kRetuned);
  EXPECT_EQ(d.details[static_cast<size_t>(Monitor::kLooper)],
            "source printer -> poll, poll_library libutils.so -> /system/lib64/libutils.so");
}

TEST(ConfigDiffTest, ThresholdsOfAMonitorThatStaysOffDoNotMatter) {
  Config before = Parse(R"({"looper": {"enabled": false}})");
  Config after = Parse(R"({"looper": {"enabled": false, "lag_ms": 900}})");
  EXPECT_EQ(DiffConfigs(before, after).of(Monitor::kLooper), MonitorChange::kUnchanged);
}

TEST(ConfigDiffTest, MasterSwitchStopsEveryRunningMonitor) {
  Config before = Parse(R"({"looper": {"enabled": false}})");
  Config after = Parse(R"({"enabled": false})");
  ConfigDiff d = DiffConfigs(before, after);
  EXPECT_EQ(d.of(Monitor::kInput), MonitorChange::kStopped);
  EXPECT_EQ(d.of(Monitor::kIdle), MonitorChange::kStopped);
  EXPECT_EQ(d.of(Monitor::kBarrier), MonitorChange::kStopped);
  EXPECT_EQ(d.of(Monitor::kLooper), MonitorChange::kUnchanged) << "was already off";
}

TEST(ConfigDiffTest, BeingSampledOutStopsEverything) {
  Config before = Parse(R"({"device": {"device_id": "device-42"}})");                       // hash 0.89
  Config after = Parse(R"({"sample_rate": 0.5, "device": {"device_id": "device-42"}})");
  ConfigDiff d = DiffConfigs(before, after);
  for (size_t i = 0; i < kMonitorCount; ++i) EXPECT_EQ(d.monitors[i], MonitorChange::kStopped) << i;
  EXPECT_EQ(DiffConfigs(after, before).of(Monitor::kLooper), MonitorChange::kStarted);
}

TEST(ConfigDiffTest, TimelineAndReportChangesAreFlagged) {
  Config before = Parse("{}");
  ConfigDiff d = DiffConfigs(before, Parse(R"({"timeline": {"capacity": 8192}})"));
  EXPECT_TRUE(d.timeline_changed);
  EXPECT_FALSE(d.report_changed);
  EXPECT_TRUE(d.any());
  EXPECT_EQ(d.Describe(), "timeline: changed");
  d = DiffConfigs(before, Parse(R"({"report": {"key_packages": ["com.example."]}})"));
  EXPECT_FALSE(d.timeline_changed);
  EXPECT_TRUE(d.report_changed);
}

TEST(ConfigDiffTest, MonitorActiveCombinesShouldRunAndTheBlock) {
  Config c = Parse(R"({"barrier": {"enabled": false}})");
  EXPECT_TRUE(MonitorActive(c, Monitor::kInput));
  EXPECT_FALSE(MonitorActive(c, Monitor::kBarrier));
  c.enabled = false;
  EXPECT_FALSE(MonitorActive(c, Monitor::kInput));
}

TEST(ConfigDiffTest, NamesAreStable) {
  EXPECT_STREQ(MonitorName(Monitor::kInput), "input");
  EXPECT_STREQ(MonitorName(Monitor::kLooper), "looper");
  EXPECT_STREQ(MonitorChangeName(MonitorChange::kRetuned), "retuned");
}

}  // namespace
}  // namespace jp
