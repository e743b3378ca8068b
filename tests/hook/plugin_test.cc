// The lifecycle behind jankprobe.h, with fake monitors that count what the plugin asks of them.
#include <dirent.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "hook/clock.h"
#include "hook/monitor.h"
#include "jankprobe/jankprobe.h"
#include "tests/proc_threads.h"

namespace jp::hook {
namespace {

struct Counts {
  std::atomic<int> started{0}, stopped{0}, retuned{0};
  int last_lag_ms = 0;
  bool fail_start = false;
};
Counts g_counts[kMonitorCount];

template <Monitor M>
class FakeMonitor : public MonitorImpl {
 public:
  bool Start(const Config& config, PluginContext* ctx, std::string* why) override {
    Counts& c = g_counts[static_cast<size_t>(M)];
    if (c.fail_start) {
      *why = "NoSuchFieldError: mIdleHandlers";
      return false;
    }
    ctx_ = ctx;
    c.started++;
    c.last_lag_ms = config.input.lag_ms;
    return true;
  }
  void Retune(const Config& config) override {
    g_counts[static_cast<size_t>(M)].retuned++;
    g_counts[static_cast<size_t>(M)].last_lag_ms = config.input.lag_ms;
  }
  void Stop() override { g_counts[static_cast<size_t>(M)].stopped++; }
  std::string StatusJson() const override { return "{\"fake\":true}"; }
  PluginContext* ctx_ = nullptr;
};

template <Monitor M>
std::unique_ptr<MonitorImpl> MakeFake() {
  return std::make_unique<FakeMonitor<M>>();
}

int ThreadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// Whether a thread of this process has this name (/proc/self/task/<tid>/comm).
bool HasThreadNamed(const std::string& name) { return !jp::testing::ThreadsNamed(name).empty(); }

// A joined thread can still be listed in /proc/self/task for a moment (the kernel releases it after the
// join's wake-up), so absence is checked with a bounded wait; presence needs none (Start waits for the tid).
bool ThreadGone(const std::string& name) {
  const uint64_t deadline = MonotonicNs() + 2 * kNsPerSec;
  while (HasThreadNamed(name)) {
    if (MonotonicNs() > deadline) return false;
    usleep(1000);
  }
  return true;
}

int SettledThreadCount(int expected) {
  const uint64_t deadline = MonotonicNs() + 2 * kNsPerSec;
  int n = ThreadCount();
  while (n != expected && MonotonicNs() < deadline) {
    usleep(1000);
    n = ThreadCount();
  }
  return n;
}

constexpr const char* kEveryMonitorOff =
    "{\"input\": {\"enabled\": false}, \"idle\": {\"enabled\": false}, \"barrier\": {\"enabled\": false},"
    " \"looper\": {\"enabled\": false}}";

rapidjson::Document Status() {
  rapidjson::Document d;
  d.Parse(jankprobe_status());
  return d;
}

std::string MonitorState(const char* name) { return Status()["monitors"][name]["state"].GetString(); }

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (Counts& c : g_counts) {
      c.started = c.stopped = c.retuned = 0;
      c.fail_start = false;
    }
    RegisterMonitorFactory(Monitor::kInput, MakeFake<Monitor::kInput>);
    RegisterMonitorFactory(Monitor::kIdle, MakeFake<Monitor::kIdle>);
    RegisterMonitorFactory(Monitor::kBarrier, MakeFake<Monitor::kBarrier>);
    RegisterMonitorFactory(Monitor::kLooper, nullptr);  // a library built without it
  }
  void TearDown() override {
    jankprobe_stop();
    ThreadGone("jp-watchdog");  // the next test counts threads
  }
  Counts& input() { return g_counts[0]; }
  Counts& idle() { return g_counts[1]; }
};

