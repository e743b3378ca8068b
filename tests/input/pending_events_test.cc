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
  const int a = t->Claim(/*owner=*/true, 5, 1);
  const int b = t->Claim(/*owner=*/false, 5, 2);
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
    const int index = t->Claim(true, 3, static_cast<uint32_t>(i + 1));
    ASSERT_GE(index, 0) << i;
    EXPECT_EQ(index >= PendingEvents::kOwnerSlots, i >= PendingEvents::kOwnerSlots) << i;
    Fill(t.get(), index, 3, static_cast<uint32_t>(i + 1));
  }
  EXPECT_EQ(t->Claim(true, 3, 999), -1);
  EXPECT_EQ(t->Claim(false, 3, 999), -1);
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    const int index = t->Take(true, 3, static_cast<uint32_t>(i + 1));
    ASSERT_GE(index, 0) << i;
    t->Free(index);
  }
  EXPECT_EQ(t->Occupied(), 0);
}

TEST(PendingEvents, MarksBelongToOneOccupant) {
  auto t = std::make_unique<PendingEvents>();
  const int i = t->Claim(true, 7, 1);
  Fill(t.get(), i, 7, 1);
  const uint32_t first = t->Word(i);
  EXPECT_EQ(t->Marks(i, first), 0u);
  t->SetMarks(i, first, kLagFired | kStackCaptured);
  EXPECT_EQ(t->Marks(i, first), kLagFired | kStackCaptured);
  ASSERT_EQ(t->Take(true, 7, 1), i);
  t->Free(i);
  // The next occupant of the same slot starts unmarked, and a late mark for the old one stays invisible.
  ASSERT_EQ(t->Claim(true, 7, 1), i);
  Fill(t.get(), i, 7, 1);
  const uint32_t second = t->Word(i);
  EXPECT_NE(GenerationOf(second), GenerationOf(first));
  EXPECT_EQ(t->Marks(i, second), 0u);
  t->SetMarks(i, first, kAnrReported);
  EXPECT_EQ(t->Marks(i, second), 0u);
}

