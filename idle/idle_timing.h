// What runs around each IdleHandler.queueIdle() call, on the main thread. TimingIdleHandlerList's wrapper
// takes the start (with the looper's poll source on, the gap the source published at the epoll return before
// the idle pass for its first handler and the previous handler's end for the others, with no clock read; else
// System.nanoTime, CLOCK_MONOTONIC; see jni::IdleWords::gap_start) and publishes it for the watchdog (a
// start that is its pass's gap as TimingIdleHandlerList.lastGap, a plain Java static the watchdog reads
// through JNI; any other in jni::IdleWords::running_since); it calls `arm` only when no watchdog deadline
// is sure to cover the call (the watchdog keeps its deadline armed while calls go on: after a lag_ms
// without calls, see OnDeadline), so a handler that overruns is caught with its own frames on the stack. It takes the end itself too (System.nanoTime) and, in steady state, makes no native call at
// all: a call shorter than FoldBelowNs() (published to the Java side by the monitor) is only added to its
// handler class's figures (calls, total, longest; kept in Java) and the running word cleared. Every other
// call goes to `end`: it clears the word, appends an `idle.handler` timeline record when the call took at
// least idle.record_min_us (or lag_ms) and, over lag_ms, submits an `idle_lag` report with the stack. No
// syscall, allocation, lock or locked instruction besides the timeline's own on either path unless a call
// overran (the main thread is the single writer of the state it touches, hook::InFlightGate).
//
// The state is process-wide and never freed: a wrapper already inside queueIdle() when the monitor stops
// still ends its call, natively (which then finds the timing inactive and does nothing) or folded into its
// class's figures (which outlive the monitor).
#ifndef JANKPROBE_IDLE_IDLE_TIMING_H_
#define JANKPROBE_IDLE_IDLE_TIMING_H_

#include <cstdint>
#include <string>

#include "hook/monitor.h"

namespace jp::idle {

struct IdleCounters {
  // Calls the Java side did not count in a class's figures (TimingIdleHandlerList keeps figures for a
  // bounded number of classes); the monitor adds the Java side's counts for the total.
  uint64_t uncounted_calls = 0;
  uint64_t recorded = 0;  // calls that got a timeline record of their own (at least record_min_us or lag_ms)
  uint64_t record_min_us = 0;
  uint64_t lags = 0;
  uint64_t deadline_arms = 0;  // watchdog deadlines armed: about one per lag_ms of steady calls, not one per call
  uint64_t stack_captures = 0;  // stacks taken of calls running past lag_ms (one per slow call)
  uint64_t arm_calls = 0;      // native arm calls from Java: at most one per lag period in which no call
                               // ran before (the chain below) with the expedited fence, every call without it
  uint64_t chain_rearms = 0;   // of deadline_arms: re-armed by the watchdog because calls went on (covered kept)
  bool fence_expedited = false;  // the watchdog side of the Dekker pair is a membarrier
  bool covered_usable = false;   // the watchdog thread reaches the VM: covered may be set (with the membarrier)
  std::string covered_error;     // why TimingIdleHandlerList.covered could not be used (empty: it is)
};

// Starts timing with this context and thresholds (installs the JNI hooks). False, with *why, when
// TimingIdleHandlerList lacks what the watchdog reads (nothing is started then).
bool ActivateTiming(const hook::PluginContext* context, int32_t lag_ms, int32_t record_min_us, std::string* why);
void RetuneTiming(int32_t lag_ms, int32_t record_min_us);
// Below this the Java side folds a call into its class's figures instead of calling `end`:
// min(record_min_us, lag_ms), so every call that needs a record or a report still reaches the native side.
int64_t FoldBelowNs();
// Uninstalls the hooks and waits until no arm/end call is inside the timing code.
void DeactivateTiming();
IdleCounters TimingCounters();

}  // namespace jp::idle

#endif  // JANKPROBE_IDLE_IDLE_TIMING_H_
