// The process-wide plugin behind jankprobe.h: config, timeline, watchdog, report sink, monitors.
#ifndef JANKPROBE_HOOK_PLUGIN_H_
#define JANKPROBE_HOOK_PLUGIN_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hook/config.h"
#include "hook/monitor.h"
#include "hook/report_sink.h"
#include "hook/timeline.h"
#include "hook/watchdog.h"
#include "jankprobe/jankprobe.h"

namespace jp::hook {

class Plugin {
 public:
  static Plugin& Get();
  static const std::string& LastError();  // this thread's

  int Start(const char* json);
  int Configure(const char* json);
  void Stop();
  int Export(const char* path, int format);
  std::string StatusJson();

  void SetListener(ReportListener fn, void* arg);
  // The factory registered for a monitor (RegisterMonitorFactory), or nullptr.
  static MonitorFactory RegisteredFactory(Monitor monitor);
  static void RegisterFactory(Monitor monitor, MonitorFactory factory);
  void SetStackCapture(StackCaptureFn fn, void* ctx);
  void SetMainTid(uint32_t tid);
  const PluginContext* Context();
  ReportSink& reports() { return reports_; }

 private:
  Plugin() = default;
  static int Fail(int code, std::string why);
  int ApplyLocked(const Config& next, std::vector<std::string> warnings);
  bool EnsureTimelineLocked(const Config& config, bool rebuild, std::string* warning);
  // The ring for the running config now, before any monitor asked for it (Export, Context).
  bool MakeTimelineNowLocked();
  void StopMonitorsLocked(const char* status);
  // A monitor the config switches on and this library has (the watchdog is started for it).
  static bool AnyMonitorWanted(const Config& config);
  bool AnyMonitorRunningLocked() const;
  void MarkStateLocked(Monitor m, const std::string& status);

  std::mutex mu_;
  bool started_ = false;
  bool running_ = false;  // started and this device runs the monitors
  bool ran_ = false;      // a flag this device runs was applied once (the ring may still wait for a monitor)
  std::string run_reason_ = "not started";
  Config config_;
  std::vector<std::string> warnings_;
  std::unique_ptr<Timeline> timeline_;
  RecoveredTimeline previous_;
  Watchdog watchdog_;
  ReportSink reports_;
  PluginContext context_;
  std::unique_ptr<MonitorImpl> monitors_[kMonitorCount];
  std::string monitor_status_[kMonitorCount] = {"off", "off", "off", "off"};
  StackCaptureFn capture_fn_ = nullptr;
  void* capture_ctx_ = nullptr;
  uint32_t main_tid_ = 0;
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_PLUGIN_H_
