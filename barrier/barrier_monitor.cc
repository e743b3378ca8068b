#include "barrier/barrier_monitor.h"

#include <sched.h>

#include <atomic>
#include <mutex>
#include <string>

#include "barrier/main_queue.h"
#include "hook/clock.h"
#include "hook/jni/java_stack_release.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/json_out.h"
#include "hook/report.h"

namespace jp::barrier {
namespace {

constexpr uint64_t kStepNs = 10 * hook::kNsPerMs;       // how often a probe in flight is looked at
constexpr uint64_t kMinProbeBudgetNs = 200 * hook::kNsPerMs;
constexpr uint64_t kDeadlineTag = 0xBA77ull << 48;

class BarrierMonitor : public hook::MonitorImpl {
 public:
  ~BarrierMonitor() override { Stop(); }

  bool Start(const Config& config, hook::PluginContext* context, std::string* why) override {
    context_ = context;
    Retune(config);
    if (!Install(why)) {
      hook::Report r;
      r.type = "monitor_disabled";
      r.monitor = "barrier";
      r.fields.push_back(hook::ReportField::String("reason", "disabled: " + *why));
      context->Submit(r);
      return false;
    }
    return true;
  }

  void Retune(const Config& config) override {
    leak_ms_.store(config.barrier.leak_ms, std::memory_order_relaxed);
    const uint64_t check_ns = static_cast<uint64_t>(config.barrier.check_ms) * hook::kNsPerMs;
    const uint64_t old_check_ns = check_ns_.exchange(check_ns, std::memory_order_relaxed);
    auto_remove_.store(config.barrier.auto_remove, std::memory_order_relaxed);
    if (periodic_ >= 0 && check_ns != old_check_ns) {
      // RemovePeriodic returns once the check is not running, so the state machine is never shared.
      context_->watchdog->RemovePeriodic(periodic_);
      periodic_ = context_->watchdog->AddPeriodic(check_ns, OnCheck, this);
      if (periodic_ < 0) SetError("the watchdog's periodic table is full: checks stopped");
    }
  }

  void Stop() override {
    if (!open_) return;
    stopping_.store(true, std::memory_order_release);
    if (periodic_ >= 0) context_->watchdog->RemovePeriodic(periodic_);
    periodic_ = -1;
    // A probe step may be firing right now: wait until it has let go of this object.
    while (armed_.load(std::memory_order_acquire)) {
      if (context_->watchdog->Disarm(deadline_id_.load(std::memory_order_acquire))) {
        armed_.store(false, std::memory_order_release);
        break;
      }
      sched_yield();
    }
    std::string why;
    if (JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", &why)) queue_.Close(env);
    open_ = false;
  }

  std::string StatusJson() const override {
    std::lock_guard<std::mutex> lock(mu_);
    hook::JsonOut w;
    w.StartObject();
    w.Field("check", unsupported_ ? "unsupported" : "ok");
    w.Field("checks", checks_);
    w.Field("suspects", suspects_);
    w.Field("confirmed", confirmed_);
    w.Field("removed", removed_);
    if (!reason_.empty()) w.Field("reason", reason_);
    // Stack given back after Java ran on our attached threads, the watchdog and the report delivery thread
    // (hook/jni/java_stack_release.h): here because the barrier check was the watchdog's one steady Java
    // caller; a count that grows with `checks` while no report is delivered means a check calls Java again.
    const jni::StackReleaseCounts stack = jni::StackReleaseCountsNow();
    w.Field("stack_releases", stack.releases);
    w.Field("stack_released_kb", stack.released_bytes / 1024);
    if (stack.failures) w.Field("stack_release_error", stack.last_error);
    w.EndObject();
    return w.Take();
  }

 private:
  enum class State { kWatching, kProbing, kVerifying };

  bool Install(std::string* why) {
    const jni::BarrierRefs& refs = jni::Barrier();
    if (!jni::Vm()) return Fail(why, "no Java VM: libjankprobe.so was not loaded with System.loadLibrary");
    if (!refs.ok) return Fail(why, refs.why);
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", why);
    if (!env) return false;
    if (!queue_.Open(env, why)) return false;
    open_ = true;
    // The kind is settled here, once (a queue's implementation is chosen when it is made): the checks then
    // read the list's fields under its lock, without a Java call.
    std::string evidence;
    switch (queue_.Classify(env, &evidence)) {
      case QueueKind::kList: break;
      case QueueKind::kNotList:
        MarkUnsupported(evidence);
        return true;  // running, but its status and report say the check cannot work here
      case QueueKind::kUnknown:
        queue_.Close(env);
        open_ = false;
        return Fail(why, evidence);
    }
    periodic_ = context_->watchdog->AddPeriodic(check_ns_.load(), OnCheck, this);
    if (periodic_ < 0) {
      queue_.Close(env);
      open_ = false;
      return Fail(why, "the watchdog's periodic table is full");
    }
    return true;
  }

  static bool Fail(std::string* why, const std::string& reason) {
    *why = reason;
    return false;
  }

  JNIEnv* Env() {
    std::string why;
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-watchdog", &why);
    if (!env) SetError(why);
    return env;
  }

  void SetError(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    reason_ = why;
  }

  void MarkUnsupported(const std::string& evidence) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (unsupported_.exchange(true)) return;
      reason_ = evidence;
    }
    hook::Report r;
    r.type = "barrier_unsupported";
    r.monitor = "barrier";
    r.ts_ns = hook::MonotonicNs();
    r.fields.push_back(hook::ReportField::String("check", "unsupported"));
    r.fields.push_back(hook::ReportField::String("reason", evidence));
    context_->Submit(r);
  }

