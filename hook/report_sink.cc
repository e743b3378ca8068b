#include "hook/report_sink.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <tuple>

#include "hook/clock.h"

namespace jp::hook {

ReportSink::~ReportSink() { StopDelivery(); }

void ReportSink::SetAfterBurst(AfterBurst fn) {
  std::lock_guard<std::mutex> lock(mu_);
  after_burst_ = fn;
}

void ReportSink::SetListener(ReportListener fn, void* arg) {
  std::lock_guard<std::mutex> lock(mu_);
  listener_ = fn;
  listener_arg_ = arg;
}

void ReportSink::SetLimits(int max_per_minute, std::vector<std::string> key_packages, int max_stack_frames) {
  std::lock_guard<std::mutex> lock(mu_);
  max_per_minute_ = max_per_minute;
  max_stack_frames_ = max_stack_frames;
  key_packages_ = std::move(key_packages);
}

void ReportSink::AddInFlightProvider(InFlightProvider fn, void* arg) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& p : in_flight_) {
    if (p.first == fn && p.second == arg) return;
  }
  in_flight_.emplace_back(fn, arg);
}

void ReportSink::RemoveInFlightProvider(InFlightProvider fn, void* arg) {
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(std::remove(in_flight_.begin(), in_flight_.end(), std::make_pair(fn, arg)), in_flight_.end());
}

TimelineRead ReportSink::SnapshotWithInFlight(const Timeline& timeline, uint64_t now_ns, bool running_too) const {
  std::vector<std::pair<InFlightProvider, void*>> providers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    providers = in_flight_;
  }
  // Providers first, the snapshot second: a pending record a provider missed because it was appended in
  // between is then in the snapshot (see InFlightProvider).
  std::vector<Event> lent;
  for (const auto& [fn, arg] : providers) fn(now_ns, running_too, &lent, arg);
  TimelineRead read = timeline.Snapshot();
  if (lent.empty()) return read;
  auto key = [](const Event& e) {
    return std::make_tuple(static_cast<uint16_t>(e.kind), e.tid, e.ts_ns, e.dur_ns);
  };
  // The set over the few lent records, not over the whole snapshot: a lent record the timeline already
  // holds (appended between the provider's read and the snapshot) is taken out, the rest appended.
  std::set<std::tuple<uint16_t, uint32_t, uint64_t, uint64_t>> missing;
  for (const Event& e : lent) missing.insert(key(e));
  for (const Event& e : read.events) missing.erase(key(e));
  for (const Event& e : lent) {
    if (missing.count(key(e))) read.events.push_back(e);
  }
  return read;
}

bool ReportSink::AllowLocked(const std::string& type, uint64_t now_ns) {
  std::deque<uint64_t>& times = recent_[type];
  while (!times.empty() && now_ns - times.front() >= 60 * kNsPerSec) times.pop_front();
  if (max_per_minute_ > 0 && times.size() >= static_cast<size_t>(max_per_minute_)) return false;
  times.push_back(now_ns);
  return true;
}

bool ReportSink::Submit(const Report& report, const Timeline* timeline, uint32_t main_tid) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!AllowLocked(report.type, MonotonicNs())) {
      ++rate_limited_;
      return false;
    }
  }
  // The snapshot and rendering run outside the lock: they are the slow part.
  std::vector<BlockedBy> blocked;
  if (timeline) {
    const TimelineRead read = SnapshotWithInFlight(*timeline, MonotonicNs(), /*running_too=*/true);
    blocked = FindBlockedBy(read.events, main_tid, report.ts_ns, report.dur_ns, OwnRecordKinds(report.monitor),
                            kMaxBlockedBy);
  }
  static const StringTable kEmptyStrings;
  std::vector<std::string> key_packages;
  uint64_t seq;
  size_t max_frames;
  {
    std::lock_guard<std::mutex> lock(mu_);
    key_packages = key_packages_;
    seq = ++seq_;
    max_frames = max_stack_frames_ > 0 ? static_cast<size_t>(max_stack_frames_) : report.stack.size();
  }
  const Report* to_render = &report;
  Report trimmed;
  if (report.stack.size() > max_frames) {  // innermost frames first: those are the ones to keep
    trimmed = report;
    trimmed.stack.resize(max_frames);
    trimmed.fields.push_back(ReportField::Int("stack_frames_dropped", static_cast<int64_t>(report.stack.size() - max_frames)));
    to_render = &trimmed;
  }
  std::string json = RenderReportJson(*to_render, seq, blocked, timeline ? timeline->strings() : kEmptyStrings,
                                      key_packages);
  std::lock_guard<std::mutex> lock(mu_);
  kept_.push_back(json);
  if (kept_.size() > kMaxKept) kept_.pop_front();
  if (listener_) {
    if (queue_.size() >= kMaxQueued) {
      ++delivery_dropped_;
    } else {
      queue_.push_back(std::move(json));
      if (!thread_.joinable()) {
        stopping_ = false;
        thread_ = std::thread(&ReportSink::DeliveryLoop, this);
      }
      cv_.notify_one();
    }
  }
  return true;
}

