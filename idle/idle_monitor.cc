#include "idle/idle_monitor.h"

#include <string>
#include <vector>

#include "hook/jni/jni_refs.h"
#include "hook/json_out.h"
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

// Whether `list` is a java.util.ArrayList itself, not a subclass: the framework's own list. Another
// tool's subclass (Tencent Matrix's idle tracer keeps wrappers in one and matches remove(handler) through
// a map of its own) must not be wrapped again: its remove would then miss, and a handler the app removes
// would run on every idle pass. Start-time only (nothing cached). *name gets the list's class.
bool IsPlainArrayList(JNIEnv* env, jobject list, std::string* name) {
  jclass list_class = env->GetObjectClass(list);
  jclass array_list = env->FindClass("java/util/ArrayList");
  if (jni::TakeException(env, "FindClass java.util.ArrayList", nullptr) || !list_class || !array_list) return false;
  if (env->IsSameObject(list_class, array_list)) return true;
  jclass class_class = env->GetObjectClass(list_class);
  jmethodID get_name = env->GetMethodID(class_class, "getName", "()Ljava/lang/String;");
  jstring s = get_name ? static_cast<jstring>(env->CallObjectMethod(list_class, get_name)) : nullptr;
  *name = jni::TakeException(env, "Class.getName", nullptr) || !s ? "?" : jni::ToStdString(env, s);
  return false;
}

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

  void Retune(const Config& config) override {
    RetuneTiming(config.idle.lag_ms, config.idle.record_min_us);
    std::string why;
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", &why);
    if (!env || !PublishFoldThreshold(env, &why)) fold_error_ = "fold threshold not updated: " + why;
  }

  // TimingIdleHandlerList.foldBelowNs: calls shorter than this end in Java, counted in their class's
  // figures only. Written through JNI (a volatile field: the next call sees it).
  bool PublishFoldThreshold(JNIEnv* env, std::string* why) {
    const jni::IdleRefs& refs = jni::Idle();
    env->SetStaticLongField(refs.timing_list, refs.timing_list_fold_below, static_cast<jlong>(FoldBelowNs()));
    if (jni::TakeException(env, "TimingIdleHandlerList.foldBelowNs", why)) return false;
    fold_error_.clear();
    return true;
  }

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
    if (!lock.held()) {  // MonitorEnter failed (out of memory): its exception cleared before any other call
      jni::TakeException(env, "MonitorEnter", &why);
      *why_out = why.empty() ? "cannot lock the MessageQueue: TimingIdleHandlerList left in place" : why;
      return;
    }
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

  // Today's counters (calls now include the folded ones), how many calls got a timeline record of their
  // own and how many were folded, and the Java side's figures per handler class (read through JNI from
  // this thread; they may be a call apart, TimingIdleHandlerList.Timed says why).
  std::string StatusJson() const override {
    const IdleCounters c = TimingCounters();
    std::vector<ClassFigures> classes;
    std::string figures_error;
    ReadClassFigures(&classes, &figures_error);
    uint64_t calls = c.uncounted_calls, folded = 0;
    for (const ClassFigures& f : classes) {
      calls += f.calls;
      folded += f.folded;
    }
    hook::JsonOut out;
    out.StartObject();
    out.Field("handlers_taken_over", static_cast<int64_t>(taken_over_));
    out.Field("calls", calls);
    out.Field("lags", c.lags);
    out.Field("deadline_arms", c.deadline_arms);
    out.Field("arm_calls", c.arm_calls);
    out.Field("chain_rearms", c.chain_rearms);
    out.Field("stack_captures", c.stack_captures);
    out.Field("fence", c.fence_expedited ? "membarrier" : "full");
    // "java": Java skips nativeArm while a deadline covers its calls; "off": every call takes it (no
    // membarrier, or the watchdog thread has not reached the VM yet, or cannot: covered_error).
    out.Field("covered", c.fence_expedited && c.covered_usable ? "java" : "off");
    if (!c.covered_error.empty()) out.Field("covered_error", c.covered_error);
    out.Field("recorded", c.recorded);
    out.Field("folded", folded);
    out.Field("record_min_us", c.record_min_us);
    if (!fold_error_.empty()) out.Field("fold_error", fold_error_);
    if (!figures_error.empty()) out.Field("per_handler_error", figures_error);
    out.Key("per_handler");
    out.StartArray();
    for (const ClassFigures& f : classes) {
      out.StartObject();
      out.Field("class", f.handler_class);
      out.Field("calls", f.calls);
      out.Field("folded", f.folded);
      out.Field("total_ns", f.total_ns);
      out.Field("max_ns", f.max_ns);
      out.EndObject();
    }
    out.EndArray();
    out.EndObject();
    return out.Take();
  }

 private:
  struct ClassFigures {
    std::string handler_class;
    uint64_t calls = 0, folded = 0, total_ns = 0, max_ns = 0;
  };

  // TimingIdleHandlerList.figures(): {String[] classes, long[] 4 per class}.
  void ReadClassFigures(std::vector<ClassFigures>* out, std::string* why) const {
    if (!refs_ok_) return;  // never installed: nothing to read (and no class to load for it)
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", why);
    if (!env) return;
    jni::ScopedLocalFrame frame(env, 8);
    if (!frame.ok()) {
      *why = "PushLocalFrame failed";
      return;
    }
    const jni::IdleRefs& refs = jni::Idle();
    auto pair = static_cast<jobjectArray>(env->CallStaticObjectMethod(refs.timing_list, refs.timing_list_figures));
    if (jni::TakeException(env, "TimingIdleHandlerList.figures", why) || !pair) return;
    auto classes = static_cast<jobjectArray>(env->GetObjectArrayElement(pair, 0));
    auto values = static_cast<jlongArray>(env->GetObjectArrayElement(pair, 1));
    if (jni::TakeException(env, "TimingIdleHandlerList.figures()[]", why) || !classes || !values) return;
    const jsize n = env->GetArrayLength(classes);
    if (env->GetArrayLength(values) != 4 * n) {
      *why = "TimingIdleHandlerList.figures: " + std::to_string(env->GetArrayLength(values)) + " values for " +
             std::to_string(n) + " classes";
      return;
    }
    std::vector<jlong> v(static_cast<size_t>(4 * n));
    if (n > 0) env->GetLongArrayRegion(values, 0, 4 * n, v.data());
    for (jsize i = 0; i < n; ++i) {
      ClassFigures f;
      auto name = static_cast<jstring>(env->GetObjectArrayElement(classes, i));
      f.handler_class = jni::ToStdString(env, name);  // "" for a null element
      if (name) env->DeleteLocalRef(name);
      auto at = [&](int k) { return v[static_cast<size_t>(4 * i + k)] > 0 ? static_cast<uint64_t>(v[4 * i + k]) : 0; };
      f.calls = at(0);
      f.folded = at(1);
      f.total_ns = at(2);
      f.max_ns = at(3);
      out->push_back(std::move(f));
    }
    jni::TakeException(env, "TimingIdleHandlerList.figures: class names", why);
  }

  bool Install(const Config& config, hook::PluginContext* context, std::string* why) {
    const jni::IdleRefs& refs = jni::Idle();
    if (!jni::Vm()) return Fail(why, "no Java VM: libjankprobe.so was not loaded with System.loadLibrary");
    if (!refs.ok) return Fail(why, refs.why);
    refs_ok_ = true;
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", why);
    if (!env) return false;
    jni::ScopedLocalFrame frame(env, 16);
    if (!frame.ok()) return Fail(why, "PushLocalFrame failed");
    jobject queue = jni::MainQueue(env, why);
    if (!queue) return false;

    // Timing is live before the list is: a handler running right after the swap is already recorded.
    if (!ActivateTiming(context, config.idle.lag_ms, config.idle.record_min_us, why)) return false;
    if (!PublishFoldThreshold(env, why)) return Undo(why);
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
      std::string foreign;
      if (existing && !IsPlainArrayList(env, existing, &foreign)) {
        return Undo(why, "mIdleHandlers holds a " + foreign +
                             ", not an ArrayList: another tool's list, left in place (wrapping its entries would "
                             "break its own removeIdleHandler)");
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
  // jni::Idle() resolved: the figures are readable, after a stop too (they outlive the monitor).
  bool refs_ok_ = false;
  std::string fold_error_;         // why the last retune could not publish the fold threshold
  int taken_over_ = 0;
};

}  // namespace

std::unique_ptr<hook::MonitorImpl> MakeIdleMonitor() { return std::make_unique<IdleMonitor>(); }

}  // namespace jp::idle