// With every monitor off nothing records, so there is no ring (ApplyLocked makes it for the first monitor);
// an export then is the trace of an empty timeline, and must not make the ring (132 KiB mapped, its header
// page resident) only to read nothing from it. First in the file: see the check at its start.
TEST_F(PluginTest, AnExportBeforeAnyMonitorRanIsAnEmptyTraceAndMakesNoRing) {
  ASSERT_EQ(jankprobe_start(kEveryMonitorOff), JANKPROBE_OK);
  // The plugin is process-wide and keeps its ring across stop and start: this test comes first in the
  // file, so in a whole run nothing made one yet (run alone or shuffled after another test, it cannot tell).
  if (Status()["timeline"].HasMember("capacity")) GTEST_SKIP() << "an earlier test in this process made the ring";
  char dir[] = "/tmp/jankprobe-export-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string trace = std::string(dir) + "/trace.json";
  ASSERT_EQ(jankprobe_export(trace.c_str(), JANKPROBE_EXPORT_CHROME_TRACE), JANKPROBE_OK) << jankprobe_last_error();
  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(ss.str().c_str()).HasParseError()) << ss.str();
  ASSERT_TRUE(d.HasMember("traceEvents") && d["traceEvents"].IsArray()) << ss.str();
  bool process_named = false, main_named = false;
  for (const auto& e : d["traceEvents"].GetArray()) {
    // Only the trace's own metadata: nothing was recorded.
    EXPECT_STREQ(e["ph"].GetString(), "M") << ss.str();
    const std::string name = e["name"].GetString();
    process_named |= name == "process_name";
    main_named |= name == "thread_name" && std::string(e["args"]["name"].GetString()) == "main";
  }
  EXPECT_TRUE(process_named) << ss.str();
  EXPECT_TRUE(main_named) << ss.str();
  EXPECT_FALSE(Status()["timeline"].HasMember("capacity")) << "the export made a ring: " << jankprobe_status();
  // The first monitor switched on still gets its ring.
  ASSERT_EQ(jankprobe_configure("{\"input\": {\"enabled\": true}}"), JANKPROBE_OK) << jankprobe_last_error();
  EXPECT_TRUE(Status()["timeline"].HasMember("capacity")) << jankprobe_status();
  unlink(trace.c_str());
  rmdir(dir);
}

TEST_F(PluginTest, RejectedStartConfigNamesTheKeyAndStartsNothing) {
  EXPECT_EQ(jankprobe_start("{\"input\": {\"lag_ms\": -5}}"), JANKPROBE_ERR_CONFIG);
  EXPECT_NE(std::string(jankprobe_last_error()).find("input.lag_ms"), std::string::npos) << jankprobe_last_error();
  EXPECT_FALSE(Status()["started"].GetBool());
  EXPECT_EQ(input().started, 0);
  EXPECT_EQ(jankprobe_start(nullptr), JANKPROBE_ERR_INVALID_ARG);
  EXPECT_EQ(jankprobe_configure("{}"), JANKPROBE_ERR_STATE);
}

TEST_F(PluginTest, StartsEnabledMonitorsAndReportsTheUnavailableOne) {
  ASSERT_EQ(jankprobe_start("{\"barrier\": {\"enabled\": false}}"), JANKPROBE_OK) << jankprobe_last_error();
  EXPECT_EQ(input().started, 1);
  EXPECT_EQ(idle().started, 1);
  EXPECT_EQ(g_counts[2].started, 0);
  EXPECT_EQ(MonitorState("input"), "on");
  EXPECT_EQ(MonitorState("barrier"), "off");
  EXPECT_EQ(MonitorState("looper"), "unavailable: not built into this library");
  EXPECT_TRUE(Status()["monitors"]["input"]["details"]["fake"].GetBool());
}

TEST_F(PluginTest, RemoteFlagTogglesRetunesAndRejectedFlagChangesNothing) {
  ASSERT_EQ(jankprobe_start("{}"), JANKPROBE_OK);
  // Idle off, input retuned.
  ASSERT_EQ(jankprobe_configure("{\"idle\": {\"enabled\": false}, \"input\": {\"lag_ms\": 150}}"), JANKPROBE_OK);
  EXPECT_EQ(idle().stopped, 1);
  EXPECT_EQ(input().started, 1);  // not restarted, only retuned
  EXPECT_EQ(input().retuned, 1);
  EXPECT_EQ(input().last_lag_ms, 150);
  const std::string before = jankprobe_status();
  // A hostile flag: rejected, everything as it was.
  EXPECT_EQ(jankprobe_configure("{\"idle\": {\"enabled\": true}, \"input\": {\"lag_ms\": \"fast\"}}"),
            JANKPROBE_ERR_CONFIG);
  EXPECT_NE(std::string(jankprobe_last_error()).find("input.lag_ms"), std::string::npos);
  EXPECT_EQ(idle().started, 1);
  EXPECT_EQ(input().last_lag_ms, 150);
  EXPECT_EQ(jankprobe_status(), before);
  // Idle on again: re-installed.
  ASSERT_EQ(jankprobe_configure("{\"input\": {\"lag_ms\": 150}}"), JANKPROBE_OK);
  EXPECT_EQ(idle().started, 2);
  EXPECT_EQ(MonitorState("idle"), "on");
}

