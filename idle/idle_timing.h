// What runs around each IdleHandler.queueIdle() call (from TimingIdleHandlerList's natives, on the main
// thread): begin marks the call running and makes sure the monitor's one watchdog deadline is armed no
// later than this call's idle.lag_ms point (usually it already is: nothing to do), so a handler that
// overruns is caught with its own frames on the stack; end marks it done, appends an `idle.handler`
// timeline record (handler class, duration) and, over the threshold, submits an `idle_lag` report with
// that stack. No syscall, allocation or lock on either path unless a call overran.
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
};

// Starts timing with this context and threshold (installs the JNI hooks).
void ActivateTiming(const hook::PluginContext* context, int32_t lag_ms);
void RetuneTiming(int32_t lag_ms);
// Uninstalls the hooks and waits until no begin/end call is inside the timing code.
void DeactivateTiming();
IdleCounters TimingCounters();

}  // namespace jp::idle

#endif  // JANKPROBE_IDLE_IDLE_TIMING_H_
