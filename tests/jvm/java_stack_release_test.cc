// hook/jni/java_stack_release: what a thread's deep calls left resident below its frame goes back once the
// thread says Java ran on it, only then, never the part its caller keeps, and never the stack's lowest part,
// where a VM keeps its protected zones (stood in for by pages made PROT_NONE after they were touched, so
// that they are resident and only the bound keeps them).
#include "hook/jni/java_stack_release.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace jp::jni {
namespace {

size_t Page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Resident bytes in [lo, hi) (page-aligned outward).
size_t ResidentBytes(uintptr_t lo, uintptr_t hi) {
  const size_t page = Page();
  lo &= ~(page - 1);
  hi = (hi + page - 1) & ~(page - 1);
  if (hi <= lo) return 0;
  std::vector<unsigned char> v((hi - lo) / page);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, v.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char r : v) n += (r & 1) ? page : 0;
  return n;
}

// Touches the stack down to `until` (frames of ~1 KiB), as HotSpot's shadow-zone banging does; returns the
// number of frames it took.
__attribute__((noinline)) int TouchDownTo(uintptr_t until) {
  volatile char buf[1024];
  memset(const_cast<char*>(buf), 0x5A, sizeof buf);
  if (reinterpret_cast<uintptr_t>(&buf[0]) <= until) return 1;
  return TouchDownTo(until) + (buf[7] == 0x5A ? 1 : 2);  // not a tail call: each frame stays until the bottom
}

struct StackBounds {
  uintptr_t lo = 0;  // lowest usable address (above the guard)
  uintptr_t hi = 0;
};

StackBounds ThisThreadStack() {
  StackBounds b;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return b;
  void* addr = nullptr;
  size_t size = 0, guard = 0;
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_getguardsize(&attr, &guard);
  pthread_attr_destroy(&attr);
  b.lo = reinterpret_cast<uintptr_t>(addr) + guard;
  b.hi = reinterpret_cast<uintptr_t>(addr) + size;
  return b;
}

// Runs fn on a thread with a stack of `stack_bytes`.
void OnThread(size_t stack_bytes, std::function<void()> fn) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t t;
  auto body = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&t, &attr, body, &fn), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(JavaStackReleaseTest, GivesBackWhatDeepCallsLeftOnlyAfterJavaRan) {
  OnThread(1 << 20, [] {
    volatile char kept[512];
    memset(const_cast<char*>(kept), 0x3C, sizeof kept);
    const auto frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    const uintptr_t deep = frame - 256 * 1024;
    TouchDownTo(deep);
    // The region the release must empty: below what it keeps (its own frame sits a little below ours).
    const uintptr_t lo = deep + 8 * 1024, hi = frame - kStackKeptBelowCaller - 8 * 1024;
    const size_t touched = ResidentBytes(lo, hi);
    EXPECT_GE(touched, (hi - lo) * 9 / 10) << "the deep call did not leave its pages resident";

    // No Java ran: nothing happens.
    t_java_frames_ran = false;
    ReleaseStackIfJavaRan();
    EXPECT_EQ(ResidentBytes(lo, hi), touched);

    const StackReleaseCounts before = StackReleaseCountsNow();
    NoteJavaFramesRan();
    ReleaseStackIfJavaRan();
    const StackReleaseCounts after = StackReleaseCountsNow();
    EXPECT_FALSE(t_java_frames_ran) << "the flag stays set: every loop would release again";
    EXPECT_EQ(after.releases, before.releases + 1);
    EXPECT_EQ(after.failures, before.failures) << after.last_error;
    EXPECT_EQ(ResidentBytes(lo, hi), 0u);
    EXPECT_GE(after.released_bytes - before.released_bytes, touched);
    // The caller's frame and what it keeps below are intact.
    for (size_t i = 0; i < sizeof kept; ++i) ASSERT_EQ(kept[i], 0x3C) << i;
    EXPECT_GT(ResidentBytes(frame - 4096, frame), 0u);

    // Given back means zero pages at the next touch, not a fault: the thread goes on using them.
    TouchDownTo(deep);
    EXPECT_GE(ResidentBytes(lo, hi), (hi - lo) * 9 / 10);
  });
}

TEST(JavaStackReleaseTest, NeverTheStacksLowestPartWhereAVmKeepsItsProtectedZones) {
  OnThread(512 * 1024, [] {
    const StackBounds b = ThisThreadStack();
    ASSERT_NE(b.lo, 0u);
    const size_t page = Page();
    // Touch down to two pages above the usable bottom, then protect 16 KiB above those as HotSpot does with
    // its reserved/yellow/red pages: resident, PROT_NONE.
    TouchDownTo(b.lo + 2 * page);
    const uintptr_t zone_lo = ((b.lo + page - 1) & ~(page - 1)) + 2 * page;
    const size_t zone = 16 * 1024;
    ASSERT_EQ(ResidentBytes(zone_lo, zone_lo + zone), zone);
    ASSERT_EQ(mprotect(reinterpret_cast<void*>(zone_lo), zone, PROT_NONE), 0);

    NoteJavaFramesRan();
    const long released = ReleaseStackBelowCaller();
    EXPECT_GT(released, 0) << StackReleaseCountsNow().last_error;
    EXPECT_EQ(ResidentBytes(zone_lo, zone_lo + zone), zone) << "the protected zone was given back";
    // Everything from the untouched bottom part up to what the caller keeps went back.
    const auto frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    EXPECT_EQ(ResidentBytes(zone_lo + kStackBottomUntouched + page, frame - kStackKeptBelowCaller - 8 * 1024), 0u);
    ASSERT_EQ(mprotect(reinterpret_cast<void*>(zone_lo), zone, PROT_READ | PROT_WRITE), 0);
  });
}

}  // namespace
}  // namespace jp::jni