TEST_F(PluginTest, AMonitorThatCannotStartIsDisabledWithItsReasonAndOthersRun) {
  idle().fail_start = true;
  EXPECT_EQ(jankprobe_start("{}"), JANKPROBE_ERR_MONITOR);
  EXPECT_NE(std::string(jankprobe_last_error()).find("idle: NoSuchFieldError"), std::string::npos);
  EXPECT_EQ(MonitorState("idle"), "disabled: NoSuchFieldError: mIdleHandlers");
  EXPECT_EQ(MonitorState("input"), "on");
  EXPECT_TRUE(Status()["running"].GetBool());
}

TEST_F(PluginTest, SampledOutDeviceRunsNothingAndSaysWhy) {
  ASSERT_EQ(jankprobe_start("{\"sample_rate\": 0.0, \"device\": {\"device_id\": \"abc\"}}"), JANKPROBE_OK);
  EXPECT_EQ(input().started, 0);
  EXPECT_FALSE(Status()["running"].GetBool());
  EXPECT_NE(MonitorState("input").find("off: sampled out"), std::string::npos) << MonitorState("input");
  // The same device listed as always-on runs.
  ASSERT_EQ(jankprobe_configure("{\"sample_rate\": 0.0, \"targeting\": {\"device_ids\": [\"abc\"]}}"), JANKPROBE_OK);
  EXPECT_EQ(input().started, 1);
}

TEST_F(PluginTest, StopLeavesNoThreadBehindAndStopsEveryMonitor) {
  const int threads_before = ThreadCount();
  ASSERT_EQ(jankprobe_start("{}"), JANKPROBE_OK);
  EXPECT_GT(ThreadCount(), threads_before);  // the watchdog
  jankprobe_stop();
  EXPECT_EQ(SettledThreadCount(threads_before), threads_before);
  EXPECT_EQ(input().stopped, 1);
  EXPECT_EQ(idle().stopped, 1);
  EXPECT_FALSE(Status()["started"].GetBool());
}

TEST_F(PluginTest, WatchdogRunsOnlyWhileAMonitorIsOn) {
  const int threads_before = ThreadCount();
  ASSERT_EQ(jankprobe_start(kEveryMonitorOff), JANKPROBE_OK) << jankprobe_last_error();
  EXPECT_TRUE(Status()["running"].GetBool());  // started and sampled in: only nothing to watch
  EXPECT_FALSE(HasThreadNamed("jp-watchdog"));
  EXPECT_EQ(ThreadCount(), threads_before);
  // A remote flag switches one monitor on: the watchdog starts with it, before it (its context has it).
  ASSERT_EQ(jankprobe_configure("{\"idle\": {\"enabled\": false}, \"barrier\": {\"enabled\": false}}"), JANKPROBE_OK)
      << jankprobe_last_error();
  EXPECT_EQ(input().started, 1);
  EXPECT_EQ(MonitorState("input"), "on");
  EXPECT_TRUE(HasThreadNamed("jp-watchdog"));
  // Everything off again: the thread goes; on again: it comes back.
  ASSERT_EQ(jankprobe_configure(kEveryMonitorOff), JANKPROBE_OK);
  EXPECT_EQ(input().stopped, 1);
  EXPECT_TRUE(ThreadGone("jp-watchdog"));
  EXPECT_EQ(SettledThreadCount(threads_before), threads_before);
  ASSERT_EQ(jankprobe_configure("{}"), JANKPROBE_OK);
  EXPECT_EQ(input().started, 2);
  EXPECT_TRUE(HasThreadNamed("jp-watchdog"));
}

TEST_F(PluginTest, NoWatchdogLeftWhenTheOnlyWantedMonitorCannotStart) {
  idle().fail_start = true;
  const int threads_before = ThreadCount();
  EXPECT_EQ(jankprobe_start("{\"input\": {\"enabled\": false}, \"barrier\": {\"enabled\": false}}"),
            JANKPROBE_ERR_MONITOR);
  EXPECT_EQ(MonitorState("idle"), "disabled: NoSuchFieldError: mIdleHandlers");
  EXPECT_TRUE(ThreadGone("jp-watchdog"));  // started for idle, stopped when it could not start
  EXPECT_EQ(SettledThreadCount(threads_before), threads_before);
  // A monitor this library does not have is not a reason to start it either.
  ASSERT_EQ(jankprobe_configure("{\"input\": {\"enabled\": false}, \"idle\": {\"enabled\": false},"
                                " \"barrier\": {\"enabled\": false}, \"looper\": {\"enabled\": true}}"),
            JANKPROBE_OK);
  EXPECT_EQ(MonitorState("looper"), "unavailable: not built into this library");
  EXPECT_FALSE(HasThreadNamed("jp-watchdog"));
}

