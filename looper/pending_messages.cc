#include "looper/pending_messages.h"

#include "hook/clock.h"
#include "hook/jni/java_stack_release.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"

namespace jp::looper {
namespace {

constexpr int64_t kMaxWalk = 100000;  // a corrupt (cyclic) list must not hold the queue's lock forever

std::string ClassOf(JNIEnv* env, jobject o) {
  if (!o) return std::string();
  jclass c = env->GetObjectClass(o);
  auto name = static_cast<jstring>(env->CallObjectMethod(c, jni::Looper().class_get_name));
  std::string out = jni::TakeException(env, "Class.getName", nullptr) ? "?" : jni::ToStdString(env, name);
  if (name) env->DeleteLocalRef(name);
  env->DeleteLocalRef(c);
  return out;
}

}  // namespace

PendingSnapshot ReadPendingMessages(JNIEnv* env) {
  PendingSnapshot p;
  const jni::LooperRefs& refs = jni::Looper();
  const jni::QueueRefs& q = jni::Queue();
  if (!refs.pending_ok) {
    p.why = refs.pending_why;
    return p;
  }
  jni::ScopedLocalFrame frame(env, static_cast<jint>(2 * kMaxListed + 16));
  if (!frame.ok()) {
    p.why = "PushLocalFrame failed";
    return p;
  }
  jobject queue = jni::MainQueue(env, &p.why);
  if (!queue) return p;
  struct Raw {
    jobject target, callback;
    int32_t what;
    int64_t when;
    bool async;
  };
  std::vector<Raw> raw;
  raw.reserve(kMaxListed);
  int64_t now_ms = 0;
  if (env->MonitorEnter(queue) != JNI_OK) {
    jni::TakeException(env, "MonitorEnter(MessageQueue)", &p.why);
    if (p.why.empty()) p.why = "cannot lock the MessageQueue";
    return p;
  }
  jni::NoteJavaFramesRan();  // on the watchdog: its loop gives back the stack Java frames leave resident
  now_ms = env->CallStaticLongMethod(q.system_clock, q.uptime_millis);
  bool failed = jni::TakeException(env, "SystemClock.uptimeMillis", &p.why);
  jobject m = failed ? nullptr : env->GetObjectField(queue, refs.queue_messages);
  while (m && !failed && p.total < kMaxWalk) {
    ++p.total;
    if (raw.size() < kMaxListed) {
      Raw r{};
      r.target = env->GetObjectField(m, refs.msg_target);
      r.callback = env->GetObjectField(m, refs.msg_callback);
      r.what = env->GetIntField(m, refs.msg_what);
      r.when = env->GetLongField(m, refs.msg_when);
      r.async = env->CallBooleanMethod(m, refs.msg_is_async);
      failed = jni::TakeException(env, "Message.isAsynchronous", &p.why);
      raw.push_back(r);
    }
    if (failed) break;
    jobject next = env->GetObjectField(m, refs.msg_next);
    failed = jni::TakeException(env, "walk MessageQueue.mMessages", &p.why);
    env->DeleteLocalRef(m);  // keeps the local frame small on long queues
    m = next;
  }
  env->MonitorExit(queue);
  if (failed) return p;
  p.read = true;
  p.taken_ns = hook::MonotonicNs();
  for (const Raw& r : raw) {
    PendingMessage pm;
    pm.barrier = r.target == nullptr;
    pm.target = ClassOf(env, r.target);
    pm.callback = ClassOf(env, r.callback);
    pm.what = r.what;
    pm.late_ms = now_ms - r.when;
    pm.async = r.async;
    p.listed.push_back(std::move(pm));
  }
  return p;
}

void WritePending(JsonWriter* w, const PendingSnapshot& p) {
  auto str = [w](const std::string& s) { w->String(s.data(), s.size()); };
  w->StartObject();
  w->Key("read");
  w->Bool(p.read);
  if (!p.read) {
    w->Key("reason");
    str(p.why);
    w->EndObject();
    return;
  }
  w->Key("total");
  w->Int64(p.total);
  w->Key("messages");
  w->StartArray();
  for (const PendingMessage& m : p.listed) {
    w->StartObject();
    if (m.barrier) {
      w->Key("barrier");
      w->Bool(true);
    } else {
      w->Key("target");
      str(m.target);
      w->Key("callback");
      str(m.callback);
      w->Key("what");
      w->Int(m.what);
    }
    w->Key("late_ms");
    w->Int64(m.late_ms);
    if (m.async) {
      w->Key("async");
      w->Bool(true);
    }
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace jp::looper
