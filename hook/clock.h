// Clock helpers shared by the timeline and the watchdog. Both read CLOCK_MONOTONIC so that event times,
// deadlines and durations live on one axis that never jumps (wall time can be set by the user or NTP).
// clock_gettime is on POSIX's async-signal-safe list and is a vDSO call on Linux/Android, so these helpers
// are fine on hot paths and inside signal handlers.
#ifndef JANKPROBE_HOOK_CLOCK_H_
#define JANKPROBE_HOOK_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace jp::hook {

constexpr uint64_t kNsPerMs = 1000000ull;
constexpr uint64_t kNsPerSec = 1000000000ull;

inline uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}

// Event timestamps and watchdog deadlines.
inline uint64_t MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }

// Only used to place a previous run's monotonic times on the calendar (the file header stores both).
inline uint64_t RealtimeNs() { return ClockNs(CLOCK_REALTIME); }

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_CLOCK_H_
