// The looper monitor: times every main-thread message from one of two sources (looper.source):
// - poll (poll_timing.cc): PLT hooks on epoll_wait / epoll_pwait in looper.poll_library time the gaps
//   between the main thread's Looper waits; no Java work per message, no message identity;
// - printer: a LooperPrinter on the main Looper (dispatch_timing.h), with a periodic check on the watchdog
//   that puts the printer back when someone replaced or cleared it (printer_hook.h).
// "auto" (the default) takes poll when its hooks install and says why it did not otherwise; a remote flag
// switches the source in place. A Choreographer frame callback counts dropped frames. Without
// Choreographer (or FrameTicker) the monitor runs without frames and its status says why.
#ifndef JANKPROBE_LOOPER_LOOPER_MONITOR_H_
#define JANKPROBE_LOOPER_LOOPER_MONITOR_H_

#include <memory>

#include "hook/monitor.h"

namespace jp::looper {

// How often the watchdog checks that our printer is still Looper.mLogging (the re-install bound), or, on
// the poll source, moves the finished gaps into the history.
constexpr uint64_t kPrinterCheckMs = 200;

std::unique_ptr<hook::MonitorImpl> MakeLooperMonitor();

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_LOOPER_MONITOR_H_
