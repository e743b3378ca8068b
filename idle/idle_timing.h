// What runs around each IdleHandler.queueIdle() call, on the main thread. TimingIdleHandlerList's wrapper
// takes the start (System.nanoTime, CLOCK_MONOTONIC) and writes it into a word the watchdog reads
// (jni::IdleWords::running_since); it calls `arm` only when no watchdog deadline is sure to cover the call
// (about once per idle.lag_ms, see ArmIfIdle), so a handler that overruns is caught with its own frames on
// the stack. One native call per call in steady state: `end` clears the word, appends an `idle.handler`
// timeline record (handler class, duration) and, over the threshold, submits an `idle_lag` report with
// that stack. No syscall, allocation, lock or locked instruction besides the timeline's own on either path
// unless a call overran (the main thread is the single writer of the state it touches, hook::InFlightGate).
//
// The state is process-wide and never freed: a wrapper already inside queueIdle() when the monitor stops
// still calls end, which then finds the timing inactive and does nothing.
#ifndef JANKPROBE_IDLE_IDLE_TIMING_H_
#define JANKPROBE_IDLE_IDLE_TIMING_H_

#include <cstdint>
#include <string>

#include "hook/monitor.h"

namespace jp::idle {

struct IdleCounters {
  uint64_t calls = 0;
  uint64_t lags = 0;
  uint64_t deadline_arms = 0;  // watchdog deadlines armed: about one per lag_ms of steady calls, not one per call
  uint64_t arm_calls = 0;      // native arm calls from Java: about deadline_arms with the expedited fence,
                               // every call without it
  bool fence_expedited = false;  // the watchdog side of the Dekker pair is a membarrier
};

// Starts timing with this context and threshold (installs the JNI hooks).
void ActivateTiming(const hook::PluginContext* context, int32_t lag_ms);
void RetuneTiming(int32_t lag_ms);
// Uninstalls the hooks and waits until no arm/end call is inside the timing code.
void DeactivateTiming();
IdleCounters TimingCounters();

}  // namespace jp::idle

#endif  // JANKPROBE_IDLE_IDLE_TIMING_H_
