// The plugin's lifecycle: one process-wide state behind the C API in jankprobe.h. Every control call
// (start, configure, stop, export) takes one mutex; hooked paths never touch it (monitors reach the
// timeline and watchdog through the PluginContext they were started with).
//
// A remote flag is applied as a whole: ParseConfig builds a fresh Config and only an accepted one replaces
// the running one, so a rejected flag changes nothing. The per-monitor state (on / off / disabled: why) is
// then reconciled against what actually runs, not against the previous flag, so a monitor that failed to
// start is retried when a new flag arrives.
#include "hook/plugin.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "hook/clock.h"

namespace jp::hook {
namespace {

thread_local std::string t_last_error;

// Outside the Plugin, constant-initialised: the library registers its monitors from a static initialiser
// (lib/monitors.cc), and that must not construct the Plugin (its allocations, its code) in every app that
// loads us but is never started, e.g. on devices the remote flag samples out.
std::atomic<MonitorFactory> g_factories[kMonitorCount] = {};

}  // namespace

Plugin& Plugin::Get() {
  // Leaked on purpose: threads of ours or the app's may still call in while static destructors run at exit.
  static Plugin* plugin = new Plugin();
  return *plugin;
}

const std::string& Plugin::LastError() { return t_last_error; }

int Plugin::Fail(int code, std::string why) {
  t_last_error = std::move(why);
  return code;
}

void Plugin::RegisterFactory(Monitor monitor, MonitorFactory factory) {
  g_factories[static_cast<size_t>(monitor)].store(factory, std::memory_order_release);
}

MonitorFactory Plugin::RegisteredFactory(Monitor monitor) {
  return g_factories[static_cast<size_t>(monitor)].load(std::memory_order_acquire);
}

void Plugin::SetStackCapture(StackCaptureFn fn, void* ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  capture_fn_ = fn;
  capture_ctx_ = ctx;
  watchdog_.SetStackCapture(fn, ctx);
}

void Plugin::SetMainTid(uint32_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  main_tid_ = tid;
  context_.main_tid = tid;
}

void Plugin::SetListener(ReportListener fn, void* arg) { reports_.SetListener(fn, arg); }

const PluginContext* Plugin::Context() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || !running_) return nullptr;
  // The ring is made for the first monitor (ApplyLocked); a caller that asks for the context before any
  // monitor ran (a test or benchmark standing in for one) gets it with a ring too, as a monitor would.
  return timeline_ || MakeTimelineNowLocked() ? &context_ : nullptr;
}

bool Plugin::MakeTimelineNowLocked() {
  std::string warning;
  if (!EnsureTimelineLocked(config_, false, &warning)) return false;
  if (!warning.empty()) warnings_.push_back(warning);
  return true;
}

int Plugin::Start(const char* json) {
  if (!json) return Fail(JANKPROBE_ERR_INVALID_ARG, "config is NULL");
  std::lock_guard<std::mutex> lock(mu_);
  ConfigParseResult parsed = ParseConfig(json, started_ ? config_.device : DeviceFacts{});
  if (!parsed.ok()) return Fail(JANKPROBE_ERR_CONFIG, "config rejected: " + parsed.error);
  if (!started_ && main_tid_ == 0) main_tid_ = static_cast<uint32_t>(CurrentTid());
  started_ = true;
  return ApplyLocked(*parsed.config, std::move(parsed.warnings));
}

int Plugin::Configure(const char* json) {
  if (!json) return Fail(JANKPROBE_ERR_INVALID_ARG, "config is NULL");
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_) return Fail(JANKPROBE_ERR_STATE, "jankprobe_configure before jankprobe_start");
  ConfigParseResult parsed = ParseConfig(json, config_.device);
  if (!parsed.ok()) return Fail(JANKPROBE_ERR_CONFIG, "config rejected, previous config kept: " + parsed.error);
  return ApplyLocked(*parsed.config, std::move(parsed.warnings));
}

void Plugin::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  StopMonitorsLocked("off: plugin stopped");
  watchdog_.Stop();
  reports_.StopDelivery();
  running_ = false;
  started_ = false;
  run_reason_ = "stopped";
}

void Plugin::StopMonitorsLocked(const char* status) {
  for (size_t i = 0; i < kMonitorCount; ++i) {
    if (monitors_[i]) {
      monitors_[i]->Stop();
      monitors_[i].reset();
      MarkStateLocked(static_cast<Monitor>(i), status);
    }
  }
}

void Plugin::MarkStateLocked(Monitor m, const std::string& status) {
  monitor_status_[static_cast<size_t>(m)] = status;
  if (!timeline_) return;
  // Monitor switches are on the timeline too, so a trace shows when a monitor was not looking.
  Event e;
  e.ts_ns = MonotonicNs();
  e.tid = static_cast<uint32_t>(CurrentTid());
  e.kind = EventKind::kMonitorState;
  e.name = timeline_->Intern(std::string(MonitorName(m)) + ": " + status);
  timeline_->Append(e);
}

