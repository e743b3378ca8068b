#include "hook/jni/java_stack_release.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace jp::jni {

__thread bool t_java_frames_ran = false;

namespace {

std::atomic<uint64_t> g_releases{0};
std::atomic<uint64_t> g_released_bytes{0};
std::atomic<uint64_t> g_failures{0};
std::atomic<const char*> g_last_error{""};

long Fail(const char* why) {
  g_last_error.store(why, std::memory_order_relaxed);
  g_failures.fetch_add(1, std::memory_order_relaxed);
  return -1;
}

// madvise(MADV_DONTNEED) of every run of resident pages in [lo, hi); both page-aligned. mincore in chunks
// of a small on-stack vector (this runs at the bottom of what we keep, so it must stay small itself).
long ReleaseResidentRuns(uintptr_t lo, uintptr_t hi, size_t page, const char** why) {
  constexpr size_t kChunkPages = 256;
  unsigned char resident[kChunkPages];
  long released = 0;
  uintptr_t run_start = 0;  // 0: not in a run
  auto end_run = [&](uintptr_t at) -> bool {
    if (run_start == 0) return true;
    if (madvise(reinterpret_cast<void*>(run_start), at - run_start, MADV_DONTNEED) != 0) {
      *why = "madvise(MADV_DONTNEED) of the stack failed";
      return false;
    }
    released += static_cast<long>(at - run_start);
    run_start = 0;
    return true;
  };
  for (uintptr_t chunk = lo; chunk < hi; chunk += kChunkPages * page) {
    const size_t pages = (hi - chunk) / page < kChunkPages ? (hi - chunk) / page : kChunkPages;
    if (mincore(reinterpret_cast<void*>(chunk), pages * page, resident) != 0) {
      *why = "mincore of the stack failed";
      return -1;
    }
    for (size_t i = 0; i < pages; ++i) {
      const uintptr_t at = chunk + i * page;
      if (resident[i] & 1) {
        if (run_start == 0) run_start = at;
      } else if (!end_run(at)) {
        return -1;
      }
    }
  }
  return end_run(hi) ? released : -1;
}

}  // namespace

StackReleaseCounts StackReleaseCountsNow() {
  StackReleaseCounts c;
  c.releases = g_releases.load(std::memory_order_relaxed);
  c.released_bytes = g_released_bytes.load(std::memory_order_relaxed);
  c.failures = g_failures.load(std::memory_order_relaxed);
  c.last_error = g_last_error.load(std::memory_order_relaxed);
  return c;
}

long ReleaseStackBelowCaller() {
  t_java_frames_ran = false;
  g_releases.fetch_add(1, std::memory_order_relaxed);
  const long page_l = sysconf(_SC_PAGESIZE);
  if (page_l <= 0) return Fail("sysconf(_SC_PAGESIZE) failed");
  const auto page = static_cast<uintptr_t>(page_l);
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return Fail("pthread_getattr_np failed");
  void* stack_lo = nullptr;
  size_t stack_size = 0;
  size_t guard = 0;
  const bool got = pthread_attr_getstack(&attr, &stack_lo, &stack_size) == 0 &&
                   pthread_attr_getguardsize(&attr, &guard) == 0;
  pthread_attr_destroy(&attr);
  if (!got || !stack_lo || stack_size == 0) return Fail("the thread's stack bounds are unknown");
  const auto base = reinterpret_cast<uintptr_t>(stack_lo);
  const auto frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (frame <= base || frame > base + stack_size) return Fail("the frame is not on the thread's stack");
  // The stack grows down on every ABI we build for: keep [hi, frame) and everything above it.
  if (frame - base < kStackKeptBelowCaller + guard + kStackBottomUntouched + page) return 0;
  const uintptr_t hi = (frame - kStackKeptBelowCaller) & ~(page - 1);
  const uintptr_t lo = (base + guard + kStackBottomUntouched + page - 1) & ~(page - 1);
  if (hi <= lo) return 0;
  const char* why = "";
  const long released = ReleaseResidentRuns(lo, hi, page, &why);
  if (released < 0) return Fail(why);
  g_released_bytes.fetch_add(static_cast<uint64_t>(released), std::memory_order_relaxed);
  return released;
}

}  // namespace jp::jni
