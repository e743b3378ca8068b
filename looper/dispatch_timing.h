// What runs around each main-thread message (from LooperPrinter's natives) and on the watchdog while one
// runs. The state is process-wide and never freed, like the idle timing: a printer still inside a dispatch
// when the monitor stops finds the timing inactive and does nothing.
//
// Main thread, per message (the hot path: no allocation, no Java call, one uncontended mutex):
//   begin: wall and thread-CPU clock, the line copied into a stack buffer and parsed (dispatch_line.h),
//          names interned, the sampling deadline armed at looper.sample_after_ms;
//   end:   both clocks again, the deadline disarmed, a `looper.message` record appended, the dispatch added
//          to the history window; over looper.lag_ms it is queued for a report built on the watchdog.
// Watchdog, while a message runs past sample_after_ms: one stack sample every sample_interval_ms (merged
// when identical), the pending queue read once the message crosses lag_ms (while the main thread is still
// stuck, so the queue is the one it is holding back), an `anr_risk` report once it crosses anr_ms.
// Frames: FrameTicker's natives feed FrameStats (nativeFrame starts a run, nativeFrames reports a batch of
// frames); a batch with dropped frames becomes a `frame` record (an instant, so that it never shows up as
// "blocked_by").
#ifndef JANKPROBE_LOOPER_DISPATCH_TIMING_H_
#define JANKPROBE_LOOPER_DISPATCH_TIMING_H_

#include <jni.h>

#include <cstdint>
#include <string>

#include "hook/config.h"
#include "hook/monitor.h"

namespace jp::looper {

struct LooperCounters {
  uint64_t messages = 0;
  uint64_t lags = 0;
  uint64_t anrs = 0;
  uint64_t samples = 0;
  uint64_t unmatched = 0;       // an end without a begin or a begin without an end (printer swapped mid-message)
  uint64_t reports_dropped = 0; // lagging messages beyond the report queue while the watchdog was busy
  uint64_t history_entries = 0;
  uint64_t history_evicted = 0;
  uint64_t frames = 0;
  uint64_t dropped_frames = 0;
  uint64_t janky_frames = 0;
  double refresh_ms = 0;
};

void ActivateTiming(const hook::PluginContext* context, const Config& config);
void RetuneTiming(const Config& config);
// Uninstalls the natives' hooks and waits until no begin/end/frame/watchdog callback is inside the code.
void DeactivateTiming();
LooperCounters TimingCounters();

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_DISPATCH_TIMING_H_
