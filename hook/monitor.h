// The interface every monitor (input/, idle/, barrier/, looper/) implements so that the plugin core can
// switch it on, retune it and switch it off as remote flags arrive, without knowing what it hooks.
#ifndef JANKPROBE_HOOK_MONITOR_H_
#define JANKPROBE_HOOK_MONITOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "hook/config.h"
#include "hook/report_sink.h"
#include "hook/timeline.h"
#include "hook/watchdog.h"

namespace jp::hook {

// What a running monitor may use. Valid from Start() until Stop() returns.
struct PluginContext {
  Timeline* timeline = nullptr;
  Watchdog* watchdog = nullptr;
  ReportSink* reports = nullptr;
  uint32_t main_tid = 0;
  // Publishes a report (blocked_by is filled from the timeline).
  void Submit(const Report& report) const {
    if (reports) reports->Submit(report, timeline, main_tid);
  }
};

class MonitorImpl {
 public:
  virtual ~MonitorImpl() = default;
  // Installs the monitor's hooks and periodic work. false + *why when it cannot run on this device; it
  // must then leave nothing installed (the plugin shows "disabled: <why>" and runs the other monitors).
  virtual bool Start(const Config& config, PluginContext* context, std::string* why) = 0;
  // New thresholds while running (same monitor state, see ConfigDiff::kRetuned).
  virtual void Retune(const Config& config) = 0;
  // Removes every hook, deadline and periodic check. Safe while hooked functions are being called.
  virtual void Stop() = 0;
  // Extra status members as a JSON object text ("{}" when none), e.g. which imports were hooked.
  virtual std::string StatusJson() const { return "{}"; }
};

using MonitorFactory = std::unique_ptr<MonitorImpl> (*)();

// The library registers the monitors built into it (lib/monitors.cc); tests register their own.
// A monitor with no factory shows as "unavailable" in the status. nullptr unregisters.
void RegisterMonitorFactory(Monitor monitor, MonitorFactory factory);

// The main thread's stack for reports, provided by the JNI layer (tests plug their own).
void SetStackCaptureHook(StackCaptureFn fn, void* ctx);

// The main thread's kernel tid; by default the thread that first called jankprobe_start().
void SetMainThreadTid(uint32_t tid);

// The running plugin's context (timeline, watchdog...), or nullptr when not started. For tests and JNI.
const PluginContext* CurrentPluginContext();

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_MONITOR_H_
