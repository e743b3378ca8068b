// The messages still waiting in the main queue when a lag or ANR is reported: who posted them (target
// Handler class, Runnable class, what) and how late each one is (now - when, on the uptimeMillis base;
// negative = not due yet). Read on the watchdog thread under the queue's own monitor, walking
// MessageQueue.mMessages; class names are taken after the lock is released, with Class.getName (no app
// toString() runs under the queue's lock).
#ifndef JANKPROBE_LOOPER_PENDING_MESSAGES_H_
#define JANKPROBE_LOOPER_PENDING_MESSAGES_H_

#include <jni.h>

#include <cstdint>
#include <string>
#include <vector>

#include "looper/message_history.h"

namespace jp::looper {

struct PendingMessage {
  std::string target;    // "" for a sync barrier
  std::string callback;  // "" when none
  int32_t what = 0;
  int64_t late_ms = 0;
  bool barrier = false;
  bool async = false;
};

struct PendingSnapshot {
  bool read = false;
  std::string why;        // when !read
  uint64_t taken_ns = 0;  // CLOCK_MONOTONIC
  int64_t total = 0;      // messages in the queue (all, even past the listed ones)
  std::vector<PendingMessage> listed;  // the first kMaxListed, queue order
};

constexpr size_t kMaxListed = 32;

PendingSnapshot ReadPendingMessages(JNIEnv* env);

void WritePending(JsonWriter* w, const PendingSnapshot& p);

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_PENDING_MESSAGES_H_
