// End to end through the C API: a process with a file-backed timeline is killed with SIGKILL (what the
// system does on an ANR); the next start recovers its records and the Chrome trace export shows them as
// the previous run's process, next to the live one.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "hook/clock.h"
#include "hook/monitor.h"
#include "jankprobe/jankprobe.h"

namespace jp::hook {
namespace {

std::string ConfigFor(const std::string& file) {
  return "{\"input\":{\"enabled\":false},\"idle\":{\"enabled\":false},\"barrier\":{\"enabled\":false},"
         "\"looper\":{\"enabled\":false},\"timeline\":{\"capacity\":1024,\"file\":\"" + file + "\"}}";
}

TEST(PluginRecovery, RecordsOfAKilledRunAreExportedAsThePreviousRun) {
  char dir[] = "/tmp/jankprobe-recovery-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/timeline.bin";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  constexpr int kRecords = 300;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The "app": start, write records as a monitor would, say so, then wait to be killed mid-run.
    if (jankprobe_start(ConfigFor(file).c_str()) != JANKPROBE_OK) _exit(2);
    const PluginContext* ctx = CurrentPluginContext();
    if (!ctx) _exit(3);
    const uint16_t name = ctx->timeline->Intern("com.example.SlowHandler");
    const uint16_t key = ctx->timeline->Intern("what");
    for (int i = 0; i < kRecords; ++i) {
      Event e;
      e.kind = EventKind::kLooperMessage;
      e.tid = ctx->main_tid;
      e.ts_ns = MonotonicNs();
      e.dur_ns = 1000 + static_cast<uint64_t>(i);
      e.name = name;
      e.args[0] = EventArg::Int(key, i);
      ctx->timeline->Append(e);
    }
    char ok = 1;
    if (write(ready[1], &ok, 1) != 1) _exit(4);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  // The next run: same file.
  ASSERT_EQ(jankprobe_start(ConfigFor(file).c_str()), JANKPROBE_OK) << jankprobe_last_error();
  rapidjson::Document st;
  st.Parse(jankprobe_status());
  EXPECT_EQ(st["timeline"]["previous_run_records"].GetUint64(), static_cast<uint64_t>(kRecords));
  const std::string trace = std::string(dir) + "/trace.json";
  ASSERT_EQ(jankprobe_export(trace.c_str(), JANKPROBE_EXPORT_CHROME_TRACE), JANKPROBE_OK) << jankprobe_last_error();
  jankprobe_stop();

  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(ss.str().c_str()).HasParseError());
  int recovered = 0;
  bool previous_named = false;
  std::vector<bool> seen(kRecords, false);
  for (const auto& e : d["traceEvents"].GetArray()) {
    const std::string ph = e["ph"].GetString();
    if (ph == "M" && std::string(e["name"].GetString()) == "process_name" &&
        std::string(e["args"]["name"].GetString()).find("previous run") != std::string::npos) {
      previous_named = e["pid"].GetInt() == static_cast<int>(child);
    }
    if (ph == "X" && e["pid"].GetInt() == static_cast<int>(child)) {
      EXPECT_STREQ(e["name"].GetString(), "com.example.SlowHandler");
      const int what = e["args"]["what"].GetInt();
      ASSERT_TRUE(what >= 0 && what < kRecords);
      EXPECT_FALSE(seen[what]) << "record " << what << " twice";
      seen[what] = true;
      EXPECT_NEAR(e["dur"].GetDouble(), (1000.0 + what) / 1000.0, 1e-6);  // microseconds
      ++recovered;
    }
  }
  EXPECT_TRUE(previous_named);
  EXPECT_EQ(recovered, kRecords);  // every record committed before the kill
  remove(trace.c_str());
  remove(file.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace jp::hook
