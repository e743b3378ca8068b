// JNI access to the main MessageQueue for the barrier monitor: the head read under the queue's monitor,
// probe messages on a plain Handler of the main looper, and barrier removal. Every call clears any
// exception it causes and reports it as a reason.
#ifndef JANKPROBE_BARRIER_MAIN_QUEUE_H_
#define JANKPROBE_BARRIER_MAIN_QUEUE_H_

#include <jni.h>

#include <cstdint>
#include <string>

namespace jp::barrier {

struct QueueHead {
  bool read = false;        // false: the read failed (*why says why)
  bool empty = true;        // mMessages was null
  bool idle = true;         // isIdle() under the same lock (nothing due)
  bool is_barrier = false;  // head has no target
  int32_t token = 0;        // arg1 of a barrier
  int64_t when_ms = 0;      // uptimeMillis base
  int64_t now_ms = 0;       // SystemClock.uptimeMillis() while the lock was held
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

  QueueHead ReadHead(JNIEnv* env, std::string* why) const;
  // Whether the queue keeps its messages in mMessages: a far-future probe is posted, mMessages read, the
  // probe removed. false with *why = the evidence when the queue holds it but mMessages is null.
  bool KeepsMessagesInList(JNIEnv* env, std::string* why) const;

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
