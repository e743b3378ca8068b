// Gives back the stack pages that Java frames left resident on the native threads we run and attach: the
// watchdog and the report delivery thread.
//
// HotSpot touches a whole shadow zone below sp (20 pages on x86_64) at every Java call it makes on a thread,
// interpreted or compiled, and attaching a thread runs Java (Thread's constructor): an attached native
// thread keeps ~88 KiB of stack resident although its own native work needs a few KiB. The watchdog attaches
// once and its steady state makes no Java call (the barrier check reads fields only), so after a Java
// episode its loop gives those pages back once, at its shallowest point; the next Java episode (a lag's
// stack, a barrier removal, the frame ticker's resume) touches them again and is followed by one more
// release (each site that calls Java on the watchdog says so with NoteJavaFramesRan). Pages more than a
// red zone below sp hold no live data (a signal frame written there later is written after the release),
// so a page given back is simply a zero page at its next touch.
#ifndef JANKPROBE_HOOK_JNI_JAVA_STACK_RELEASE_H_
#define JANKPROBE_HOOK_JNI_JAVA_STACK_RELEASE_H_

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace jp::jni {

// Set on the calling thread by whatever ran Java frames on it: AttachedEnv when it attached the thread,
// and the watchdog-side code that calls Java methods. __thread: no dynamic initialiser, so no TLS wrapper
// function (an out-of-line call) around the access.
extern __thread bool t_java_frames_ran __attribute__((visibility("hidden")));
inline void NoteJavaFramesRan() { t_java_frames_ran = true; }

// How much of the stack below the caller's frame is kept: the native depth the watchdog's callbacks reach
// below its loop (a few KiB) with room to spare, so the release does not just move faults into them.
constexpr size_t kStackKeptBelowCaller = 16 * 1024;
// Never looked at: the lowest part of the stack, where a VM puts its own protected zones (HotSpot's
// reserved/yellow/red pages, ART's overflow region), above the thread library's guard page.
constexpr size_t kStackBottomUntouched = 64 * 1024;

struct StackReleaseCounts {
  uint64_t releases = 0;        // calls that looked (after Java ran)
  uint64_t released_bytes = 0;  // resident bytes given back, over all calls
  uint64_t failures = 0;        // calls that gave up; last_error says why
  const char* last_error = "";  // static text
};

// Everything below is inline (always_inline where it runs on a thread's loop): a function of its own would
// land in plain .text, outside the ordered steady text (lib/startup_order.ld), and the first release would
// fault a 64 KiB text window in to give back 64 KiB of stack. Inlined, the code sits in Watchdog::Loop and
// in the report delivery, both in the steady text.
namespace internal {
struct StackReleaseState {
  std::atomic<uint64_t> releases{0};
  std::atomic<uint64_t> released_bytes{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<const char*> last_error{""};
};
extern StackReleaseState g_stack_release __attribute__((visibility("hidden")));

__attribute__((always_inline)) inline long StackReleaseFail(const char* why) {
  g_stack_release.last_error.store(why, std::memory_order_relaxed);
  g_stack_release.failures.fetch_add(1, std::memory_order_relaxed);
  return -1;
}

// madvise(MADV_DONTNEED) of every run of resident pages in [lo, hi), both page-aligned; mincore in chunks
// of a small on-stack vector (this runs just below the frame whose caller keeps the rest).
__attribute__((always_inline)) inline long ReleaseResidentRuns(uintptr_t lo, uintptr_t hi, uintptr_t page,
                                                               const char** why) {
  constexpr uintptr_t kChunkPages = 256;
  unsigned char resident[kChunkPages];
  long released = 0;
  uintptr_t run_start = 0;  // 0: not in a run
  for (uintptr_t chunk = lo; chunk < hi; chunk += kChunkPages * page) {
    const uintptr_t pages = (hi - chunk) / page < kChunkPages ? (hi - chunk) / page : kChunkPages;
    if (mincore(reinterpret_cast<void*>(chunk), pages * page, resident) != 0) {
      *why = "mincore of the stack failed";
      return -1;
    }
    // One step past the chunk's last page closes a run that reaches hi.
    for (uintptr_t i = 0; i <= pages; ++i) {
      const uintptr_t at = chunk + i * page;
      const bool in = i < pages && (resident[i] & 1);
      if (in && run_start == 0) run_start = at;
      if (in || run_start == 0 || (i == pages && at < hi)) continue;
      if (madvise(reinterpret_cast<void*>(run_start), at - run_start, MADV_DONTNEED) != 0) {
        *why = "madvise(MADV_DONTNEED) of the stack failed";
        return -1;
      }
      released += static_cast<long>(at - run_start);
      run_start = 0;
    }
  }
  return released;
}
}  // namespace internal

inline StackReleaseCounts StackReleaseCountsNow() {
  const internal::StackReleaseState& g = internal::g_stack_release;
  StackReleaseCounts c;
  c.releases = g.releases.load(std::memory_order_relaxed);
  c.released_bytes = g.released_bytes.load(std::memory_order_relaxed);
  c.failures = g.failures.load(std::memory_order_relaxed);
  c.last_error = g.last_error.load(std::memory_order_relaxed);
  return c;
}

// Gives back the resident pages of the calling thread's stack that lie below the frame it is inlined into
// minus kStackKeptBelowCaller and above the stack's bottom plus its guard and kStackBottomUntouched: only
// pages mincore reports resident, in runs (a page the VM protected was never touched, so it is never
// included), with madvise(MADV_DONTNEED). Clears t_java_frames_ran. Returns the bytes given back, or -1
// (the reason in StackReleaseCountsNow().last_error). Runs once per Java episode.
__attribute__((always_inline)) inline long ReleaseStackBelowCaller() {
  internal::StackReleaseState& g = internal::g_stack_release;
  t_java_frames_ran = false;
  g.releases.fetch_add(1, std::memory_order_relaxed);
  const long page_l = sysconf(_SC_PAGESIZE);
  if (page_l <= 0) return internal::StackReleaseFail("sysconf(_SC_PAGESIZE) failed");
  const auto page = static_cast<uintptr_t>(page_l);
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return internal::StackReleaseFail("pthread_getattr_np failed");
  void* stack_lo = nullptr;
  size_t stack_size = 0;
  size_t guard = 0;
  const bool got = pthread_attr_getstack(&attr, &stack_lo, &stack_size) == 0 &&
                   pthread_attr_getguardsize(&attr, &guard) == 0;
  pthread_attr_destroy(&attr);
  if (!got || !stack_lo || stack_size == 0) return internal::StackReleaseFail("the thread's stack bounds are unknown");
  const auto base = reinterpret_cast<uintptr_t>(stack_lo);
  const auto frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (frame <= base || frame > base + stack_size) return internal::StackReleaseFail("the frame is not on the thread's stack");
  // The stack grows down on every ABI we build for: keep [hi, frame) and everything above it.
  if (frame - base < kStackKeptBelowCaller + guard + kStackBottomUntouched + page) return 0;
  const uintptr_t hi = (frame - kStackKeptBelowCaller) & ~(page - 1);
  const uintptr_t lo = (base + guard + kStackBottomUntouched + page - 1) & ~(page - 1);
  if (hi <= lo) return 0;
  const char* why = "";
  const long released = internal::ReleaseResidentRuns(lo, hi, page, &why);
  if (released < 0) return internal::StackReleaseFail(why);
  g.released_bytes.fetch_add(static_cast<uint64_t>(released), std::memory_order_relaxed);
  return released;
}

// For the thread's loop, at its shallowest point: one TLS load in the usual case.
__attribute__((always_inline)) inline void ReleaseStackIfJavaRan() {
  if (__builtin_expect(t_java_frames_ran, false)) ReleaseStackBelowCaller();
}

}  // namespace jp::jni

#endif  // JANKPROBE_HOOK_JNI_JAVA_STACK_RELEASE_H_
