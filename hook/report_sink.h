// Where verdicts go: rate-limited per report type, kept (bounded) for export, and handed to the app's
// listener on a delivery thread of our own, so that neither a hooked path nor the watchdog ever waits on
// app code, and the listener never runs on the main thread.
#ifndef JANKPROBE_HOOK_REPORT_SINK_H_
#define JANKPROBE_HOOK_REPORT_SINK_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hook/report.h"

namespace jp::hook {

using ReportListener = void (*)(const char* report_json, void* arg);

// Something still running on the main thread has no timeline record yet (it is written when it ends), but
// it is exactly what a report raised mid-stall must name. A monitor that tracks such work (the looper's
// current message) lends it to reports: fills *out with start, kind, name and args (dur_ns = running
// time so far) and returns true, or returns false when nothing runs. Called on the reporting thread; it
// must not block (use try_lock).
using InFlightProvider = bool (*)(uint64_t now_ns, Event* out, void* arg);

class ReportSink {
 public:
  static constexpr size_t kMaxKept = 512;       // reports kept for export; oldest dropped
  static constexpr size_t kMaxQueued = 256;     // waiting for the listener; beyond that counted as dropped
  static constexpr size_t kMaxBlockedBy = 8;

  ReportSink() = default;
  ~ReportSink();
  ReportSink(const ReportSink&) = delete;
  ReportSink& operator=(const ReportSink&) = delete;

  void SetListener(ReportListener fn, void* arg);
  // max_per_minute 0 = unlimited; max_stack_frames 0 = keep all.
  void SetLimits(int max_per_minute, std::vector<std::string> key_packages, int max_stack_frames = 0);
  // At most one provider per `arg`; removing waits for nothing (providers never block and are static code).
  void AddInFlightProvider(InFlightProvider fn, void* arg);
  void RemoveInFlightProvider(InFlightProvider fn, void* arg);

  // Renders and publishes a report. `timeline` (may be null) supplies blocked_by; `main_tid` names the main
  // thread. Returns false when the report was rate-limited (it is then only counted).
  bool Submit(const Report& report, const Timeline* timeline, uint32_t main_tid);

  // JSON lines of every kept report, oldest first.
  std::vector<std::string> Kept() const;
  uint64_t submitted() const;
  uint64_t rate_limited() const;
  uint64_t delivery_dropped() const;

  // Blocks until every queued report reached the listener (tests and export use it), at most timeout_ms.
  bool Flush(int timeout_ms);
  // Stops the delivery thread (queued reports are delivered first). Submit restarts it when needed.
  void StopDelivery();

 private:
  void DeliveryLoop();
  bool AllowLocked(const std::string& type, uint64_t now_ns);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable drained_cv_;
  std::thread thread_;
  bool stopping_ = false;
  bool delivering_ = false;
  ReportListener listener_ = nullptr;
  void* listener_arg_ = nullptr;
  int max_per_minute_ = 10;
  int max_stack_frames_ = 0;
  std::vector<std::string> key_packages_;
  std::vector<std::pair<InFlightProvider, void*>> in_flight_;
  std::map<std::string, std::deque<uint64_t>> recent_;  // per type: times of reports in the last minute
  std::deque<std::string> kept_;
  std::deque<std::string> queue_;
  uint64_t seq_ = 0;
  uint64_t rate_limited_ = 0;
  uint64_t delivery_dropped_ = 0;
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_REPORT_SINK_H_