bool Plugin::EnsureTimelineLocked(const Config& config, bool rebuild, std::string* warning) {
  if (timeline_ && !rebuild) return true;
  Timeline::Options options;
  options.capacity = config.timeline.capacity;
  std::string error;
  std::unique_ptr<Timeline> fresh;
  if (!config.timeline.file.empty()) {
    fresh = Timeline::Open(config.timeline.file, options, &error);
    if (!fresh) *warning = "timeline file " + config.timeline.file + " unusable (" + error + "), using memory";
  }
  if (!fresh) fresh = Timeline::Create(options, &error);
  if (!fresh) return false;
  if (fresh->previous().found) previous_ = fresh->previous();
  timeline_ = std::move(fresh);
  context_.timeline = timeline_.get();
  return true;
}

int Plugin::ApplyLocked(const Config& next, std::vector<std::string> warnings) {
  // No ring yet: no monitor ever ran (the ring is made for the first one, below), so none can need a retune.
  const bool first = !timeline_;
  const ConfigDiff diff = first ? ConfigDiff{} : DiffConfigs(config_, next);
  std::string why;
  const bool should_run = ShouldRun(next, &why);
  ran_ = ran_ || should_run;
  config_ = next;
  warnings_ = std::move(warnings);
  run_reason_ = why;
  reports_.SetLimits(next.report.max_reports_per_minute, next.report.key_packages, next.report.max_stack_frames);

  if (!should_run) {
    StopMonitorsLocked(("off: " + why).c_str());
    watchdog_.Stop();
    running_ = false;
    for (size_t i = 0; i < kMonitorCount; ++i) monitor_status_[i] = "off: " + why;
    return JANKPROBE_OK;
  }

  const bool rebuild = !first && diff.timeline_changed;
  if (rebuild) StopMonitorsLocked("off: timeline rebuilt");  // they hold the old ring
  // The ring is made when a monitor is wanted, like the watchdog thread below: with every monitor off
  // nothing would be recorded in it, and its header page and mappings would be all that an app whose flag
  // switches every monitor off pays for it. A timeline file is opened at once all the same, so that the
  // previous run's records (a run killed with -9) are recovered at start, as before. Export and Context()
  // make the ring if they are asked for it before any monitor ran.
  if (timeline_ || AnyMonitorWanted(next) || !next.timeline.file.empty()) {
    std::string warning;
    if (!EnsureTimelineLocked(next, rebuild, &warning)) {
      running_ = false;
      return Fail(JANKPROBE_ERR_IO, "cannot allocate the timeline");
    }
    if (!warning.empty()) warnings_.push_back(warning);
  }
  context_.watchdog = &watchdog_;
  context_.reports = &reports_;
  context_.main_tid = main_tid_;
  // The watchdog thread runs only while a monitor may need it (deadlines, periodic checks, stack capture):
  // with every monitor off there is nothing to watch, and a thread (its stack, the malloc arena its first
  // allocation makes, libc's thread code) would be most of what an app whose flag switches everything off
  // keeps resident. It is started before the monitors, which may arm deadlines as they start.
  if (AnyMonitorWanted(next) && !watchdog_.running()) {
    std::string error;
    watchdog_.SetStackCapture(capture_fn_, capture_ctx_);
    if (!watchdog_.Start(&error)) {
      running_ = false;
      return Fail(JANKPROBE_ERR_MONITOR, "watchdog thread: " + error);
    }
  }
  running_ = true;

  std::string failures;
  for (size_t i = 0; i < kMonitorCount; ++i) {
    const Monitor m = static_cast<Monitor>(i);
    const bool want = MonitorActive(next, m);
    std::unique_ptr<MonitorImpl>& running = monitors_[i];
    if (running && !want) {
      running->Stop();
      running.reset();
      MarkStateLocked(m, "off");
    } else if (running && want) {
      if (diff.of(m) == MonitorChange::kRetuned) running->Retune(next);
    } else if (!running && want) {
      const MonitorFactory factory = RegisteredFactory(m);
      if (!factory) {
        monitor_status_[i] = "unavailable: not built into this library";
        continue;
      }
      std::unique_ptr<MonitorImpl> monitor = factory();
      std::string reason;
      if (monitor && monitor->Start(next, &context_, &reason)) {
        running = std::move(monitor);
        MarkStateLocked(m, "on");
      } else {
        MarkStateLocked(m, "disabled: " + reason);
        failures += std::string(failures.empty() ? "" : "; ") + MonitorName(m) + ": " + reason;
      }
    } else {
      monitor_status_[i] = "off";
    }
  }
  // Every monitor off now (switched off, or none could start): the thread goes until one is wanted again.
  if (!AnyMonitorRunningLocked()) watchdog_.Stop();
  if (!failures.empty()) return Fail(JANKPROBE_ERR_MONITOR, "monitors disabled: " + failures);
  return JANKPROBE_OK;
}

bool Plugin::AnyMonitorWanted(const Config& config) {
  for (size_t i = 0; i < kMonitorCount; ++i) {
    const Monitor m = static_cast<Monitor>(i);
    if (MonitorActive(config, m) && RegisteredFactory(m)) return true;
  }
  return false;
}

bool Plugin::AnyMonitorRunningLocked() const {
  for (const std::unique_ptr<MonitorImpl>& m : monitors_) {
    if (m) return true;
  }
  return false;
}

}  // namespace jp::hook
