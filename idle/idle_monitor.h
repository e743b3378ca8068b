// IdleHandler timing: the main MessageQueue's mIdleHandlers is swapped (under the queue's monitor, as the
// queue's own synchronized methods would) for a com.jankprobe.TimingIdleHandlerList holding the handlers
// already registered, each wrapped so that every queueIdle() call is timed (idle_timing.h). Stop puts back
// a plain ArrayList with the current, unwrapped handlers.
#ifndef JANKPROBE_IDLE_IDLE_MONITOR_H_
#define JANKPROBE_IDLE_IDLE_MONITOR_H_

#include <memory>

#include "hook/monitor.h"

namespace jp::idle {

std::unique_ptr<hook::MonitorImpl> MakeIdleMonitor();

}  // namespace jp::idle

#endif  // JANKPROBE_IDLE_IDLE_MONITOR_H_
