// Where the input tracker lives: the proxies reach it at a link-time address (InputTracker::Instance,
// PC-relative, no load), so it must be the instance Get() constructs, in the module's zero-initialised data
// and not on the heap, aligned so that the gate's owner line and line A are one 128-byte pair; and its
// construction must leave the pending table's and the finished ring's slots untouched (zero pages that
// become resident only when an event uses them, as the anonymous mapping it had before did).
//
// Its own binary: a process in which no other test has enabled the tracker or pushed an event yet.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "input/input_tracker.h"

namespace jp::input {
namespace {

// Whether each page of [p, p + size) is mapped in this process's page table now (/proc/self/pagemap's
// "present" bit, readable without privileges): a page of .bss nobody wrote or read is not. One entry per
// page, 1 or 0; empty if pagemap cannot be read.
std::vector<int> PresentPages(const void* p, size_t size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(p) + size - 1) / page;
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<int> out;
  for (uintptr_t v = first; v <= last; ++v) {
    uint64_t entry = 0;
    if (pread(fd, &entry, sizeof entry, static_cast<off_t>(v * sizeof entry)) != sizeof entry) {
      close(fd);
      return {};
    }
    out.push_back(static_cast<int>(entry >> 63));
  }
  close(fd);
  return out;
}

TEST(InputTrackerStorage, ConstructionLeavesTheTablesPagesUntouched) {
  // Before Get(): the storage is .bss nobody touched (this binary has no other test). Pages whose every
  // byte belongs to the tracker's pending table or ring slots stay out after construction: of the
  // storage's ~7 pages, the 16 KiB table covers at least 3 whole ones and the 8 KiB of ring slots 1.
  const void* storage = internal::g_tracker_storage;  // not constructed yet
  const std::vector<int> before = PresentPages(storage, sizeof(InputTracker));
  if (before.empty()) GTEST_SKIP() << "/proc/self/pagemap is not readable here";
  InputTracker& t = InputTracker::Get();
  ASSERT_EQ(&t, storage);
  const std::vector<int> after = PresentPages(storage, sizeof(InputTracker));
  ASSERT_EQ(after.size(), before.size());
  int present = 0;
  for (int p : after) present += p;
  const int pages = static_cast<int>(after.size());
  ASSERT_GE(pages, 7) << "the tracker is smaller than expected: pending table 16 KiB + ring 8 KiB";
  EXPECT_LE(present, pages - 4) << "constructing the tracker wrote (or read) its tables' pages: " << present
                                << " of " << pages << " pages present";
  // The counters read every part the constructor wrote, none of the tables (Occupied reads the slots'
  // words: after it the table's pages are mapped, as the kernel's zero page).
  EXPECT_EQ(t.counters().events_read, 0u);
}

TEST(InputTrackerStorage, InstanceIsGetsObjectInTheModulesDataAlignedForThePair) {
  InputTracker& t = InputTracker::Get();
  EXPECT_EQ(&InputTracker::Instance(), &t);
  EXPECT_EQ(&InputTracker::Get(), &t) << "one instance for the life of the process";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&t) % 128, 0u) << "the gate's owner line and line A: one 128-byte pair";
  static_assert(alignof(InputTracker) == 128, "checked in Get() as well");
  // In a loaded object's image (its .bss), not on the heap: dladdr finds the object an address belongs to.
  Dl_info info{};
  ASSERT_NE(dladdr(&t, &info), 0) << "the tracker is not inside any loaded object";
  EXPECT_NE(info.dli_fbase, nullptr);
  void* heap = std::malloc(64);
  Dl_info heap_info{};
  EXPECT_EQ(dladdr(heap, &heap_info), 0) << "dladdr cannot tell the heap from an object here";
  std::free(heap);
}

}  // namespace
}  // namespace jp::input
