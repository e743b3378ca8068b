// The touch and key latency monitor (issue 4): PLT proxies on libinput.so's socket calls, InputMessage
// decoding per release, (fd, seq) matching, timeline records input.key / input.motion, touch_lag / key_lag
// and input_anr reports. The lead registers MakeInputMonitor() in lib/monitors.cc.
#ifndef JANKPROBE_INPUT_INPUT_MONITOR_H_
#define JANKPROBE_INPUT_INPUT_MONITOR_H_

#include <memory>

#include "hook/monitor.h"

namespace jp::input {

// The library whose imports are hooked.
constexpr const char* kInputLibrary = "libinput.so";

std::unique_ptr<jp::hook::MonitorImpl> MakeInputMonitor();

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_INPUT_MONITOR_H_
