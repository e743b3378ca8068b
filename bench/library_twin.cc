// Entry points of libjankprobe_twin.so, the shipped library linked a second time, the same way
// (cmake/shipped_link.cmake: the same objects, order file, scripts and segments), plus this file. A
// benchmark that wants our code and data where an app has them (which text and data pages a wake touches)
// drives the looper's poll source through these instead of linking the parts into its own executable,
// where they lie as that link puts them. Never shipped: the real library has no such entry points.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "bench/poll_world.h"
#include "looper/dispatch_timing.h"

namespace {

jp::bench::PollWorld* g_world = nullptr;

void SetWhy(const std::string& why, char* out, size_t cap) {
  if (out == nullptr || cap == 0) return;
  const size_t n = why.size() < cap - 1 ? why.size() : cap - 1;
  memcpy(out, why.data(), n);
  out[n] = '\0';
}

}  // namespace

#define JPB_EXPORT extern "C" __attribute__((visibility("default")))

// Starts the poll source on `module`'s epoll imports, with `main_thread` (a pthread_t) as the main thread.
// The first call builds the plugin side (bench/poll_world.h) and must come from that thread. 0 on success,
// -1 with the reason in why[cap].
JPB_EXPORT int jpb_poll_start(const char* module, uintptr_t main_thread, char* why, size_t cap) {
  std::string error;
  if (g_world == nullptr) {
    auto* w = new jp::bench::PollWorld;
    if (!w->Start(&error)) {
      SetWhy(error, why, cap);
      return -1;  // w leaks: its watchdog may have started, and a half-built world is never reused
    }
    g_world = w;
  }
  if (!jp::looper::StartPollSource(module, main_thread, g_world->ctx.main_tid, &error)) {
    SetWhy(error, why, cap);
    return -1;
  }
  return 0;
}

// The finished gaps drained (the watchdog's work, done here), then the source stopped: hooks out.
JPB_EXPORT void jpb_poll_stop(void) {
  jp::looper::DrainPollSource();
  jp::looper::StopPollSource();
}

// Sampling check chains the main thread started so far (status' looper.poll_check_arms).
JPB_EXPORT uint64_t jpb_poll_check_arms(void) { return jp::looper::TimingCounters().poll_check_arms; }
