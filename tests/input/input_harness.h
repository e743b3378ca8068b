// Shared by the input monitor's end-to-end suites: starts the plugin with the real input monitor, plugs a
// stack-capture hook that records when it ran, collects reports, and reads input records back.
#ifndef JANKPROBE_TESTS_INPUT_INPUT_HARNESS_H_
#define JANKPROBE_TESTS_INPUT_INPUT_HARNESS_H_

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <time.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "hook/clock.h"
#include "hook/monitor.h"
#include "hook/event_clock.h"
#include "input/input_monitor.h"
#include "input/input_tracker.h"
#include "jankprobe/jankprobe.h"

namespace jp::input::testing {

// The proxies stamp events with EventClock, which is CLOCK_MONOTONIC to within this (the contract of
// hook/event_clock.h): a record's timestamp may sit this far outside a bracket the test took with
// clock_gettime, a duration (two stamps) twice as far.
inline constexpr uint64_t kClockBoundNs = hook::EventClock::kBoundNs;
inline constexpr double kClockBoundMs = static_cast<double>(kClockBoundNs) / 1e6;

inline constexpr char kFakeStack[] = "at com.example.Feed.bind(Feed.java:42)\nat android.os.Looper.loop(Looper.java:223)\n";

struct Harness {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> reports;
  std::vector<uint64_t> capture_times;

  static long Capture(void* ctx, char* buf, size_t cap) {
    auto* h = static_cast<Harness*>(ctx);
    {
      std::lock_guard<std::mutex> lock(h->mu);
      h->capture_times.push_back(hook::MonotonicNs());
    }
    h->cv.notify_all();  // WaitForCaptures
    const size_t n = std::strlen(kFakeStack) < cap ? std::strlen(kFakeStack) : cap;
    std::memcpy(buf, kFakeStack, n);
    return static_cast<long>(n);
  }
  static void OnReport(const char* json, void* arg) {
    auto* h = static_cast<Harness*>(arg);
    std::lock_guard<std::mutex> lock(h->mu);
    h->reports.emplace_back(json);
    h->cv.notify_all();
  }

  // Starts jankprobe with only the input monitor. The calling thread is the app's main thread.
  int Start(int lag_ms, int anr_ms, int api) {
    hook::RegisterMonitorFactory(Monitor::kInput, MakeInputMonitor);
    hook::RegisterMonitorFactory(Monitor::kIdle, nullptr);
    hook::RegisterMonitorFactory(Monitor::kBarrier, nullptr);
    hook::RegisterMonitorFactory(Monitor::kLooper, nullptr);
    hook::SetStackCaptureHook(&Capture, this);
    hook::SetMainThreadTid(static_cast<uint32_t>(hook::CurrentTid()));
    jankprobe_set_report_listener(&OnReport, this);
    const int rc = jankprobe_start(Config(lag_ms, anr_ms, api).c_str());
    // The plugin keeps its timeline across stop/start: look only at what this run appends.
    if (const hook::PluginContext* ctx = hook::CurrentPluginContext()) g_first_ticket = ctx->timeline->appended();
    return rc;
  }
  static inline uint64_t g_first_ticket = 0;
  static std::string Config(int lag_ms, int anr_ms, int api, bool enabled = true) {
    return "{\"input\": {\"enabled\": " + std::string(enabled ? "true" : "false") +
           ", \"lag_ms\": " + std::to_string(lag_ms) + ", \"anr_ms\": " + std::to_string(anr_ms) +
           ", \"android_api\": " + std::to_string(api) +
           "}, \"report\": {\"max_reports_per_minute\": 600}, \"idle\": {\"enabled\": false},"
           " \"barrier\": {\"enabled\": false}, \"looper\": {\"enabled\": false}}";
  }
  void Stop() {
    jankprobe_stop();
    jankprobe_set_report_listener(nullptr, nullptr);
    hook::SetStackCaptureHook(nullptr, nullptr);
  }

  // Reports of a type, parsed; waits up to timeout_ms for at least `want` of them.
  // Until `want` stacks have been captured in all, or timeout_ms passed: whether they were.
  bool WaitForCaptures(size_t want, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return capture_times.size() >= want; });
  }
  std::vector<rapidjson::Document> Reports(const std::string& type, size_t want = 0, int timeout_ms = 0) {
    std::unique_lock<std::mutex> lock(mu);
    auto matching = [&] {
      std::vector<rapidjson::Document> out;
      for (const std::string& r : reports) {
        rapidjson::Document d;
        d.Parse(r.c_str());
        if (!d.HasParseError() && d.HasMember("type") && type == d["type"].GetString()) out.push_back(std::move(d));
      }
      return out;
    };
    if (timeout_ms > 0) {
      cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return matching().size() >= want; });
    }
    return matching();
  }
};

// One input record read back from the timeline.
struct Record {
  hook::EventKind kind;
  std::string name;
  uint64_t ts_ns, dur_ns;
  uint32_t tid;
  int64_t fd = -1, seq = -1;
  std::string mode;
};

// The records the main thread's events leave in the finished ring reach the timeline at the watchdog's
// next drain (InputTracker::kDrainPeriodNs); InputRecords drains first, so it sees every finished event.
inline std::vector<Record> InputRecords() {
  std::vector<Record> out;
  const hook::PluginContext* ctx = hook::CurrentPluginContext();
  if (ctx == nullptr) return out;
  InputTracker::Get().DrainFinished();
  const hook::StringTable& strings = ctx->timeline->strings();
  for (const hook::Event& e : ctx->timeline->Read(Harness::g_first_ticket).events) {
    if (e.kind != hook::EventKind::kInputKey && e.kind != hook::EventKind::kInputMotion) continue;
    Record r{e.kind, std::string(strings.Lookup(e.name)), e.ts_ns, e.dur_ns, e.tid, -1, -1, ""};
    for (const hook::EventArg& a : e.args) {
      const std::string key(strings.Lookup(a.key));
      if (key == "fd" && a.type == hook::ArgType::kInt) r.fd = a.as_int();
      if (key == "seq" && a.type == hook::ArgType::kInt) r.seq = a.as_int();
      if (key == "mode" && a.type == hook::ArgType::kString) r.mode = std::string(strings.Lookup(a.as_string()));
    }
    out.push_back(r);
  }
  return out;
}

// A field of monitors.input.details in jankprobe_status() ("imports.recvfrom", "counters.events_read").
inline std::string InputDetail(const char* group, const char* key) {
  rapidjson::Document d;
  d.Parse(jankprobe_status());
  if (d.HasParseError() || !d.HasMember("monitors")) return "<no status>";
  const auto& m = d["monitors"]["input"];
  if (!m.HasMember("details") || !m["details"].HasMember(group)) return "<no details>";
  const auto& g = m["details"][group];
  if (!g.HasMember(key)) return "<missing>";
  if (g[key].IsString()) return g[key].GetString();
  if (g[key].IsUint64()) return std::to_string(g[key].GetUint64());
  return "<other>";
}

inline void SleepUntil(uint64_t t_ns) {
  timespec ts{static_cast<time_t>(t_ns / hook::kNsPerSec), static_cast<long>(t_ns % hook::kNsPerSec)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

}  // namespace jp::input::testing

#endif
