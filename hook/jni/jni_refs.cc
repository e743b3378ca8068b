#include "hook/jni/jni_refs.h"

#include <atomic>

#include "hook/jni/jni_util.h"

namespace jp::jni {
namespace {

std::atomic<JavaVM*> g_vm{nullptr};
QueueRefs g_queue;
IdleRefs g_idle;
BarrierRefs g_barrier;
std::atomic<const IdleHooks*> g_idle_hooks{nullptr};

// Small resolver that stops at the first failure and remembers what it was looking for, so a reason reads
// "android/os/MessageQueue.mIdleHandlers: java.lang.NoSuchFieldError: mIdleHandlers".
class Resolver {
 public:
  explicit Resolver(JNIEnv* env) : env_(env) {}
  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }

  jclass Class(const char* name) {
    if (!ok()) return nullptr;
    jclass local = env_->FindClass(name);
    if (Failed(name) || !local) return Missing(name);
    auto global = static_cast<jclass>(env_->NewGlobalRef(local));
    env_->DeleteLocalRef(local);
    return global;
  }
  jfieldID Field(jclass c, const char* cname, const char* name, const char* sig) {
    if (!ok() || !c) return nullptr;
    jfieldID id = env_->GetFieldID(c, name, sig);
    const std::string what = std::string(cname) + "." + name;
    if (Failed(what.c_str()) || !id) return static_cast<jfieldID>(Missing(what.c_str()));
    return id;
  }
  jmethodID Method(jclass c, const char* cname, const char* name, const char* sig, bool is_static = false) {
    if (!ok() || !c) return nullptr;
    jmethodID id = is_static ? env_->GetStaticMethodID(c, name, sig) : env_->GetMethodID(c, name, sig);
    const std::string what = std::string(cname) + "." + name + sig;
    if (Failed(what.c_str()) || !id) return static_cast<jmethodID>(Missing(what.c_str()));
    return id;
  }

 private:
  bool Failed(const char* what) { return TakeException(env_, what, &why_); }
  std::nullptr_t Missing(const char* what) {
    if (ok()) why_ = std::string(what) + ": not found";
    return nullptr;
  }
  JNIEnv* env_;
  std::string why_;
};

void ResolveQueue(JNIEnv* env) {
  Resolver r(env);
  g_queue.looper = r.Class("android/os/Looper");
  g_queue.message_queue = r.Class("android/os/MessageQueue");
  g_queue.looper_get_main = r.Method(g_queue.looper, "Looper", "getMainLooper", "()Landroid/os/Looper;", true);
  g_queue.looper_get_queue = r.Method(g_queue.looper, "Looper", "getQueue", "()Landroid/os/MessageQueue;");
  g_queue.system_clock = r.Class("android/os/SystemClock");
  g_queue.uptime_millis = r.Method(g_queue.system_clock, "SystemClock", "uptimeMillis", "()J", true);
  g_queue.ok = r.ok();
  g_queue.why = r.why();
}

void ResolveIdle(JNIEnv* env) {
  if (!g_queue.ok) {
    g_idle.why = g_queue.why;
    return;
  }
  Resolver r(env);
  g_idle.idle_handlers = r.Field(g_queue.message_queue, "MessageQueue", "mIdleHandlers", "Ljava/util/ArrayList;");
  g_idle.timing_list = r.Class("com/jankprobe/TimingIdleHandlerList");
  g_idle.timing_list_ctor = r.Method(g_idle.timing_list, "TimingIdleHandlerList", "<init>", "(Ljava/util/Collection;)V");
  g_idle.timing_list_unwrapped =
      r.Method(g_idle.timing_list, "TimingIdleHandlerList", "unwrapped", "()Ljava/util/ArrayList;");
  g_idle.ok = r.ok();
  g_idle.why = r.why();
}

void ResolveBarrier(JNIEnv* env) {
  if (!g_queue.ok) {
    g_barrier.why = g_queue.why;
    return;
  }
  Resolver r(env);
  BarrierRefs& b = g_barrier;
  jclass mq = g_queue.message_queue;
  b.messages = r.Field(mq, "MessageQueue", "mMessages", "Landroid/os/Message;");
  b.queue_is_idle = r.Method(mq, "MessageQueue", "isIdle", "()Z");
  b.remove_sync_barrier = r.Method(mq, "MessageQueue", "removeSyncBarrier", "(I)V");
  b.message = r.Class("android/os/Message");
  b.msg_target = r.Field(b.message, "Message", "target", "Landroid/os/Handler;");
  b.msg_when = r.Field(b.message, "Message", "when", "J");
  b.msg_arg1 = r.Field(b.message, "Message", "arg1", "I");
  b.msg_obtain = r.Method(b.message, "Message", "obtain", "(Landroid/os/Handler;I)Landroid/os/Message;", true);
  b.msg_set_async = r.Method(b.message, "Message", "setAsynchronous", "(Z)V");
  b.handler = r.Class("android/os/Handler");
  b.handler_ctor = r.Method(b.handler, "Handler", "<init>", "(Landroid/os/Looper;)V");
  b.handler_send = r.Method(b.handler, "Handler", "sendMessage", "(Landroid/os/Message;)Z");
  b.handler_send_delayed = r.Method(b.handler, "Handler", "sendMessageDelayed", "(Landroid/os/Message;J)Z");
  b.handler_has = r.Method(b.handler, "Handler", "hasMessages", "(I)Z");
  b.handler_remove = r.Method(b.handler, "Handler", "removeMessages", "(I)V");
  b.ok = r.ok();
  b.why = r.why();
}

jlong JNICALL NativeIdleBegin(JNIEnv* env, jclass, jstring handler_class) {
  const IdleHooks* hooks = g_idle_hooks.load(std::memory_order_acquire);
  return hooks ? hooks->begin(env, handler_class) : 0;
}

void JNICALL NativeIdleEnd(JNIEnv* env, jclass, jlong token, jstring handler_class, jboolean keep) {
  const IdleHooks* hooks = g_idle_hooks.load(std::memory_order_acquire);
  if (hooks) hooks->end(env, token, handler_class, keep);
}

}  // namespace

