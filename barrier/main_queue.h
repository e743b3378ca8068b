// JNI access to the main MessageQueue for the barrier monitor: the head read under the queue's monitor,
// probe messages on a plain Handler of the main looper, and barrier removal. Every call clears any
// exception it causes and reports it as a reason.
//
// The periodic head read calls no Java method: it runs on the watchdog, and every Java call HotSpot makes on
// a thread touches ~80 KiB of its stack (hook/jni/java_stack_release.h). The queue's lock, the field reads
// and the clock are JNI and native; whether the queue keeps its messages in mMessages at all is settled
// once at start (Classify), instead of by MessageQueue.isIdle() at every check.
#ifndef JANKPROBE_BARRIER_MAIN_QUEUE_H_
#define JANKPROBE_BARRIER_MAIN_QUEUE_H_

#include <jni.h>

#include <cstdint>
#include <string>

#include "hook/clock.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"

namespace jp::barrier {

// SystemClock.uptimeMillis() without a Java call, the base of Message.when. Android's is CLOCK_MONOTONIC in
// whole milliseconds, truncated (libutils' uptimeMillis(): systemTime(SYSTEM_TIME_MONOTONIC) / 1 ms); the
// host stand-in (tests/java/android/os/SystemClock.java) is System.nanoTime() / 1000000, and HotSpot's
// nanoTime on Linux is CLOCK_MONOTONIC as well.
inline int64_t UptimeMillis() { return static_cast<int64_t>(hook::MonotonicNs() / hook::kNsPerMs); }

struct QueueHead {
  bool read = false;        // false: the read failed (*why says why)
  bool empty = true;        // mMessages was null
  bool is_barrier = false;  // head has no target
  int32_t token = 0;        // arg1 of a barrier
  int64_t when_ms = 0;      // uptimeMillis base
  int64_t now_ms = 0;       // UptimeMillis() while the lock was held
};

// What Classify found out about the main queue.
enum class QueueKind {
  kList,     // the classic queue: every message in the mMessages list, guarded by the queue's monitor
  kNotList,  // a queue that keeps its messages elsewhere (concurrent / lock-free): the check cannot work
  kUnknown,  // could not tell (the probe could not be posted): the check must not run on a guess
};

class MainQueue {
 public:
  // Probe message codes (Handler "what"); only our own Handler ever sees them.
  static constexpr int kSyncProbe = 0x6A70'0001;
  static constexpr int kAsyncProbe = 0x6A70'0002;
  static constexpr int kShapeProbe = 0x6A70'0003;

  // Takes global refs to the main queue and a new Handler on the main looper. false + *why on failure.
  bool Open(JNIEnv* env, std::string* why);
  void Close(JNIEnv* env);

  // Only on a queue Classify found to be kList. The check used to call MessageQueue.isIdle() here too, as
  // its guard against other queues ("mMessages null while not idle"); on a list queue that is
  // `mMessages == null || now < mMessages.when`, fields read here already, and the guard is Classify's now.
  QueueHead ReadHead(JNIEnv* env, std::string* why) const;
  // Which kind the main queue is, once at start; *why = the evidence for kNotList, the failure for kUnknown.
  // First the implementation flag where the class has one (mUseConcurrent, final per queue: true is
  // kNotList), then KeepsMessagesInList. Inline: a function of its own would land outside the ordered
  // start-only text (lib/startup_order.ld lists KeepsMessagesInList, whose mangled name has no return type).
  __attribute__((always_inline)) QueueKind Classify(JNIEnv* env, std::string* why) const {
    const jni::BarrierRefs& b = jni::Barrier();
    if (b.use_concurrent) {
      const jboolean concurrent = env->GetBooleanField(queue_, b.use_concurrent);
      if (jni::TakeException(env, "read MessageQueue.mUseConcurrent", why)) return QueueKind::kUnknown;
      if (concurrent) {
        *why = "MessageQueue.mUseConcurrent is true: the concurrent queue keeps no messages in mMessages";
        return QueueKind::kNotList;
      }
    }
    return KeepsMessagesInList(env, why);
  }
  // The probe: a far-future message posted, mMessages read under the lock, the message removed. A queue
  // that holds it while mMessages is null is kNotList (Android 17's lock-free queue keeps the field, always
  // null); one where the probe could not be posted or read is kUnknown.
  QueueKind KeepsMessagesInList(JNIEnv* env, std::string* why) const;

  bool PostProbe(JNIEnv* env, int what, bool async, int64_t delay_ms, std::string* why) const;
  // 1 queued, 0 not queued, -1 failed.
  int HasProbe(JNIEnv* env, int what, std::string* why) const;
  void RemoveProbe(JNIEnv* env, int what) const;
  bool RemoveSyncBarrier(JNIEnv* env, int32_t token, std::string* why) const;

 private:
  jobject queue_ = nullptr;    // global
  jobject handler_ = nullptr;  // global
};

}  // namespace jp::barrier

#endif  // JANKPROBE_BARRIER_MAIN_QUEUE_H_
