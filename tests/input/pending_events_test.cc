// The pending table on its own: the owner's part and the shared part, takes by (fd, seq), the watchdog's
// marks bound to one occupant, an owner and a second thread claiming and taking at the same time, and a
// table constructed on zeroed pages (the input tracker's) that leaves them untouched until a slot is used.
#include "input/pending_events.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <utility>
#include <vector>

namespace jp::input {
namespace {

void Fill(PendingEvents* t, int index, int fd, uint32_t seq) {
  PendingEvent& e = t->at(index);
  e.fd = fd;
  e.seq = seq;
  e.fd_mode = false;
  t->Publish(index);
}

TEST(PendingEvents, OwnerClaimsInItsPartOthersInTheSharedPart) {
  auto t = std::make_unique<PendingEvents>();
  const int a = t->Claim(/*owner=*/true, 5);
  const int b = t->Claim(/*owner=*/false, 5);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  EXPECT_LT(a, PendingEvents::kOwnerSlots);
  EXPECT_GE(b, PendingEvents::kOwnerSlots);
  Fill(t.get(), a, 5, 1);
  Fill(t.get(), b, 5, 2);
  EXPECT_EQ(t->Occupied(), 2);
  // Either side may take either event (a FINISHED sent from another thread than the read).
  EXPECT_EQ(t->Take(/*owner=*/false, 5, 1), a);
  EXPECT_EQ(t->Take(/*owner=*/true, 5, 2), b);
  EXPECT_EQ(t->Take(true, 5, 1), -1) << "taken twice";
  EXPECT_EQ(t->Take(true, 6, 2), -1) << "wrong fd";
  t->Free(a);
  t->Free(b);
  EXPECT_EQ(t->Occupied(), 0);
}

TEST(PendingEvents, OwnerSpillsIntoTheSharedPartThenTheTableIsFull) {
  auto t = std::make_unique<PendingEvents>();
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    const int index = t->Claim(true, 3);
    ASSERT_GE(index, 0) << i;
    EXPECT_EQ(index >= PendingEvents::kOwnerSlots, i >= PendingEvents::kOwnerSlots) << i;
    Fill(t.get(), index, 3, static_cast<uint32_t>(i + 1));
  }
  EXPECT_EQ(t->Claim(true, 3), -1);
  EXPECT_EQ(t->Claim(false, 3), -1);
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    const int index = t->Take(true, 3, static_cast<uint32_t>(i + 1));
    ASSERT_GE(index, 0) << i;
    t->Free(index);
  }
  EXPECT_EQ(t->Occupied(), 0);
}

TEST(PendingEvents, MarksBelongToOneOccupant) {
  auto t = std::make_unique<PendingEvents>();
  const int i = t->Claim(true, 7);
  Fill(t.get(), i, 7, 1);
  const uint32_t first = t->Word(i);
  EXPECT_EQ(t->Marks(i, first), 0u);
  t->SetMarks(i, first, kLagFired | kStackCaptured);
  EXPECT_EQ(t->Marks(i, first), kLagFired | kStackCaptured);
  ASSERT_EQ(t->Take(true, 7, 1), i);
  t->Free(i);
  // The next occupant of the same slot starts unmarked, and a late mark for the old one stays invisible.
  ASSERT_EQ(t->Claim(true, 7), i);
  Fill(t.get(), i, 7, 1);
  const uint32_t second = t->Word(i);
  EXPECT_NE(GenerationOf(second), GenerationOf(first));
  EXPECT_EQ(t->Marks(i, second), 0u);
  t->SetMarks(i, first, kAnrReported);
  EXPECT_EQ(t->Marks(i, second), 0u);
}

