// Export and status of the running (or stopped) plugin.
#include <rapidjson/document.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hook/chrome_trace_exporter.h"
#include "hook/clock.h"
#include "hook/json_out.h"
#include "hook/plugin.h"
#include "hook/text_release.h"

namespace jp::hook {
namespace {

// argv[0] (on Android the package name). Read with plain read(2): a std::ifstream would pull the C++
// runtime's locale and iostream machinery into the library (static initialisers and their relocations,
// touched by every app that loads us, whether it ever exports or not).
std::string ProcessName() {
  std::string name;
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      const char* nul = static_cast<const char*>(memchr(buf, '\0', static_cast<size_t>(n)));
      name.append(buf, nul ? static_cast<size_t>(nul - buf) : static_cast<size_t>(n));
      if (nul || name.size() >= 4096) break;
    }
    close(fd);
  }
  return name.empty() ? "app" : name;
}

}  // namespace

int Plugin::Export(const char* path, int format) {
  if (!path || !*path) return Fail(JANKPROBE_ERR_INVALID_ARG, "export path is empty");
  std::string error;
  if (format == JANKPROBE_EXPORT_JSONL) {
    if (!WriteJsonLines(path, reports_.Kept(), &error)) return Fail(JANKPROBE_ERR_IO, error);
    return JANKPROBE_OK;
  }
  if (format != JANKPROBE_EXPORT_CHROME_TRACE) {
    return Fail(JANKPROBE_ERR_INVALID_ARG, "unknown export format " + std::to_string(format) +
                                               " (1 = Chrome trace, 2 = JSON Lines)");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!ran_) return Fail(JANKPROBE_ERR_STATE, "nothing to export: the plugin never ran on this device");
  // Records still on their way into the timeline (the poll source's finished dispatches wait in its ring
  // for the watchdog) are exported too; what is still running is not (it has no end yet). It ran, but no
  // monitor has been on yet (ApplyLocked makes the ring for the first one): nothing was recorded, so the
  // trace has the process and thread names only (and a recovered previous run), the same empty trace as
  // from an empty ring, without making the ring (132 KiB mapped, its header page resident) for it.
  TimelineRead live;
  if (timeline_) live = reports_.SnapshotWithInFlight(*timeline_, MonotonicNs(), /*running_too=*/false);
  std::vector<TraceProcess> processes;
  TraceProcess current;
  current.pid = static_cast<int32_t>(getpid());
  current.name = ProcessName() + " (jankprobe)";
  current.events = &live.events;
  current.strings = timeline_ ? &timeline_->strings() : nullptr;
  current.time_origin_ns = timeline_ ? timeline_->start_monotonic_ns() : MonotonicNs();
  for (const Event& e : live.events) current.threads.emplace(e.tid, "thread " + std::to_string(e.tid));
  current.threads[main_tid_] = "main";
  if (watchdog_.thread_tid() != 0) current.threads[static_cast<uint32_t>(watchdog_.thread_tid())] = "jankprobe watchdog";
  processes.push_back(std::move(current));
  if (previous_.valid && !previous_.events.empty()) {
    TraceProcess prev;
    // A previous run may have had our pid; keep the tracks apart.
    prev.pid = previous_.pid == processes[0].pid ? previous_.pid + 1 : previous_.pid;
    prev.name = "previous run (recovered after kill): pid " + std::to_string(previous_.pid);
    prev.events = &previous_.events;
    prev.recovered = &previous_;
    prev.time_origin_ns = previous_.start_monotonic_ns;
    for (const Event& e : previous_.events) prev.threads.emplace(e.tid, "thread " + std::to_string(e.tid));
    processes.push_back(std::move(prev));
  }
  std::vector<TraceReport> reports;
  for (const std::string& json : reports_.Kept()) {
    rapidjson::Document d;
    if (d.Parse(json.data(), json.size()).HasParseError() || !d.IsObject()) continue;
    TraceReport r;
    r.json = json;
    if (d.HasMember("ts_ns") && d["ts_ns"].IsUint64()) r.ts_ns = d["ts_ns"].GetUint64();
    if (d.HasMember("type") && d["type"].IsString()) r.type = d["type"].GetString();
    if (r.ts_ns < processes[0].time_origin_ns) r.ts_ns = processes[0].time_origin_ns;
    reports.push_back(std::move(r));
  }
  if (!WriteChromeTrace(path, processes, reports, processes[0].pid, main_tid_, &error)) {
    return Fail(JANKPROBE_ERR_IO, error);
  }
  return JANKPROBE_OK;
}

std::string Plugin::StatusJson() {
  std::lock_guard<std::mutex> lock(mu_);
  JsonOut w;
  w.StartObject();
  w.FieldBool("started", started_);
  w.FieldBool("running", running_);
  w.Field("reason", run_reason_);
  w.Key("monitors");
  w.StartObject();
  for (size_t i = 0; i < kMonitorCount; ++i) {
    w.Key(MonitorName(static_cast<Monitor>(i)));
    w.StartObject();
    w.Field("state", monitor_status_[i]);
    if (monitors_[i]) {
      // A monitor's own JSON goes in only if it is one object: a monitor bug must not make status unreadable.
      const std::string extra = monitors_[i]->StatusJson();
      const size_t brace = extra.find_first_not_of(" \t\r\n");
      if (brace != std::string::npos && extra[brace] == '{') w.EmbedField("details", extra);
    }
    w.EndObject();
  }
  w.EndObject();
  w.Key("warnings");
  w.StartArray();
  for (const std::string& s : warnings_) w.String(s);
  w.EndArray();
  w.Key("timeline");
  w.StartObject();
  if (timeline_) {
    w.Field("capacity", static_cast<uint64_t>(timeline_->capacity()));
    w.Field("appended", static_cast<uint64_t>(timeline_->appended()));
    w.Field("file", timeline_->path());
    w.Field("region_bytes", static_cast<uint64_t>(timeline_->region_size()));
  }
  w.Field("previous_run_records", static_cast<uint64_t>(previous_.valid ? previous_.events.size() : 0));
  if (previous_.found && !previous_.valid) w.Field("previous_run_error", previous_.error);
  w.EndObject();
  w.Key("reports");
  w.StartObject();
  w.Field("submitted", static_cast<uint64_t>(reports_.submitted()));
  w.Field("rate_limited", static_cast<uint64_t>(reports_.rate_limited()));
  w.Field("delivery_dropped", static_cast<uint64_t>(reports_.delivery_dropped()));
  w.EndObject();
  // The start-only text given back after start/configure/stop (hook/text_release.h), or why not.
  w.EmbedField("text_release", TextReleaseStatusJson());
  w.EndObject();
  return w.Take();
}

}  // namespace jp::hook