TEST(PendingEvents, OneChannelsEventsReuseTheirSlotsAndAreTakenInAnyOrder) {
  // The owner's probe starts from the fd and the seq's low bits: one event in flight at a time cycles
  // through the channel's kLanes slots (lines hot across the syscalls), and several in flight on one fd
  // are still each found by their seq.
  auto t = std::make_unique<PendingEvents>();
  std::vector<int> lanes;
  for (uint32_t seq = 1; seq < 50; ++seq) {
    const int index = t->Claim(true, 11, seq);
    EXPECT_EQ(index, PendingEvents::OwnerFirstProbe(11, seq)) << seq;
    if (std::find(lanes.begin(), lanes.end(), index) == lanes.end()) lanes.push_back(index);
    Fill(t.get(), index, 11, seq);
    ASSERT_EQ(t->Take(true, 11, seq), index) << seq;
    t->Free(index);
  }
  EXPECT_EQ(lanes.size(), PendingEvents::kLanes) << "a channel keeps to its lanes";
  int slots[5];
  for (uint32_t i = 0; i < 5; ++i) {
    slots[i] = t->Claim(true, 11, 100 + i);
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

// Up to kLanes events of one channel in flight with consecutive seqs (a batch of MOVEs read for one
// frame): each is claimed at its first probe, whatever is in flight beside it, and so is found there by
// its FINISHED in any order of finishing. Checked for every batch size 1..kLanes, every order of
// finishing, and a stream of overlapping batches (the next read before the last finish).
TEST(PendingEvents, EventsInFlightOnAChannelSitAtTheirFirstProbeInAnyFinishOrder) {
  auto t = std::make_unique<PendingEvents>();
  const int fd = 23;
  uint32_t next = 0xfffffff0u;  // across the seq's wrap too (seq 0 is skipped, as the dispatcher does)
  auto next_seq = [&] {
    if (++next == 0) ++next;
    return next;
  };
  for (uint32_t batch = 1; batch <= PendingEvents::kLanes; ++batch) {
    std::vector<uint32_t> order(batch);
    for (uint32_t i = 0; i < batch; ++i) order[i] = i;
    do {
      std::vector<uint32_t> seqs;
      std::vector<int> index;
      for (uint32_t i = 0; i < batch; ++i) {
        const uint32_t seq = next_seq();
        seqs.push_back(seq);
        index.push_back(t->Claim(true, fd, seq));
        ASSERT_EQ(index.back(), PendingEvents::OwnerFirstProbe(fd, seq)) << "batch " << batch << " event " << i;
        Fill(t.get(), index.back(), fd, seq);
      }
      for (const uint32_t i : order) {
        // The first probe holds it: Take's inline look (what the tracker's fast path checks) finds it.
        const PendingEvent& first = t->at(PendingEvents::OwnerFirstProbe(fd, seqs[i]));
        EXPECT_EQ(StateOf(first.word.load()), kPending);
        EXPECT_EQ(first.seq, seqs[i]);
        ASSERT_EQ(t->Take(true, fd, seqs[i]), index[i]);
        t->Free(index[i]);
      }
    } while (std::next_permutation(order.begin(), order.end()));
  }
  // Overlapping batches: two in flight, the next read between two finishes, in order.
  uint32_t oldest = next_seq(), newest = oldest;
  ASSERT_EQ(t->Claim(true, fd, oldest), PendingEvents::OwnerFirstProbe(fd, oldest));
  Fill(t.get(), PendingEvents::OwnerFirstProbe(fd, oldest), fd, oldest);
  for (int round = 0; round < 40; ++round) {
    newest = next_seq();
    ASSERT_EQ(t->Claim(true, fd, newest), PendingEvents::OwnerFirstProbe(fd, newest)) << round;
    Fill(t.get(), PendingEvents::OwnerFirstProbe(fd, newest), fd, newest);
    ASSERT_EQ(t->Take(true, fd, oldest), PendingEvents::OwnerFirstProbe(fd, oldest)) << round;
    t->Free(PendingEvents::OwnerFirstProbe(fd, oldest));
    oldest = newest;
  }
  t->Free(t->Take(true, fd, oldest));
  EXPECT_EQ(t->Occupied(), 0);
}

// Every other seq (a second window gets the same stream, and the dispatcher numbers events across its
// channels): two in flight still sit at their first probes; two channels whose fds are neighbours keep
// apart.
TEST(PendingEvents, EverySecondSeqAndNeighbourChannelsKeepTheirFirstProbes) {
  auto t = std::make_unique<PendingEvents>();
  for (uint32_t seq = 2; seq < 200; seq += 4) {
    for (const int fd : {40, 41}) {
      const int a = t->Claim(true, fd, seq), b = t->Claim(true, fd, seq + 2);
      ASSERT_EQ(a, PendingEvents::OwnerFirstProbe(fd, seq));
      ASSERT_EQ(b, PendingEvents::OwnerFirstProbe(fd, seq + 2));
      Fill(t.get(), a, fd, seq);
      Fill(t.get(), b, fd, seq + 2);
    }
    for (const int fd : {41, 40}) {
      ASSERT_EQ(t->Take(true, fd, seq + 2), PendingEvents::OwnerFirstProbe(fd, seq + 2));
      ASSERT_EQ(t->Take(true, fd, seq), PendingEvents::OwnerFirstProbe(fd, seq));
      t->Free(PendingEvents::OwnerFirstProbe(fd, seq));
      t->Free(PendingEvents::OwnerFirstProbe(fd, seq + 2));
    }
  }
  EXPECT_EQ(t->Occupied(), 0);
}

TEST(PendingEvents, FdModeReadsAreFoundByFdOnly) {
  auto t = std::make_unique<PendingEvents>();
  const int i = t->Claim(false, 9, 0);
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
      const int index = t->Claim(owner, fd, seq);
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
  static_assert(PendingEvents::kLanes == 8, "fd 4, seq 13 is slot 37");
  const int fd = 4;  // with seq 13: owner slot 37 (4 * kLanes + 13 % kLanes), the second page
  const int a = t->Claim(/*owner=*/true, fd, 13);
  ASSERT_EQ(a, 37);
  ASSERT_EQ(a, PendingEvents::OwnerFirstProbe(fd, 13));
  Fill(t, a, fd, 13);
  const std::vector<int> after = Resident(mem, size);
  const size_t slot_page = (reinterpret_cast<uintptr_t>(&t->at(a)) - reinterpret_cast<uintptr_t>(mem)) / page;
  EXPECT_EQ(after[slot_page], 1);
  EXPECT_EQ(Count(after), 1) << "only the claimed slot's page";
  EXPECT_EQ(t->Occupied(), 1);  // every other slot reads free: zero is the free state
  const int taken = t->Take(/*owner=*/true, fd, 13);
  EXPECT_EQ(taken, a);
  t->Free(taken);
  EXPECT_EQ(t->Occupied(), 0);
  // A slot freed once and claimed again gets the next generation (the zero state is generation 0).
  const int again = t->Claim(/*owner=*/true, fd, 13);
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