TEST(PendingEvents, OneChannelsEventsReuseTheirSlotsAndAreTakenInAnyOrder) {
  // The owner's probe starts from the fd alone: one event in flight at a time keeps one slot (one line hot
  // across the syscalls), and several in flight on one fd are still each found by their seq.
  auto t = std::make_unique<PendingEvents>();
  const int first = t->Claim(true, 11);
  ASSERT_GE(first, 0);
  Fill(t.get(), first, 11, 1);
  ASSERT_EQ(t->Take(true, 11, 1), first);
  t->Free(first);
  for (uint32_t seq = 2; seq < 50; ++seq) {
    const int index = t->Claim(true, 11);
    EXPECT_EQ(index, first) << seq;
    Fill(t.get(), index, 11, seq);
    ASSERT_EQ(t->Take(true, 11, seq), index) << seq;
    t->Free(index);
  }
  int slots[5];
  for (uint32_t i = 0; i < 5; ++i) {
    slots[i] = t->Claim(true, 11);
    ASSERT_GE(slots[i], 0);
    Fill(t.get(), slots[i], 11, 100 + i);
  }
  EXPECT_EQ(t->Take(true, 11, 999), -1);
  for (const uint32_t i : {3u, 0u, 4u, 1u, 2u}) {
    const int index = t->Take(true, 11, 100 + i);
    EXPECT_EQ(index, slots[i]) << i;
    if (index >= 0) t->Free(index);
  }
  EXPECT_EQ(t->Occupied(), 0);
}

// A channel's events in flight (a batch of MOVEs read for one frame, finished after it) fill its region
// from the start, whatever their seqs, and stay in it while at most kRegion are in flight: the input
// tracker's owner paths find them there by an inline probe. Checked for every batch size 1..kRegion,
// every order of finishing, a stream of overlapping batches (the next read before the last finish), and
// neighbouring fds (their regions apart).
TEST(PendingEvents, EventsInFlightFillTheirChannelsRegionInAnyFinishOrder) {
  auto t = std::make_unique<PendingEvents>();
  const int fd = 23;
  uint32_t seq = 1;
  auto in_region = [&](int index) {
    for (int k = 0; k < PendingEvents::kRegion; ++k) {
      if (index == PendingEvents::OwnerProbe(fd, k)) return true;
    }
    return false;
  };
  for (int batch = 1; batch <= PendingEvents::kRegion; ++batch) {
    std::vector<int> order(static_cast<size_t>(batch));
    for (int i = 0; i < batch; ++i) order[static_cast<size_t>(i)] = i;
    do {
      std::vector<uint32_t> seqs;
      std::vector<int> index;
      for (int i = 0; i < batch; ++i) {
        seqs.push_back(seq += 3);  // any seqs: the region does not depend on them
        index.push_back(t->Claim(true, fd));
        ASSERT_EQ(index.back(), PendingEvents::OwnerProbe(fd, i)) << "batch " << batch << " event " << i;
        Fill(t.get(), index.back(), fd, seqs.back());
      }
      for (const int i : order) {
        ASSERT_EQ(t->Take(true, fd, seqs[static_cast<size_t>(i)]), index[static_cast<size_t>(i)]);
        t->Free(index[static_cast<size_t>(i)]);
      }
    } while (std::next_permutation(order.begin(), order.end()));
  }
  // Overlapping batches of up to kRegion in flight, finished oldest first, the next read in between.
  std::vector<std::pair<uint32_t, int>> in_flight;
  for (int round = 0; round < 200; ++round) {
    const int want = 1 + round % PendingEvents::kRegion;
    while (static_cast<int>(in_flight.size()) < want) {
      const int index = t->Claim(true, fd);
      ASSERT_TRUE(in_region(index)) << round;
      Fill(t.get(), index, fd, ++seq);
      in_flight.emplace_back(seq, index);
    }
    ASSERT_EQ(t->Take(true, fd, in_flight.front().first), in_flight.front().second) << round;
    t->Free(in_flight.front().second);
    in_flight.erase(in_flight.begin());
  }
  for (const auto& [s, index] : in_flight) {
    ASSERT_EQ(t->Take(true, fd, s), index);
    t->Free(index);
  }
  EXPECT_EQ(t->Occupied(), 0);
  // Neighbouring fds: regions of their own.
  for (int k = 0; k < PendingEvents::kRegion; ++k) {
    for (int j = 0; j < PendingEvents::kRegion; ++j) {
      EXPECT_NE(PendingEvents::OwnerProbe(40, k), PendingEvents::OwnerProbe(41, j));
    }
  }
}

TEST(PendingEvents, FdModeReadsAreFoundByFdOnly) {
  auto t = std::make_unique<PendingEvents>();
  const int i = t->Claim(false, 9);
  t->at(i).fd = 9;
  t->at(i).fd_mode = true;
  t->Publish(i);
  EXPECT_TRUE(t->HasFdMode(9));
  EXPECT_FALSE(t->HasFdMode(8));
  EXPECT_EQ(t->Take(true, 9, 0), -1) << "an fd-timed read is not an (fd, seq) event";
  EXPECT_EQ(t->TakeFdMode(true, 9), i);
  EXPECT_FALSE(t->HasFdMode(9));
}

