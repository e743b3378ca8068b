// The finished ring on its own: order and content through push and drain, a full ring refusing (never
// overwriting), and the lending contract under a concurrent producer and drain: an item pushed before a
// reader's Pending call is in what Pending returned or in what the drain had appended by the time the
// reader looks at its "timeline" afterwards, and no lent copy is torn.
#include "input/finished_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace jp::input {
namespace {

// Item i: every field derived from i, so a copy mixing two items (torn) is recognisable.
FinishedEvent Item(uint64_t i) {
  PendingEvent p{};  // all zero, padding too: the ident words compare whole
  p.fd = static_cast<int32_t>(100 + i % 7);
  p.seq = static_cast<uint32_t>(i * 3 + 1);
  p.tid = static_cast<uint32_t>(5000 + i % 11);
  p.type = i % 2 ? EventType::kMotion : EventType::kKey;
  p.fd_mode = i % 5 == 0;
  p.action_index = static_cast<int8_t>(i % 13);
  return FinishedEvent{1000 + i, 10 * i + 1, static_cast<int64_t>(i) - 7, static_cast<int64_t>(2 * i),
                       IdentWordsOf(p)};
}

bool IsItem(const FinishedEvent& e, uint64_t* index) {
  if (e.read_ns < 1000) return false;
  const uint64_t i = e.read_ns - 1000;
  const FinishedEvent want = Item(i);
  const EventIdentView a = IdentViewOf(e.ident), b = IdentViewOf(want.ident);
  *index = i;
  return e.dur_ns == want.dur_ns && e.event_time_ns == want.event_time_ns &&
         e.consume_time_ns == want.consume_time_ns && a.fd == b.fd && a.seq == b.seq && a.tid == b.tid &&
         a.type == b.type && a.fd_mode == b.fd_mode && a.action_index == b.action_index;
}

TEST(FinishedRingTest, DrainGivesEveryPushedItemOnceInOrderWithEveryField) {
  FinishedRing ring;
  FinishedRing::Producer p;  // the producer's words, kept beside the ring by its user
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(ring.Push(p, Item(i)));
  std::vector<uint64_t> got;
  EXPECT_EQ(ring.Drain(p, [&](const FinishedEvent& e) {
              uint64_t i;
              ASSERT_TRUE(IsItem(e, &i));
              got.push_back(i);
            }),
            10u);
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(ring.Drain(p, [](const FinishedEvent&) { FAIL() << "drained twice"; }), 0u);
  // The view reads the ident block back field by field (the layout PendingEvent and the view share).
  const EventIdentView v = IdentViewOf(Item(5).ident);
  EXPECT_EQ(v.fd, 105);
  EXPECT_EQ(v.seq, 16u);
  EXPECT_EQ(v.tid, 5005u);
  EXPECT_EQ(v.type, EventType::kMotion);
  EXPECT_EQ(v.fd_mode, 1);
  EXPECT_EQ(v.action_index, 5);
}

TEST(FinishedRingTest, AFullRingRefusesAndKeepsWhatItHolds) {
  FinishedRing ring;
  FinishedRing::Producer p;  // the producer's words, kept beside the ring by its user
  for (uint64_t i = 0; i < FinishedRing::kSlots; ++i) ASSERT_TRUE(ring.Push(p, Item(i))) << i;
  EXPECT_FALSE(ring.Push(p, Item(999)));
  EXPECT_FALSE(ring.Push(p, Item(998)));
  std::vector<FinishedEvent> lent;
  ring.Pending(p, &lent);
  ASSERT_EQ(lent.size(), FinishedRing::kSlots);
  for (uint64_t i = 0; i < lent.size(); ++i) {
    uint64_t k;
    ASSERT_TRUE(IsItem(lent[i], &k));
    EXPECT_EQ(k, i);  // nothing was overwritten by the refused pushes
  }
  EXPECT_EQ(ring.Drain(p, [](const FinishedEvent&) {}), FinishedRing::kSlots);
  // Room again, and the indexes wrap around.
  for (uint64_t i = 0; i < FinishedRing::kSlots; ++i) ASSERT_TRUE(ring.Push(p, Item(200 + i)));
  uint64_t next = 200;
  ring.Drain(p, [&](const FinishedEvent& e) {
    uint64_t k;
    ASSERT_TRUE(IsItem(e, &k));
    EXPECT_EQ(k, next++);
  });
  EXPECT_EQ(next, 200 + FinishedRing::kSlots);
}

TEST(FinishedRingTest, PendingListsExactlyWhatIsNotDrained) {
  FinishedRing ring;
  FinishedRing::Producer p;  // the producer's words, kept beside the ring by its user
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(ring.Push(p, Item(i)));
  ring.Drain(p, [](const FinishedEvent&) {});
  for (uint64_t i = 5; i < 8; ++i) ASSERT_TRUE(ring.Push(p, Item(i)));
  std::vector<FinishedEvent> lent;
  ring.Pending(p, &lent);
  ASSERT_EQ(lent.size(), 3u);
  for (size_t j = 0; j < lent.size(); ++j) {
    uint64_t k;
    ASSERT_TRUE(IsItem(lent[j], &k));
    EXPECT_EQ(k, 5 + j);
  }
  EXPECT_EQ(FinishedRing::pushed(p) - ring.drained(), 3u);
}

// The producer pushes items 0..N-1 (retrying while full), a drainer drains into a mutex-guarded
// "timeline", and a reader does what a report does: Pending first, the timeline second. Every item the
// producer had pushed before the reader's Pending call must be in one of the two; every lent copy must be
// a whole item.
TEST(FinishedRingTest, ConcurrentReaderFindsEveryPushedItemInTheRingOrTheTimeline) {
  constexpr uint64_t kItems = 200000;
  FinishedRing ring;
  FinishedRing::Producer p;  // the producer's words, kept beside the ring by its user
  std::atomic<uint64_t> pushed{0};
  std::atomic<bool> done{false};
  std::mutex timeline_mu;
  std::vector<uint64_t> timeline;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kItems; ++i) {
      while (!ring.Push(p, Item(i))) std::this_thread::yield();
      pushed.store(i + 1, std::memory_order_release);
    }
  });
  // The drainer and the reader give the CPU away when they have nothing to do or after each check: spinning
  // on a loaded 2-core host starved the producer, and the test took 3-30 s (60 s timeouts at load ~20).
  std::thread drainer([&] {
    while (!done.load()) {
      const uint64_t drained = ring.Drain(p, [&](const FinishedEvent& e) {
        uint64_t k;
        ASSERT_TRUE(IsItem(e, &k));
        std::lock_guard<std::mutex> lock(timeline_mu);
        timeline.push_back(k);
      });
      if (drained == 0) std::this_thread::yield();
    }
  });
  uint64_t checks = 0, torn = 0, missing = 0;
  std::vector<FinishedEvent> lent;
  while (pushed.load(std::memory_order_acquire) < kItems) {
    const uint64_t before = pushed.load(std::memory_order_acquire);
    lent.clear();
    ring.Pending(p, &lent);
    std::set<uint64_t> seen;
    for (const FinishedEvent& e : lent) {
      uint64_t k;
      if (IsItem(e, &k)) {
        seen.insert(k);
      } else {
        ++torn;
      }
    }
    {
      std::lock_guard<std::mutex> lock(timeline_mu);
      // Only the recent ones: everything older was drained long ago (checked at the end).
      for (auto it = timeline.rbegin(); it != timeline.rend() && *it + 2 * FinishedRing::kSlots >= before; ++it) {
        seen.insert(*it);
      }
    }
    for (uint64_t i = before > 2 * FinishedRing::kSlots ? before - FinishedRing::kSlots : 0; i < before; ++i) {
      if (!seen.count(i)) ++missing;
    }
    ++checks;
    std::this_thread::yield();
  }
  producer.join();
  while (FinishedRing::pushed(p) != ring.drained()) std::this_thread::yield();
  done = true;
  drainer.join();
  EXPECT_GT(checks, 0u);
  EXPECT_EQ(torn, 0u);
  EXPECT_EQ(missing, 0u);
  ASSERT_EQ(timeline.size(), kItems);
  for (uint64_t i = 0; i < kItems; ++i) ASSERT_EQ(timeline[i], i);
}

}  // namespace
}  // namespace jp::input
