// Registers the monitors built into libjankprobe.so with the plugin core when the library is loaded.
// Each monitor folder provides a factory; the references are weak so that a library built without one of
// them still links, and the plugin then reports that monitor as "unavailable" instead of failing.
#include <memory>

#include "hook/monitor.h"

namespace jp {
namespace input {
std::unique_ptr<hook::MonitorImpl> MakeInputMonitor() __attribute__((weak));
}
namespace idle {
std::unique_ptr<hook::MonitorImpl> MakeIdleMonitor() __attribute__((weak));
}
namespace barrier {
std::unique_ptr<hook::MonitorImpl> MakeBarrierMonitor() __attribute__((weak));
}
namespace looper {
std::unique_ptr<hook::MonitorImpl> MakeLooperMonitor() __attribute__((weak));
}

namespace {

__attribute__((constructor)) void RegisterBuiltInMonitors() {
  if (input::MakeInputMonitor) hook::RegisterMonitorFactory(Monitor::kInput, input::MakeInputMonitor);
  if (idle::MakeIdleMonitor) hook::RegisterMonitorFactory(Monitor::kIdle, idle::MakeIdleMonitor);
  if (barrier::MakeBarrierMonitor) hook::RegisterMonitorFactory(Monitor::kBarrier, barrier::MakeBarrierMonitor);
  if (looper::MakeLooperMonitor) hook::RegisterMonitorFactory(Monitor::kLooper, looper::MakeLooperMonitor);
}

}  // namespace
}  // namespace jp