TEST(PendingEvents, OwnerAndAnotherThreadAtOnceLoseAndDuplicateNothing) {
  auto t = std::make_unique<PendingEvents>();
  constexpr uint32_t kEvents = 200000;
  std::atomic<int> failures{0};
  auto run = [&](bool owner, int fd) {
    // Keep a few events in flight per thread, as a channel with batched moves does.
    for (uint32_t seq = 1; seq <= kEvents; ++seq) {
      const int index = t->Claim(owner, fd);
      if (index < 0) {
        ++failures;
        return;
      }
      Fill(t.get(), index, fd, seq);
      if (seq > 3) {
        const int taken = t->Take(owner, fd, seq - 3);
        if (taken < 0 || t->at(taken).seq != seq - 3 || t->at(taken).fd != fd) ++failures;
        if (taken >= 0) t->Free(taken);
      }
    }
    for (uint32_t seq = kEvents - 2; seq <= kEvents; ++seq) {
      const int taken = t->Take(owner, fd, seq);
      if (taken < 0) ++failures;
      if (taken >= 0) t->Free(taken);
    }
  };
  std::thread other(run, false, 20);
  run(true, 10);
  other.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(t->Occupied(), 0);
}

// Pages of [p, p + size) resident now (mincore), as a 0/1 vector.
std::vector<int> Resident(const void* p, size_t size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((size + page - 1) / page);
  if (mincore(const_cast<void*>(p), size, vec.data()) != 0) return {};
  std::vector<int> out;
  for (unsigned char v : vec) out.push_back(v & 1);
  return out;
}

int Count(const std::vector<int>& v) {
  int n = 0;
  for (int x : v) n += x;
  return n;
}

TEST(PendingEvents, OnZeroedPagesConstructionTouchesNothingAndASlotTouchesItsPage) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = (sizeof(PendingEvents) + page - 1) / page * page;
  ASSERT_GE(size, 4 * page) << "128 slots of 128 bytes";
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(Count(Resident(mem, size)), 0);
  auto* t = new (mem) PendingEvents(PendingEvents::OnZeroedMemory{});
  EXPECT_EQ(Count(Resident(mem, size)), 0) << "the constructor wrote to the table";
  // The first use of a slot makes its page resident, and only it. (Reading a page first, as Occupied()
  // does, maps the kernel's shared zero page, which mincore counts but RSS does not: checked after.)
  const int fd = 37;  // owner slot 40 (37 * kRegion, modulo 64): the second page
  const int a = t->Claim(/*owner=*/true, fd);
  ASSERT_EQ(a, PendingEvents::OwnerFirstProbe(fd));
  Fill(t, a, fd, 9);
  const std::vector<int> after = Resident(mem, size);
  const size_t slot_page = (reinterpret_cast<uintptr_t>(&t->at(a)) - reinterpret_cast<uintptr_t>(mem)) / page;
  EXPECT_EQ(after[slot_page], 1);
  EXPECT_EQ(Count(after), 1) << "only the claimed slot's page";
  EXPECT_EQ(t->Occupied(), 1);  // every other slot reads free: zero is the free state
  const int taken = t->Take(/*owner=*/true, fd, 9);
  EXPECT_EQ(taken, a);
  t->Free(taken);
  EXPECT_EQ(t->Occupied(), 0);
  // A slot freed once and claimed again gets the next generation (the zero state is generation 0).
  const int again = t->Claim(/*owner=*/true, fd);
  ASSERT_EQ(again, a);
  EXPECT_EQ(GenerationOf(t->Word(again)), 1u);
  t->~PendingEvents();
  munmap(mem, size);
}

TEST(PendingEvents, DefaultConstructedTableIsFreeOnDirtyMemory) {
  // The ordinary constructor must not rely on zeroed memory: placed over bytes that are all 0xff, every
  // slot still reads free.
  alignas(PendingEvents) static unsigned char storage[sizeof(PendingEvents)];
  std::memset(storage, 0xff, sizeof storage);
  auto* t = new (storage) PendingEvents();
  EXPECT_EQ(t->Occupied(), 0);
  for (int i = 0; i < PendingEvents::kSlots; ++i) EXPECT_EQ(t->Word(i), 0u) << i;
  t->~PendingEvents();
}

}  // namespace
}  // namespace jp::input