void ResolveMonitorRefs(JNIEnv* env) {
  ResolveQueue(env);
  ResolveIdle(env);
  ResolveBarrier(env);
}

JavaVM* Vm() { return g_vm.load(std::memory_order_acquire); }
void SetVm(JavaVM* vm) { g_vm.store(vm, std::memory_order_release); }

const QueueRefs& Queue() { return g_queue; }
const IdleRefs& Idle() { return g_idle; }
const BarrierRefs& Barrier() { return g_barrier; }

jobject MainLooper(JNIEnv* env, std::string* why) {
  if (!g_queue.ok) {
    if (why) *why = g_queue.why;
    return nullptr;
  }
  jobject looper = env->CallStaticObjectMethod(g_queue.looper, g_queue.looper_get_main);
  if (TakeException(env, "Looper.getMainLooper", why)) return nullptr;
  if (!looper && why) *why = "no main looper yet (Looper.prepareMainLooper has not run)";
  return looper;
}

jobject MainQueue(JNIEnv* env, std::string* why) {
  jobject looper = MainLooper(env, why);
  if (!looper) return nullptr;
  jobject queue = env->CallObjectMethod(looper, g_queue.looper_get_queue);
  env->DeleteLocalRef(looper);
  if (TakeException(env, "Looper.getQueue", why)) return nullptr;
  if (!queue && why) *why = "the main looper has no MessageQueue";
  return queue;
}

void SetIdleHooks(const IdleHooks* hooks) { g_idle_hooks.store(hooks, std::memory_order_release); }

bool RegisterIdleNatives(JNIEnv* env, std::string* why) {
  if (!g_idle.timing_list) {
    if (why) *why = g_idle.why;
    return false;
  }
  static const JNINativeMethod kNatives[] = {
      {const_cast<char*>("nativeBegin"), const_cast<char*>("(Ljava/lang/String;)J"),
       reinterpret_cast<void*>(NativeIdleBegin)},
      {const_cast<char*>("nativeEnd"), const_cast<char*>("(JLjava/lang/String;Z)V"),
       reinterpret_cast<void*>(NativeIdleEnd)},
  };
  env->RegisterNatives(g_idle.timing_list, kNatives, sizeof kNatives / sizeof kNatives[0]);
  if (TakeException(env, "RegisterNatives TimingIdleHandlerList", &g_idle.why)) {
    g_idle.ok = false;  // the idle monitor cannot run without them; the others can
    if (why) *why = g_idle.why;
    return false;
  }
  return true;
}

}  // namespace jp::jni
