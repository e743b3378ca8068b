// InFlightGate and the AsymmetricFence under it: Drain() returns only once nobody who saw the tracker
// enabled is inside, for the owner thread (plain stores + membarrier) and for other threads (counter).
#include "hook/in_flight_gate.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "hook/jni/jni_refs.h"

namespace jp::hook {
namespace {

uint32_t Tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

void SleepMs(int ms) {
  timespec ts{0, ms * 1000000L};
  nanosleep(&ts, nullptr);
}

TEST(AsymmetricFence, UsesMembarrierWhereTheKernelHasIt) {
  AsymmetricFence fence;
  std::string why;
  const bool expedited = fence.Init(&why);
  EXPECT_EQ(expedited, fence.expedited());
  if (!expedited) {
    EXPECT_FALSE(why.empty()) << "a fallback must say why";
    GTEST_SKIP() << why;
  }
  fence.Heavy();  // must not switch it off
  EXPECT_TRUE(fence.expedited());
}

TEST(InFlightGate, OwnerIsProposedOnceAndNestingIsNotExclusive) {
  AsymmetricFence fence;
  fence.Init(nullptr);
  InFlightGate gate(&fence);
  std::atomic<bool> enabled{true};
  gate.ProposeOwner(Tid());
  gate.ProposeOwner(Tid() + 1);  // too late: the owner never changes
  const InFlightGate::Pass outer = gate.Enter(Tid(), enabled);
  EXPECT_TRUE(outer.owner);
  EXPECT_TRUE(outer.open);
  EXPECT_TRUE(outer.exclusive());
  const InFlightGate::Pass inner = gate.Enter(Tid(), enabled);
  EXPECT_TRUE(inner.owner);
  EXPECT_FALSE(inner.exclusive());
  gate.Leave(inner);
  gate.Leave(outer);
  const InFlightGate::Pass other = gate.Enter(Tid() + 1, enabled);
  EXPECT_FALSE(other.owner);
  EXPECT_FALSE(other.exclusive());
  gate.Leave(other);
  enabled = false;
  gate.Drain();
  const InFlightGate::Pass closed = gate.Enter(Tid(), enabled);
  EXPECT_FALSE(closed.open);
  gate.Leave(closed);
}

// EnterOwnerOutermost: the owner's way in when it does not know whether it is already inside. Nested (a
// signal handler on the owner inside) it does nothing and says -1, and the nested pass then goes through
// Enter, which must find the outer entry's depth; outermost it says whether the gate is open, and every
// pass leaves the depth as it found it (a -1 that counted itself in, or a closed pass that did not count
// itself out, would make the next outermost entry answer -1).
TEST(InFlightGate, OutermostOwnerEntryRefusesWhenNestedAndSaysWhetherOpen) {
  AsymmetricFence fence;
  fence.Init(nullptr);
  InFlightGate gate(&fence);
  std::atomic<bool> enabled{true};
  gate.ProposeOwner(Tid());
  ASSERT_EQ(gate.EnterOwnerOutermost(enabled), 1);
  EXPECT_EQ(gate.EnterOwnerOutermost(enabled), -1) << "nested inside the owner's pass";
  EXPECT_EQ(gate.EnterOwnerOutermost(enabled), -1) << "a refused entry must not have counted itself in";
  const InFlightGate::Pass nested = gate.Enter(Tid(), enabled);
  EXPECT_TRUE(nested.owner);
  EXPECT_TRUE(nested.nested) << "the outermost entry did not mark the owner inside";
  EXPECT_FALSE(nested.exclusive());
  gate.Leave(nested);
  EXPECT_EQ(gate.EnterOwnerOutermost(enabled), -1) << "the nested pass's leave must restore the outer depth";
  gate.LeaveOwner();
  EXPECT_EQ(gate.EnterOwnerOutermost(enabled), 1) << "depth not back to 0 after the outer pass left";
  gate.LeaveOwner();
  enabled.store(false, std::memory_order_seq_cst);
  EXPECT_EQ(gate.EnterOwnerOutermost(enabled), 0) << "closed gate";
  EXPECT_EQ(gate.EnterOwnerOutermost(enabled), -1) << "a closed pass is inside too until LeaveOwner";
  gate.LeaveOwner();
  ASSERT_EQ(gate.EnterOwnerOutermost(enabled), 0) << "depth not back to 0 after the closed pass left";
  gate.LeaveOwner();
  gate.Drain();  // returns: nobody inside
}

// How a caller gets in: the gate's Enter by tid, or the owner's EnterOwnerOutermost.
enum class Way { kEnter, kOutermost };

// Drain must wait for a caller that is inside: `left` is set just before its Leave.
void ExpectDrainWaitsFor(bool as_owner, Way way = Way::kEnter) {
  AsymmetricFence fence;
  fence.Init(nullptr);
  InFlightGate gate(&fence);
  std::atomic<bool> enabled{true}, inside{false}, draining{false}, left{false};
  const uint32_t owner = Tid();
  gate.ProposeOwner(owner);
  std::thread caller([&] {
    InFlightGate::Pass p{};
    if (way == Way::kOutermost) {
      EXPECT_EQ(gate.EnterOwnerOutermost(enabled), 1);
    } else {
      p = gate.Enter(as_owner ? owner : Tid(), enabled);
      EXPECT_EQ(p.owner, as_owner);
      EXPECT_TRUE(p.open);
    }
    inside = true;
    while (!draining) std::this_thread::yield();
    SleepMs(30);  // Drain is running now; it must still be waiting when we leave
    left = true;
    if (way == Way::kOutermost) {
      gate.LeaveOwner();
    } else {
      gate.Leave(p);
    }
  });
  while (!inside) std::this_thread::yield();
  enabled.store(false, std::memory_order_seq_cst);
  draining = true;
  gate.Drain();
  EXPECT_TRUE(left.load()) << "Drain returned while a caller was inside";
  caller.join();
}

TEST(InFlightGate, DrainWaitsForTheOwnerInside) {
  // The owner here is the caller thread: the test thread proposes its own tid, the caller enters with it.
  ExpectDrainWaitsFor(true);
}

TEST(InFlightGate, DrainWaitsForAnotherThreadInside) { ExpectDrainWaitsFor(false); }

TEST(InFlightGate, DrainWaitsForTheOwnerInsideByItsOutermostEntry) { ExpectDrainWaitsFor(true, Way::kOutermost); }

// The Dekker property under traffic: the owner touches `resource` only when the gate is open, the
// disabling thread takes it away right after Drain. A missed store-load ordering would show as a null.
void ExpectNoOwnerPassOpenAfterDrainUnderTraffic(Way way) {
  AsymmetricFence fence;
  fence.Init(nullptr);
  InFlightGate gate(&fence);
  std::atomic<bool> enabled{true}, stop{false};
  int value = 42;
  std::atomic<int*> resource{&value};
  std::atomic<uint32_t> owner_tid{0};
  std::atomic<long> opened{0}, bad{0};
  std::thread owner([&] {
    owner_tid = Tid();
    gate.ProposeOwner(Tid());
    while (!stop.load(std::memory_order_relaxed)) {
      InFlightGate::Pass p{};
      bool open;
      if (way == Way::kOutermost) {
        const int in = gate.EnterOwnerOutermost(enabled);
        if (in < 0) {
          ++bad;  // never nested here
          continue;
        }
        open = in == 1;
      } else {
        p = gate.Enter(Tid(), enabled);
        open = p.open;
      }
      if (open) {
        int* r = resource.load(std::memory_order_relaxed);
        if (r == nullptr || *r != 42) ++bad;
        ++opened;
      }
      if (way == Way::kOutermost) {
        gate.LeaveOwner();
      } else {
        gate.Leave(p);
      }
    }
  });
  while (owner_tid == 0) std::this_thread::yield();
  for (int round = 0; round < 300; ++round) {
    enabled.store(false, std::memory_order_seq_cst);
    gate.Drain();
    resource.store(nullptr, std::memory_order_relaxed);
    std::this_thread::yield();
    resource.store(&value, std::memory_order_relaxed);
    enabled.store(true, std::memory_order_seq_cst);
    std::this_thread::yield();
  }
  stop = true;
  owner.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(opened.load(), 0);
}

// A gate built without an outside fence keeps its fence and its own `enabled` flag in the owner's line
// (the poll source's: one miss per entry after a wait instead of three). The fence there must be the one
// Drain uses, and it must sit in the gate's last line, the owner's.
TEST(InFlightGate, OwnFenceSitsInTheOwnersLine) {
  static InFlightGate gate;  // static: as the poll source's, constant-initialised
  const uintptr_t fence = reinterpret_cast<uintptr_t>(&gate.fence());
  const uintptr_t begin = reinterpret_cast<uintptr_t>(&gate);
  const uintptr_t last_line = (begin + sizeof(gate) - 1) / 64;
  EXPECT_GE(fence, begin);
  EXPECT_EQ(fence / 64, last_line) << "the fence is not in the owner's line";
  EXPECT_EQ((fence + sizeof(AsymmetricFence) - 1) / 64, last_line) << "the fence straddles the owner's line";
  std::string why;
  const bool expedited = gate.fence().Init(&why);
  EXPECT_EQ(expedited, gate.fence().expedited());
  EXPECT_EQ(expedited, why.empty()) << why;
  AsymmetricFence outside;
  InFlightGate with_outside(&outside);
  EXPECT_EQ(&with_outside.fence(), &outside);
}

// The owner-only gate is one line: its depth, fence and flag, then the caller's words. The poll source's
// (jni::g_main_gap) keeps the idle words there, so that Java's direct buffer over them (24 bytes:
// running_since at byte 0, gap_start at 16) and the gate's entry after a wait share one line; the poll
// source's own per-gap words and clock copy fill the line after it, the other half of the same 128-byte
// pair.
TEST(OwnerOnlyGate, IsOneLineEndingWithTheCallersWords) {
  struct Three {
    std::atomic<uint64_t> a{0}, b{0}, c{0};
  };
  static OwnerOnlyGate<Three> gate;  // static: as the poll source's, constant-initialised
  const uintptr_t line = reinterpret_cast<uintptr_t>(&gate) / 64;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&gate.owner_words()) / 64, line);
  EXPECT_EQ((reinterpret_cast<uintptr_t>(&gate.owner_words().c) + 7) / 64, line);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&gate.fence()) / 64, line);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&gate.own_flag()) / 64, line);

  jni::MainGapBlock& block = jni::g_main_gap;
  const uintptr_t idle = reinterpret_cast<uintptr_t>(&jni::IdleSharedWords());
  EXPECT_EQ(idle, reinterpret_cast<uintptr_t>(&block.gate.owner_words()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&jni::IdleSharedWords().gap_start), idle + 16);
  EXPECT_EQ(idle / 64, reinterpret_cast<uintptr_t>(&block.gate.own_flag()) / 64);
  EXPECT_EQ((idle + sizeof(jni::IdleWords) - 1) / 64, idle / 64);
  EXPECT_EQ(idle / 128, reinterpret_cast<uintptr_t>(&block.poll_words[0]) / 128) << "not one 128-byte pair";
  EXPECT_EQ(idle / 128, reinterpret_cast<uintptr_t>(&block.poll_clock.limit) / 128) << "not one 128-byte pair";
}

