// plt::PrevCache, the previous target the input proxies and the looper's poll source cache per call site
// (plt/prev_cache.h): filled once per install, never by a lookup that started before the install's Clear,
// and never a call site paired with another one's target, also with fills and clears racing.
#include "plt/prev_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace jp::plt {
namespace {

// Stand-ins for return addresses and targets: never dereferenced.
const void* Ra(uintptr_t i) { return reinterpret_cast<const void*>(0x10000 + 0x100 * i); }
void* Target(uintptr_t i) { return reinterpret_cast<void*>(0x900000 + 0x100 * i); }

TEST(PrevCache, FilledOnceForTheFirstCallSiteUntilClear) {
  PrevCache c;
  EXPECT_FALSE(c.Holds(Ra(1)));
  c.Fill(c.generation(), Ra(1), Target(1));
  ASSERT_TRUE(c.Holds(Ra(1)));
  EXPECT_EQ(c.target(), Target(1));
  c.Fill(c.generation(), Ra(2), Target(2));  // a second call site asks the engine every time
  EXPECT_FALSE(c.Holds(Ra(2)));
  ASSERT_TRUE(c.Holds(Ra(1)));
  EXPECT_EQ(c.target(), Target(1));
  c.Clear();
  EXPECT_FALSE(c.Holds(Ra(1)));
  c.Fill(c.generation(), Ra(2), Target(2));
  ASSERT_TRUE(c.Holds(Ra(2)));
  EXPECT_EQ(c.target(), Target(2));
}

TEST(PrevCache, ALookupFromBeforeAClearNeverFillsIt) {
  PrevCache c;
  const uint32_t before = c.generation();  // a lookup starts, asks the engine...
  c.Clear();                               // ...an install clears meanwhile
  c.Fill(before, Ra(1), Target(1));
  EXPECT_FALSE(c.Holds(Ra(1))) << "the previous install's answer landed in the cache";
  // The refused fill left the cache empty: the next lookup fills it.
  c.Fill(c.generation(), Ra(1), Target(3));
  ASSERT_TRUE(c.Holds(Ra(1)));
  EXPECT_EQ(c.target(), Target(3));
}

TEST(PrevCache, WithoutAHandleTheEngineVariableAnswersAndNothingIsCached) {
  PrevCache c;
  jp_plt_hook* handle = nullptr;
  void* prev = Target(7);
  EXPECT_EQ(c.Lookup(&handle, &prev, Ra(1)), Target(7));
  EXPECT_EQ(PrevCache::Ask(&handle, &prev, Ra(1)), Target(7));
  EXPECT_FALSE(c.Holds(Ra(1))) << "prev_var is the first module's target, not this call site's";
}

// Fillers for call sites 1..3 (each always with its own target) and a clearing thread race; readers take a
// (call site, target) pair when the site held before and after the target was read and no Clear came
// between their two generation reads. Every such pair must be one a filler wrote together. (A Clear that
// did not wait for a claim could pair them wrongly too, through a one-instruction window this rarely
// hits: a mutant without that wait survived this test.)
TEST(PrevCache, RacingFillsAndClearsNeverPairACallSiteWithAnothersTarget) {
  if (std::getenv("JP_TEST_NO_THREADS")) GTEST_SKIP() << "no threads under this emulator (qemu-i386 hangs in pthread_create)";
  PrevCache c;
  std::atomic<bool> stop{false};
  std::atomic<long> checked{0}, mixed{0}, clears{0};
  std::vector<std::thread> threads;
  for (uintptr_t site = 1; site <= 3; ++site) {
    threads.emplace_back([&, site] {
      while (!stop.load(std::memory_order_relaxed)) {
        const uint32_t before = c.generation();
        c.Fill(before, Ra(site), Target(site));
        for (uintptr_t s = 1; s <= 3; ++s) {
          const uint32_t g0 = c.generation();
          if (!c.Holds(Ra(s))) continue;
          void* const t = c.target();
          if (!c.Holds(Ra(s)) || c.generation() != g0) continue;
          checked.fetch_add(1, std::memory_order_relaxed);
          if (t != Target(s)) mixed.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      c.Clear();
      clears.fetch_add(1, std::memory_order_relaxed);
    }
  });
  timespec ts{1, 0};
  nanosleep(&ts, nullptr);
  stop = true;
  for (std::thread& t : threads) t.join();
  std::printf("%ld pairs read, %ld clears\n", checked.load(), clears.load());
  EXPECT_EQ(mixed.load(), 0) << "of " << checked.load() << " pairs read, " << clears.load() << " clears";
  EXPECT_GT(checked.load(), 0);
  EXPECT_GT(clears.load(), 0);
}

}  // namespace
}  // namespace jp::plt