// The delivery thread runs on after its release (hook/text_release.h): what it executes from the release
// to its next sleep must sit in the steady text with the release and its callers, or the return from the
// madvise faults a window of the range straight back. So:
// - this loop's section name puts it there in lib/startup_order.ld as it stands (the release's own
//   pattern, `.text.<ReleaseStartOnlyText>.*`), whatever the order generator placed under its own name;
// - it locks, waits and wakes through pthread on the native handles of mu_ and the condition variables
//   (libc, through .plt, in the steady window), not through std::unique_lock's and
//   std::condition_variable's out-of-line members (lock, wait, notify_all), which only this thread calls
//   after start, so the order lays them out with the rare text (measured: perf page-faults showed
//   unique_lock::lock faulting its window back after the release);
// - the report's string is gone before the release (its destructor is not on the way back).
#define JP_WITH_THE_RELEASE __attribute__((section(".text._ZN2jp4hook20ReleaseStartOnlyTextEv.report_delivery")))
JP_WITH_THE_RELEASE void ReportSink::DeliveryLoop() {
  pthread_mutex_t* const mu = mu_.native_handle();
  pthread_mutex_lock(mu);
  for (;;) {
    while (!stopping_ && queue_.empty()) pthread_cond_wait(cv_.native_handle(), mu);
    if (queue_.empty()) break;  // stopping, every queued report delivered
    {
      std::string json = std::move(queue_.front());
      queue_.pop_front();
      ReportListener fn = listener_;
      void* arg = listener_arg_;
      delivering_ = true;
      pthread_mutex_unlock(mu);
      if (fn) fn(json.c_str(), arg);  // app code: never under our lock
    }
    pthread_mutex_lock(mu);
    if (!queue_.empty()) continue;  // the same burst: one release at its end
    // The burst is delivered: the rare text it ran (here and on the watchdog: verdict, stack, rendering)
    // is given back now rather than at the app's next status/export/stop call, which may never come.
    // Outside the lock (it reads pagemap and madvises, ~4 us), still counted as delivering so that Flush
    // returns after it. No wait for a lag to end: what else runs rare code meanwhile (the watchdog sampling
    // a stack while a lag goes on, a report being rendered) only faults its pages back in from the page
    // cache, a minor fault, never a wrong result (the release drops clean file pages only), and the next
    // burst gives them back again.
    if (AfterBurst after = after_burst_) {
      pthread_mutex_unlock(mu);
      after();
      pthread_mutex_lock(mu);
    }
    delivering_ = false;
    if (queue_.empty()) pthread_cond_broadcast(drained_cv_.native_handle());
  }
  pthread_cond_broadcast(drained_cv_.native_handle());
  pthread_mutex_unlock(mu);
}

bool ReportSink::Flush(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return drained_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                              [this] { return queue_.empty() && !delivering_; });
}

void ReportSink::StopDelivery() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
    t = std::move(thread_);
  }
  if (!t.joinable()) return;
  if (t.get_id() == std::this_thread::get_id()) {
    t.detach();  // the listener itself stopped the plugin: the loop ends after it returns
  } else {
    t.join();
  }
}

std::vector<std::string> ReportSink::Kept() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::vector<std::string>(kept_.begin(), kept_.end());
}

uint64_t ReportSink::submitted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seq_;
}
uint64_t ReportSink::rate_limited() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rate_limited_;
}
uint64_t ReportSink::delivery_dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return delivery_dropped_;
}

}  // namespace jp::hook