  static void OnCheck(uint64_t, void* arg) { static_cast<BarrierMonitor*>(arg)->Check(); }

  void Check() {
    if (state_ != State::kWatching || unsupported_ || stopping_.load(std::memory_order_acquire)) return;
    JNIEnv* env = Env();
    if (!env) return;
    jni::ScopedLocalFrame frame(env, 16);
    std::string why;
    const QueueHead head = queue_.ReadHead(env, &why);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++checks_;
    }
    if (!head.read) return SetError(why);
    if (!head.is_barrier) return;
    const int64_t age_ms = head.now_ms - head.when_ms;
    if (age_ms <= leak_ms_.load(std::memory_order_relaxed)) return;
    if (head.token == reported_token_ && head.when_ms == reported_when_) return;  // this one is reported

    // A suspect: one synchronous and one asynchronous probe behind it.
    if (!queue_.PostProbe(env, MainQueue::kSyncProbe, false, 0, &why) ||
        !queue_.PostProbe(env, MainQueue::kAsyncProbe, true, 0, &why)) {
      queue_.RemoveProbe(env, MainQueue::kSyncProbe);
      return SetError(why);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++suspects_;
    }
    suspect_token_ = head.token;
    suspect_when_ms_ = head.when_ms;
    step_started_ns_ = hook::MonotonicNs();
    state_ = State::kProbing;
    ArmStep();
  }

  void ArmStep() {
    const uint64_t id = kDeadlineTag | (++deadline_seq_ & 0xFFFFFFFFFFFFull);
    deadline_id_.store(id, std::memory_order_release);
    armed_.store(true, std::memory_order_release);
    if (!context_->watchdog->Arm(id, hook::MonotonicNs() + kStepNs, OnStep, this)) {
      armed_.store(false, std::memory_order_release);
      state_ = State::kWatching;
      SetError("the watchdog's deadline table is full");
    }
  }

  static void OnStep(const hook::DeadlineFired&, void* arg) {
    auto* self = static_cast<BarrierMonitor*>(arg);
    if (!self->Step()) self->armed_.store(false, std::memory_order_release);  // last touch of *self
  }

  uint64_t ProbeBudgetNs() const {
    const uint64_t check = check_ns_.load(std::memory_order_relaxed);
    return check > kMinProbeBudgetNs ? check : kMinProbeBudgetNs;
  }

  // One look at the probes in flight. Returns true when it armed the next step.
  bool Step() {
    if (stopping_.load(std::memory_order_acquire)) return false;
    JNIEnv* env = Env();
    if (!env) {
      state_ = State::kWatching;
      return false;
    }
    jni::ScopedLocalFrame frame(env, 16);
    std::string why;
    const uint64_t now = hook::MonotonicNs();
    const bool out_of_time = now - step_started_ns_ > ProbeBudgetNs();
    if (state_ == State::kProbing) {
      const int async_queued = queue_.HasProbe(env, MainQueue::kAsyncProbe, &why);
      const int sync_queued = queue_.HasProbe(env, MainQueue::kSyncProbe, &why);
      if (async_queued < 0 || sync_queued < 0) {
        Abandon(env, why);
        return false;
      }
      if (async_queued == 0 && sync_queued == 1) return Confirmed(env, now);
      if (async_queued == 0 && sync_queued == 0) {  // released meanwhile: it was only slow
        state_ = State::kWatching;
        return false;
      }
      if (!out_of_time) {
        ArmStep();
        return true;
      }
      // Not even the asynchronous probe ran: the main thread is busy with something else.
      Report(now, false, "inconclusive: the asynchronous probe did not run within " +
                             std::to_string(ProbeBudgetNs() / hook::kNsPerMs) + " ms (main thread busy)");
      Abandon(env, std::string());
      return false;
    }
    if (state_ == State::kVerifying) {
      const int sync_queued = queue_.HasProbe(env, MainQueue::kSyncProbe, &why);
      if (sync_queued == 1 && !out_of_time) {
        ArmStep();
        return true;
      }
      Removed(now, true, sync_queued == 0, sync_queued < 0 ? why : std::string());
      queue_.RemoveProbe(env, MainQueue::kSyncProbe);
      state_ = State::kWatching;
    }
    return false;
  }