// The Dekker property of a gate with its own fence and flag (Open/Close, EnterOwner()), under traffic: an
// owner thread touches `resource` only when the gate is open, the closing thread takes it away right after
// Drain, 300 times. Leaves the gate open, the owner joined.
template <typename Gate>
void ExpectNoPassOpenAfterCloseAndDrain(Gate& gate) {
  gate.fence().Init(nullptr);
  gate.Open();
  std::atomic<bool> stop{false}, started{false};
  int value = 42;
  std::atomic<int*> resource{&value};
  std::atomic<long> opened{0}, bad{0};
  std::thread owner([&] {
    started = true;
    while (!stop.load(std::memory_order_relaxed)) {
      if (gate.EnterOwner()) {
        int* r = resource.load(std::memory_order_relaxed);
        if (r == nullptr || *r != 42) ++bad;
        ++opened;
      }
      gate.LeaveOwner();
    }
  });
  while (!started) std::this_thread::yield();
  for (int round = 0; round < 300; ++round) {
    gate.Close();
    gate.Drain();
    resource.store(nullptr, std::memory_order_relaxed);
    std::this_thread::yield();
    resource.store(&value, std::memory_order_relaxed);
    gate.Open();
    std::this_thread::yield();
  }
  stop = true;
  owner.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(opened.load(), 0);
}

