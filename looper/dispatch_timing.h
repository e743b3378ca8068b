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
  uint64_t poll_gaps = 0;       // poll source: main-thread gaps timed
  uint64_t poll_ring_full = 0;  // ... not added to the history (the watchdog had not drained them)
  uint64_t ticker_resumes = 0;  // ... parked frame ticker resumed because of a long gap
  uint64_t poll_rearms = 0;     // ... sampling check re-armed by the periodic check (a lost race)
  uint64_t poll_check_arms = 0; // ... sampling check chains the main thread started (a gap after the
                                //     watchdog found a whole check period without one)
  uint64_t poll_checks = 0;     // ... check deadlines the watchdog ran (about one per sample_after_ms
                                //     while the main thread works)
  uint64_t poll_run_records = 0;  // ... `looper.run` records appended (back-to-back gaps under record_min_us,
                                  //     busy for record_min_us in all)
  uint64_t poll_run_gaps = 0;     // ... gaps those records hold
  uint64_t poll_folded_gaps = 0;  // ... gaps of runs busy for less than record_min_us in all: no record
};

void ActivateTiming(const hook::PluginContext* context, const Config& config);
void RetuneTiming(const Config& config);
// Uninstalls the natives' hooks and waits until no begin/end/frame/watchdog callback is inside the code.
void DeactivateTiming();
LooperCounters TimingCounters();

// The poll source (poll_timing.cc): times the main thread's gaps between epoll waits in `library`
// (PLT hooks on its epoll_wait / epoll_pwait imports). Needs ActivateTiming first. main_thread: the
// looper's thread (pthread_self() of the main thread), the only one whose gaps count; 0 when not known
// (started from another thread), then it is learnt from main_tid on the main thread's first wait. False with *why
// when neither import could be hooked (library not loaded, imports neither, patch failed).
bool StartPollSource(const char* library, uintptr_t main_thread, uint32_t main_tid, std::string* why);
// Puts the GOT slots back and waits until no proxy is inside the timing. Safe to call when not started.
void StopPollSource();
// Watchdog: moves the finished gaps into the history (also done by status and reports).
void DrainPollSource();
// How many GOT slots the poll hooks hold now (0 when stopped).
size_t PollSourceSlots();
// FrameTicker told us it parked / resumed: while parked, a main-thread gap over a quarter frame asks it
// (through the watchdog) to resume, since no LooperPrinter sees the messages in poll mode.
void SetTickerParked(bool parked);

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_DISPATCH_TIMING_H_