  bool Confirmed(JNIEnv* env, uint64_t now) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++confirmed_;
    }
    Report(now, true, "confirmed: the asynchronous probe ran, the synchronous probe is stuck behind the barrier");
    if (!auto_remove_.load(std::memory_order_relaxed)) {
      queue_.RemoveProbe(env, MainQueue::kSyncProbe);  // do not pile probes up behind a barrier left in place
      state_ = State::kWatching;
      return false;
    }
    std::string why;
    if (!queue_.RemoveSyncBarrier(env, suspect_token_, &why)) {
      Removed(now, false, false, why);
      queue_.RemoveProbe(env, MainQueue::kSyncProbe);
      state_ = State::kWatching;
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++removed_;
    }
    state_ = State::kVerifying;
    step_started_ns_ = hook::MonotonicNs();
    ArmStep();
    return true;
  }

  void Abandon(JNIEnv* env, const std::string& why) {
    queue_.RemoveProbe(env, MainQueue::kSyncProbe);
    queue_.RemoveProbe(env, MainQueue::kAsyncProbe);
    reported_token_ = suspect_token_;
    reported_when_ = suspect_when_ms_;
    state_ = State::kWatching;
    if (!why.empty()) SetError(why);
  }

  uint64_t BarrierStartNs() const { return static_cast<uint64_t>(suspect_when_ms_) * hook::kNsPerMs; }

  void Report(uint64_t now, bool confirmed, const std::string& probe) {
    reported_token_ = suspect_token_;
    reported_when_ = suspect_when_ms_;
    const uint64_t start = BarrierStartNs();
    const uint64_t age_ns = now > start ? now - start : 0;
    if (context_->timeline) {
      hook::Event e;
      e.ts_ns = start;
      e.dur_ns = age_ns;
      e.tid = context_->main_tid;
      e.kind = hook::EventKind::kBarrier;
      e.name = context_->timeline->Intern(confirmed ? "barrier leak" : "barrier suspect");
      e.args[0] = hook::EventArg::Int(context_->timeline->Intern("token"), suspect_token_);
      context_->timeline->Append(e);
    }
    hook::Report r;
    r.type = "barrier_leak";
    r.monitor = "barrier";
    r.ts_ns = start;
    r.dur_ns = age_ns;
    r.fields.push_back(hook::ReportField::Int("token", suspect_token_));
    r.fields.push_back(hook::ReportField::Int("age_ms", static_cast<int64_t>(age_ns / hook::kNsPerMs)));
    r.fields.push_back(hook::ReportField::Bool("confirmed", confirmed));
    r.fields.push_back(hook::ReportField::String("probe", probe));
    r.fields.push_back(hook::ReportField::Int("leak_ms", leak_ms_.load(std::memory_order_relaxed)));
    r.fields.push_back(hook::ReportField::Bool("auto_remove", auto_remove_.load(std::memory_order_relaxed)));
    context_->Submit(r);
  }

  void Removed(uint64_t now, bool removed, bool sync_ran, const std::string& error) {
    hook::Report r;
    r.type = "barrier_removed";
    r.monitor = "barrier";
    r.ts_ns = BarrierStartNs();
    r.dur_ns = now > r.ts_ns ? now - r.ts_ns : 0;
    r.fields.push_back(hook::ReportField::Int("token", suspect_token_));
    r.fields.push_back(hook::ReportField::Bool("removed", removed));
    r.fields.push_back(hook::ReportField::Bool("sync_probe_ran", sync_ran));
    if (removed) {
      r.fields.push_back(hook::ReportField::Int(
          "resumed_after_ms", static_cast<int64_t>((hook::MonotonicNs() - step_started_ns_) / hook::kNsPerMs)));
    }
    if (!error.empty()) r.fields.push_back(hook::ReportField::String("error", error));
    context_->Submit(r);
  }

  hook::PluginContext* context_ = nullptr;
  MainQueue queue_;
  bool open_ = false;
  int periodic_ = -1;
  std::atomic<int32_t> leak_ms_{3000};
  std::atomic<uint64_t> check_ns_{1000 * hook::kNsPerMs};
  std::atomic<bool> auto_remove_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> armed_{false};
  std::atomic<uint64_t> deadline_id_{0};

  // Watchdog thread only (the periodic check and the probe steps never run at the same time).
  State state_ = State::kWatching;
  uint64_t deadline_seq_ = 0;
  int32_t suspect_token_ = 0;
  int64_t suspect_when_ms_ = 0;
  int32_t reported_token_ = -1;
  int64_t reported_when_ = -1;
  uint64_t step_started_ns_ = 0;

  std::atomic<bool> unsupported_{false};
  mutable std::mutex mu_;  // status, read by StatusJson on a control thread
  std::string reason_;
  uint64_t checks_ = 0;
  uint64_t suspects_ = 0;
  uint64_t confirmed_ = 0;
  uint64_t removed_ = 0;
};

}  // namespace

std::unique_ptr<hook::MonitorImpl> MakeBarrierMonitor() { return std::make_unique<BarrierMonitor>(); }

}  // namespace jp::barrier
