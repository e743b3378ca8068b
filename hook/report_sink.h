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
#include "hook/text_release.h"

namespace jp::hook {

using ReportListener = void (*)(const char* report_json, void* arg);

// Main-thread work the timeline does not hold yet, lent to reports and exports by the monitor that tracks it:
// - records on their way: finished work whose record another thread appends later (the input monitor's
//   finished ring and the looper's poll ring, which the watchdog drains into the timeline);
// - with running_too, work still running (written when it ends), with dur_ns = running time so far: exactly
//   what a report raised mid-stall must name.
// The provider either appends copies to *out (input: its records are final as they are) or appends its
// pending records to the timeline itself, i.e. drains (the looper: the drain merges fast gaps into runs, and
// a lent copy of a half-finished run could not match the record the next drain appends). Called on the
// reporting or exporting thread, before the caller snapshots the timeline (see SnapshotWithInFlight), so
// that a record appended meanwhile is in one of the two. It must not wait on the main thread or on anything
// held across a wait or a JNI call: input's provider takes no lock (the ring's lock-free Pending); the
// looper's printer source uses try_lock, its poll source takes the looper's mutex, which only short
// watchdog-side work (drain, samples, report queue, history JSON) ever holds.
using InFlightProvider = void (*)(uint64_t now_ns, bool running_too, std::vector<Event>* out, void* arg);

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

  // The timeline's records plus what the providers lend (running work only with running_too), each record
  // once: a lent record the snapshot already holds (appended between the two reads) is not added again.
  TimelineRead SnapshotWithInFlight(const Timeline& timeline, uint64_t now_ns, bool running_too) const;

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

  // What the delivery thread runs once it has delivered every report it found queued (the queue empty
  // again), outside the lock, before Flush returns: by default ReleaseStartOnlyText (hook/text_release.h),
  // which gives back the rare text a report brought in (the verdict, the stack, the rendering, the
  // listener's JNI call). Once per delivery burst, so at most as often as reports pass the rate limit.
  // nullptr runs nothing. Tests set their own; set it before the first Submit.
  using AfterBurst = void (*)();
  void SetAfterBurst(AfterBurst fn);

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
  AfterBurst after_burst_ = &ReleaseStartOnlyText;  // an initializer, not a constructor: no new out-of-line
                                                     // code in plain .text at start (lib/startup_order.ld)
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
