// The looper monitor: a LooperPrinter on the main Looper times every message (dispatch_timing.h), a
// periodic check on the watchdog puts the printer back when someone replaced or cleared it
// (printer_hook.h), and a Choreographer frame callback counts dropped frames. Without Choreographer (or
// FrameTicker) the monitor runs without frames and its status says why.
#ifndef JANKPROBE_LOOPER_LOOPER_MONITOR_H_
#define JANKPROBE_LOOPER_LOOPER_MONITOR_H_

#include <memory>

#include "hook/monitor.h"

namespace jp::looper {

// How often the watchdog checks that our printer is still Looper.mLogging (the re-install bound).
constexpr uint64_t kPrinterCheckMs = 200;

std::unique_ptr<hook::MonitorImpl> MakeLooperMonitor();

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_LOOPER_MONITOR_H_
