// Config equality and the diff the lifecycle applies at runtime: which monitors start, stop or change
// thresholds when a new remote flag replaces the running one.
#include <string>

#include "hook/config.h"

namespace jp {
namespace {

// Appends "name old -> new" to *details when the values differ.
template <typename T>
void Compare(const char* name, const T& before, const T& after, std::string* details) {
  if (before == after) return;
  if (!details->empty()) *details += ", ";
  *details += std::string(name) + " " + std::to_string(before) + " -> " + std::to_string(after);
}

void CompareText(const char* name, const std::string& before, const std::string& after, std::string* details) {
  if (before == after) return;
  if (!details->empty()) *details += ", ";
  *details += std::string(name) + " " + before + " -> " + after;
}

// Thresholds only: "enabled" is what decides started/stopped, not a retune.
std::string ThresholdChanges(const Config& a, const Config& b, Monitor m) {
  std::string d;
  switch (m) {
    case Monitor::kInput:
      Compare("lag_ms", a.input.lag_ms, b.input.lag_ms, &d);
      Compare("anr_ms", a.input.anr_ms, b.input.anr_ms, &d);
      Compare("android_api", a.input.android_api, b.input.android_api, &d);
      break;
    case Monitor::kIdle:
      Compare("lag_ms", a.idle.lag_ms, b.idle.lag_ms, &d);
      Compare("record_min_us", a.idle.record_min_us, b.idle.record_min_us, &d);
      break;
    case Monitor::kBarrier:
      Compare("check_ms", a.barrier.check_ms, b.barrier.check_ms, &d);
      Compare("leak_ms", a.barrier.leak_ms, b.barrier.leak_ms, &d);
      Compare("auto_remove", static_cast<int>(a.barrier.auto_remove), static_cast<int>(b.barrier.auto_remove), &d);
      break;
    case Monitor::kLooper:
      Compare("lag_ms", a.looper.lag_ms, b.looper.lag_ms, &d);
      Compare("anr_ms", a.looper.anr_ms, b.looper.anr_ms, &d);
      Compare("history_ms", a.looper.history_ms, b.looper.history_ms, &d);
      Compare("sample_after_ms", a.looper.sample_after_ms, b.looper.sample_after_ms, &d);
      Compare("sample_interval_ms", a.looper.sample_interval_ms, b.looper.sample_interval_ms, &d);
      Compare("record_min_us", a.looper.record_min_us, b.looper.record_min_us, &d);
      // A source switch is a retune too: the running monitor swaps its timing source in place.
      CompareText("source", LooperSourceName(a.looper.source), LooperSourceName(b.looper.source), &d);
      CompareText("poll_library", a.looper.poll_library, b.looper.poll_library, &d);
      break;
  }
  return d;
}

}  // namespace

bool InputConfig::operator==(const InputConfig& o) const {
  return enabled == o.enabled && lag_ms == o.lag_ms && anr_ms == o.anr_ms && android_api == o.android_api;
}
bool IdleConfig::operator==(const IdleConfig& o) const {
  return enabled == o.enabled && lag_ms == o.lag_ms && record_min_us == o.record_min_us;
}
bool BarrierConfig::operator==(const BarrierConfig& o) const {
  return enabled == o.enabled && check_ms == o.check_ms && leak_ms == o.leak_ms && auto_remove == o.auto_remove;
}
const char* LooperSourceName(LooperSource source) {
  switch (source) {
    case LooperSource::kAuto: return "auto";
    case LooperSource::kPoll: return "poll";
    case LooperSource::kPrinter: return "printer";
  }
  return "?";
}

bool LooperConfig::operator==(const LooperConfig& o) const {
  return enabled == o.enabled && source == o.source && poll_library == o.poll_library && lag_ms == o.lag_ms &&
         anr_ms == o.anr_ms && history_ms == o.history_ms && sample_after_ms == o.sample_after_ms &&
         sample_interval_ms == o.sample_interval_ms && record_min_us == o.record_min_us;
}
bool TimelineConfig::operator==(const TimelineConfig& o) const { return capacity == o.capacity && file == o.file; }
bool ReportConfig::operator==(const ReportConfig& o) const {
  return key_packages == o.key_packages && max_reports_per_minute == o.max_reports_per_minute &&
         max_stack_frames == o.max_stack_frames;
}
bool TargetingConfig::operator==(const TargetingConfig& o) const {
  return app_versions == o.app_versions && min_api == o.min_api && max_api == o.max_api && networks == o.networks &&
         device_ids == o.device_ids;
}
bool DeviceFacts::operator==(const DeviceFacts& o) const {
  return device_id == o.device_id && app_version == o.app_version && api_level == o.api_level && network == o.network;
}
bool Config::operator==(const Config& o) const {
  return enabled == o.enabled && sample_rate == o.sample_rate && targeting == o.targeting && input == o.input &&
         idle == o.idle && barrier == o.barrier && looper == o.looper && timeline == o.timeline &&
         report == o.report && device == o.device;
}

const char* MonitorName(Monitor monitor) {
  switch (monitor) {
    case Monitor::kInput: return "input";
    case Monitor::kIdle: return "idle";
    case Monitor::kBarrier: return "barrier";
    case Monitor::kLooper: return "looper";
  }
  return "?";
}

const char* MonitorChangeName(MonitorChange change) {
  switch (change) {
    case MonitorChange::kUnchanged: return "unchanged";
    case MonitorChange::kStarted: return "started";
    case MonitorChange::kStopped: return "stopped";
    case MonitorChange::kRetuned: return "retuned";
  }
  return "?";
}

bool MonitorActive(const Config& config, Monitor monitor) {
  if (!ShouldRun(config, nullptr)) return false;
  switch (monitor) {
    case Monitor::kInput: return config.input.enabled;
    case Monitor::kIdle: return config.idle.enabled;
    case Monitor::kBarrier: return config.barrier.enabled;
    case Monitor::kLooper: return config.looper.enabled;
  }
  return false;
}

bool ConfigDiff::any() const {
  for (MonitorChange c : monitors) {
    if (c != MonitorChange::kUnchanged) return true;
  }
  return timeline_changed || report_changed;
}

std::string ConfigDiff::Describe() const {
  std::string out;
  for (size_t i = 0; i < kMonitorCount; ++i) {
    if (monitors[i] == MonitorChange::kUnchanged) continue;
    if (!out.empty()) out += "; ";
    out += std::string(MonitorName(static_cast<Monitor>(i))) + ": " + MonitorChangeName(monitors[i]);
    if (!details[i].empty()) out += " (" + details[i] + ")";
  }
  if (timeline_changed) out += std::string(out.empty() ? "" : "; ") + "timeline: changed";
  if (report_changed) out += std::string(out.empty() ? "" : "; ") + "report: changed";
  return out.empty() ? "no change" : out;
}

ConfigDiff DiffConfigs(const Config& before, const Config& after) {
  ConfigDiff diff;
  for (size_t i = 0; i < kMonitorCount; ++i) {
    Monitor m = static_cast<Monitor>(i);
    bool was = MonitorActive(before, m);
    bool is = MonitorActive(after, m);
    if (!was && is) {
      diff.monitors[i] = MonitorChange::kStarted;
    } else if (was && !is) {
      diff.monitors[i] = MonitorChange::kStopped;
    } else if (was && is) {
      diff.details[i] = ThresholdChanges(before, after, m);
      if (!diff.details[i].empty()) diff.monitors[i] = MonitorChange::kRetuned;
    }
  }
  diff.timeline_changed = !(before.timeline == after.timeline);
  diff.report_changed = !(before.report == after.report);
  return diff;
}

}  // namespace jp