// InFlightGate's Dekker property for the owner-only gate; then closed means closed, nested too.
TEST(OwnerOnlyGate, NoPassIsOpenAfterCloseAndDrainUnderTraffic) {
  struct Words {
    std::atomic<uint64_t> w{0};
  };
  static OwnerOnlyGate<Words> gate;
  ExpectNoPassOpenAfterCloseAndDrain(gate);
  gate.Close();
  gate.Drain();
  EXPECT_FALSE(gate.EnterOwner());
  EXPECT_FALSE(gate.EnterOwner()) << "nested";
  gate.LeaveOwner();
  gate.LeaveOwner();
  gate.Open();
  EXPECT_TRUE(gate.EnterOwner());
  gate.LeaveOwner();
}

// The same for InFlightGate with its own fence and flag; then closed means closed, the outermost entry too.
TEST(InFlightGate, OwnFlagPassIsNeverOpenAfterCloseAndDrainUnderTraffic) {
  InFlightGate gate;
  ExpectNoPassOpenAfterCloseAndDrain(gate);
  // The owner gone (joined), this thread may enter: closed means closed.
  gate.Close();
  gate.Drain();
  EXPECT_FALSE(gate.EnterOwner());
  gate.LeaveOwner();
  EXPECT_EQ(gate.EnterOwnerOutermost(), 0);
  EXPECT_EQ(gate.EnterOwnerOutermost(), -1) << "nested";
  gate.LeaveOwner();
  gate.Open();
  EXPECT_TRUE(gate.EnterOwner());
  gate.LeaveOwner();
  EXPECT_EQ(gate.EnterOwnerOutermost(), 1);
  gate.LeaveOwner();
}

TEST(InFlightGate, NoOwnerPassIsOpenAfterDrainUnderTraffic) {
  ExpectNoOwnerPassOpenAfterDrainUnderTraffic(Way::kEnter);
}

TEST(InFlightGate, NoOutermostOwnerPassIsOpenAfterDrainUnderTraffic) {
  ExpectNoOwnerPassOpenAfterDrainUnderTraffic(Way::kOutermost);
}

}  // namespace
}  // namespace jp::hook
