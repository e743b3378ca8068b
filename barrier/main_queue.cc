#include "barrier/main_queue.h"

#include "hook/jni/java_stack_release.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"

namespace jp::barrier {

bool MainQueue::Open(JNIEnv* env, std::string* why) {
  const jni::BarrierRefs& b = jni::Barrier();
  jni::ScopedLocalFrame frame(env, 8);
  jobject looper = jni::MainLooper(env, why);
  if (!looper) return false;
  jobject queue = jni::MainQueue(env, why);
  if (!queue) return false;
  // A plain Handler: neither async nor with a callback, so its messages obey barriers like the app's do.
  jobject handler = env->NewObject(b.handler, b.handler_ctor, looper);
  if (jni::TakeException(env, "new Handler(mainLooper)", why) || !handler) return false;
  queue_ = env->NewGlobalRef(queue);
  handler_ = env->NewGlobalRef(handler);
  return queue_ && handler_;
}

void MainQueue::Close(JNIEnv* env) {
  if (handler_) {
    RemoveProbe(env, kSyncProbe);
    RemoveProbe(env, kAsyncProbe);
    env->DeleteGlobalRef(handler_);
  }
  if (queue_) env->DeleteGlobalRef(queue_);
  handler_ = queue_ = nullptr;
}

QueueHead MainQueue::ReadHead(JNIEnv* env, std::string* why) const {
  const jni::BarrierRefs& b = jni::Barrier();
  QueueHead h;
  jni::ScopedLocalFrame frame(env, 8);
  if (env->MonitorEnter(queue_) != JNI_OK) {
    jni::TakeException(env, "MonitorEnter(queue)", why);
    return h;
  }
  // Under the lock, as isIdle() reads it: nothing is enqueued or dispatched between the clock and the head.
  h.now_ms = UptimeMillis();
  jobject head = env->GetObjectField(queue_, b.messages);
  if (!jni::TakeException(env, "read mMessages", why)) {
    h.empty = head == nullptr;
    if (head) {
      jobject target = env->GetObjectField(head, b.msg_target);
      h.is_barrier = target == nullptr;
      h.when_ms = env->GetLongField(head, b.msg_when);
      h.token = env->GetIntField(head, b.msg_arg1);
    }
    h.read = !jni::TakeException(env, "read the queue head", why);
  }
  env->MonitorExit(queue_);
  jni::TakeException(env, "MonitorExit(queue)", nullptr);
  return h;
}

QueueKind MainQueue::KeepsMessagesInList(JNIEnv* env, std::string* why) const {
  const jni::BarrierRefs& b = jni::Barrier();
  constexpr int64_t kFarFutureMs = 3600 * 1000;
  std::string post_why;
  if (!PostProbe(env, kShapeProbe, false, kFarFutureMs, &post_why)) {
    *why = "cannot tell whether the main queue keeps its messages in mMessages: " + post_why;
    return QueueKind::kUnknown;
  }
  bool head_null = false;
  bool head_read = false;
  if (env->MonitorEnter(queue_) == JNI_OK) {
    jobject head = env->GetObjectField(queue_, b.messages);
    head_read = !jni::TakeException(env, "read mMessages", why);
    head_null = head == nullptr;
    if (head) env->DeleteLocalRef(head);
    env->MonitorExit(queue_);
  }
  const bool locked = !jni::TakeException(env, "MonitorEnter(queue)", why);
  const int queued = HasProbe(env, kShapeProbe, why);
  RemoveProbe(env, kShapeProbe);
  if (!locked || !head_read || queued < 0) {
    *why = "cannot tell whether the main queue keeps its messages in mMessages: " + *why;
    return QueueKind::kUnknown;
  }
  if (queued == 1 && head_null) {
    *why = "MessageQueue.mMessages is null while the queue holds a message (lock-free queue)";
    return QueueKind::kNotList;
  }
  // queued == 0: the probe left the queue before the read (the looper is quitting, or the app removed our
  // message): nothing learnt either way.
  if (queued == 0) {
    *why = "cannot tell whether the main queue keeps its messages in mMessages: the probe left the queue";
    return QueueKind::kUnknown;
  }
  return QueueKind::kList;
}

bool MainQueue::PostProbe(JNIEnv* env, int what, bool async, int64_t delay_ms, std::string* why) const {
  const jni::BarrierRefs& b = jni::Barrier();
  jni::ScopedLocalFrame frame(env, 4);
  jni::NoteJavaFramesRan();
  jobject msg = env->CallStaticObjectMethod(b.message, b.msg_obtain, handler_, what);
  if (jni::TakeException(env, "Message.obtain", why) || !msg) return false;
  if (async) {
    env->CallVoidMethod(msg, b.msg_set_async, JNI_TRUE);
    if (jni::TakeException(env, "Message.setAsynchronous", why)) return false;
  }
  const jboolean ok = delay_ms > 0 ? env->CallBooleanMethod(handler_, b.handler_send_delayed, msg, static_cast<jlong>(delay_ms))
                                   : env->CallBooleanMethod(handler_, b.handler_send, msg);
  if (jni::TakeException(env, "Handler.sendMessage", why)) return false;
  if (!ok) {
    if (why) *why = "Handler.sendMessage refused (the main looper is quitting)";
    return false;
  }
  return true;
}

int MainQueue::HasProbe(JNIEnv* env, int what, std::string* why) const {
  jni::NoteJavaFramesRan();
  const jboolean has = env->CallBooleanMethod(handler_, jni::Barrier().handler_has, what);
  if (jni::TakeException(env, "Handler.hasMessages", why)) return -1;
  return has ? 1 : 0;
}

void MainQueue::RemoveProbe(JNIEnv* env, int what) const {
  jni::NoteJavaFramesRan();
  env->CallVoidMethod(handler_, jni::Barrier().handler_remove, what);
  jni::TakeException(env, "Handler.removeMessages", nullptr);
}

bool MainQueue::RemoveSyncBarrier(JNIEnv* env, int32_t token, std::string* why) const {
  jni::NoteJavaFramesRan();
  env->CallVoidMethod(queue_, jni::Barrier().remove_sync_barrier, static_cast<jint>(token));
  return !jni::TakeException(env, "MessageQueue.removeSyncBarrier", why);
}

}  // namespace jp::barrier