void CountReport(const char*, void* arg) { ++*static_cast<std::atomic<int>*>(arg); }

TEST_F(PluginTest, ExportsTheTimelineAsChromeTraceAndReportsAsJsonLines) {
  std::atomic<int> delivered{0};
  jankprobe_set_report_listener(CountReport, &delivered);
  ASSERT_EQ(jankprobe_start("{\"report\": {\"key_packages\": [\"com.example.\"]}}"), JANKPROBE_OK);
  const PluginContext* ctx = CurrentPluginContext();
  ASSERT_NE(ctx, nullptr);
  const uint64_t t0 = MonotonicNs();
  Event idle_event;
  idle_event.kind = EventKind::kIdleHandler;
  idle_event.tid = ctx->main_tid;
  idle_event.ts_ns = t0;
  idle_event.dur_ns = 300 * kNsPerMs;
  idle_event.name = ctx->timeline->Intern("com.example.Prefetch");
  ctx->timeline->Append(idle_event);
  Report report;
  report.type = "touch_lag";
  report.monitor = "input";
  report.ts_ns = t0 + 10 * kNsPerMs;
  report.dur_ns = 250 * kNsPerMs;
  report.stack = {"at com.example.Prefetch.queueIdle(Prefetch.java:10)"};
  ctx->Submit(report);
  ASSERT_TRUE(ctx->reports->Flush(5000));
  EXPECT_EQ(delivered.load(), 1);

  char dir[] = "/tmp/jankprobe-export-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string trace = std::string(dir) + "/trace.json", jsonl = std::string(dir) + "/reports.jsonl";
  ASSERT_EQ(jankprobe_export(trace.c_str(), JANKPROBE_EXPORT_CHROME_TRACE), JANKPROBE_OK) << jankprobe_last_error();
  ASSERT_EQ(jankprobe_export(jsonl.c_str(), JANKPROBE_EXPORT_JSONL), JANKPROBE_OK);
  EXPECT_EQ(jankprobe_export(trace.c_str(), 7), JANKPROBE_ERR_INVALID_ARG);
  EXPECT_EQ(jankprobe_export("/nonexistent-dir/x.json", JANKPROBE_EXPORT_CHROME_TRACE), JANKPROBE_ERR_IO);
  EXPECT_NE(std::string(jankprobe_last_error()).find("/nonexistent-dir/x.json"), std::string::npos);

  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(ss.str().c_str()).HasParseError());
  bool idle_x = false, verdict_i = false, main_named = false;
  for (const auto& e : d["traceEvents"].GetArray()) {
    const std::string ph = e["ph"].GetString(), name = e["name"].GetString();
    if (ph == "X" && name == "com.example.Prefetch") {
      idle_x = true;
      EXPECT_NEAR(e["dur"].GetDouble(), 300000.0, 0.01);  // microseconds
      EXPECT_EQ(e["tid"].GetUint(), ctx->main_tid);
    }
    if (ph == "i" && name == "touch_lag") {
      verdict_i = true;
      EXPECT_STREQ(e["args"]["blocked_by"][0]["name"].GetString(), "com.example.Prefetch");
      EXPECT_STREQ(e["args"]["key_frame"].GetString(), "at com.example.Prefetch.queueIdle(Prefetch.java:10)");
    }
    if (ph == "M" && name == "thread_name" && std::string(e["args"]["name"].GetString()) == "main") main_named = true;
  }
  EXPECT_TRUE(idle_x);
  EXPECT_TRUE(verdict_i);
  EXPECT_TRUE(main_named);

  std::ifstream lines(jsonl);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    rapidjson::Document r;
    ASSERT_FALSE(r.Parse(line.c_str()).HasParseError());
    EXPECT_STREQ(r["type"].GetString(), "touch_lag");
    ++n;
  }
  EXPECT_EQ(n, 1);
  jankprobe_set_report_listener(nullptr, nullptr);
  remove(trace.c_str());
  remove(jsonl.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace jp::hook
