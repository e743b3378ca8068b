#include "idle/idle_monitor.h"

#include <string>

#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "idle/idle_timing.h"

namespace jp::idle {
namespace {

// MonitorEnter/MonitorExit on the queue: the same lock MessageQueue's synchronized methods take, so the
// swap never races addIdleHandler or next() copying the list.
class QueueLock {
 public:
  QueueLock(JNIEnv* env, jobject queue) : env_(env), queue_(queue), held_(env->MonitorEnter(queue) == JNI_OK) {}
  ~QueueLock() {
    if (held_) env_->MonitorExit(queue_);
  }
  bool held() const { return held_; }

 private:
  JNIEnv* env_;
  jobject queue_;
  bool held_;
};

class IdleMonitor : public hook::MonitorImpl {
 public:
  ~IdleMonitor() override { Stop(); }

  bool Start(const Config& config, hook::PluginContext* context, std::string* why) override {
    if (!Install(config, context, why)) {
      // The status says "disabled: <why>"; the reports get it too, so a fleet shows where it cannot run.
      hook::Report r;
      r.type = "monitor_disabled";
      r.monitor = "idle";
      r.fields.push_back(hook::ReportField::String("reason", "disabled: " + *why));
      context->Submit(r);
      return false;
    }
    return true;
  }

  void Retune(const Config& config) override { RetuneTiming(config.idle.lag_ms); }

  void Stop() override {
    if (!queue_) return;
    std::string why;
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", &why);
    if (env) {
      jni::ScopedLocalFrame frame(env, 8);
      const jni::IdleRefs& refs = jni::Idle();
      RestorePlainList(env, refs, &why);
      env->DeleteGlobalRef(queue_);
    }
    queue_ = nullptr;
    DeactivateTiming();
  }

  // Under the queue's lock, like the swap in; *why_out gets what went wrong (the list then stays as is).
  void RestorePlainList(JNIEnv* env, const jni::IdleRefs& refs, std::string* why_out) {
    std::string why;
    QueueLock lock(env, queue_);
    jobject current = env->GetObjectField(queue_, refs.idle_handlers);
    // Put a plain list back only if ours is still there: someone else may have swapped it since.
    if (!jni::TakeException(env, "read mIdleHandlers", &why) && current &&
        env->IsInstanceOf(current, refs.timing_list)) {
      jobject plain = env->CallObjectMethod(current, refs.timing_list_unwrapped);
      if (!jni::TakeException(env, "TimingIdleHandlerList.unwrapped", &why) && plain) {
        env->SetObjectField(queue_, refs.idle_handlers, plain);
        jni::TakeException(env, "write mIdleHandlers", &why);
      }
    }
    if (!why.empty()) *why_out = why;
  }

  std::string StatusJson() const override {
    const IdleCounters c = TimingCounters();
    return "{\"handlers_taken_over\":" + std::to_string(taken_over_) + ",\"calls\":" + std::to_string(c.calls) +
           ",\"lags\":" + std::to_string(c.lags) +
           ",\"deadline_arms\":" + std::to_string(c.deadline_arms) + ",\"arm_calls\":" + std::to_string(c.arm_calls) +
           ",\"fence\":\"" + (c.fence_expedited ? "membarrier" : "full") + "\"}";
  }

 private:
  bool Install(const Config& config, hook::PluginContext* context, std::string* why) {
    const jni::IdleRefs& refs = jni::Idle();
    if (!jni::Vm()) return Fail(why, "no Java VM: libjankprobe.so was not loaded with System.loadLibrary");
    if (!refs.ok) return Fail(why, refs.why);
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", why);
    if (!env) return false;
    jni::ScopedLocalFrame frame(env, 16);
    if (!frame.ok()) return Fail(why, "PushLocalFrame failed");
    jobject queue = jni::MainQueue(env, why);
    if (!queue) return false;

    // Timing is live before the list is: a handler running right after the swap is already recorded.
    ActivateTiming(context, config.idle.lag_ms);
    {
      QueueLock lock(env, queue);
      if (!lock.held()) {
        jni::TakeException(env, "MonitorEnter", why);
        DeactivateTiming();
        return Fail(why, "cannot lock the MessageQueue");
      }
      jobject existing = env->GetObjectField(queue, refs.idle_handlers);
      if (jni::TakeException(env, "read mIdleHandlers", why)) return Undo(why);
      if (existing && env->IsInstanceOf(existing, refs.timing_list)) {
        return Undo(why, "mIdleHandlers already holds a TimingIdleHandlerList (a second jankprobe?)");
      }
      jobject timed = env->NewObject(refs.timing_list, refs.timing_list_ctor, existing);
      if (jni::TakeException(env, "new TimingIdleHandlerList", why) || !timed) return Undo(why);
      env->SetObjectField(queue, refs.idle_handlers, timed);
      if (jni::TakeException(env, "write mIdleHandlers", why)) return Undo(why);
      jclass list_class = env->GetObjectClass(timed);
      jmethodID size = env->GetMethodID(list_class, "size", "()I");
      taken_over_ = size ? env->CallIntMethod(timed, size) : 0;
      if (jni::TakeException(env, "TimingIdleHandlerList.size", why)) taken_over_ = -1;
    }
    queue_ = env->NewGlobalRef(queue);
    return true;
  }

  static bool Fail(std::string* why, const std::string& reason) {
    *why = reason;
    return false;
  }
  static bool Undo(std::string* why, const std::string& reason = std::string()) {
    if (!reason.empty()) *why = reason;
    DeactivateTiming();
    return false;
  }

  jobject queue_ = nullptr;  // global ref to the main MessageQueue while installed
  int taken_over_ = 0;
};

}  // namespace

std::unique_ptr<hook::MonitorImpl> MakeIdleMonitor() { return std::make_unique<IdleMonitor>(); }

}  // namespace jp::idle
