// Calls through a slot from several threads while another thread installs and removes hooks on it:
// nothing crashes and no call is lost or doubled. Ground truth: the real function counts its calls.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "jankprobe/plt.h"
#include "tests/fixtures/hook/callers.h"
#include "tests/fixtures/hook/target.h"
#include "tests/plt/hook_test_support.h"

namespace jp::test {
namespace {

TEST(Stress, CallsDuringInstallAndRemoveReachTheTargetExactlyOnce) {
  if (ThreadsUnavailable()) GTEST_SKIP() << "no threads under this emulator (qemu-i386 hangs in pthread_create)";
  using A = AddHook<1>;
  using B = AddHook<2>;
  const int kCallers = std::max(2u, std::min(4u, std::thread::hardware_concurrency()));
  const long kCallsPerThread = 1000000;
  const long kMinCycles = 50;  // callers keep calling until the churn has done at least this many
  std::atomic<long> cycles{0};
  std::atomic<bool> churn_done{false};  // also set when the churn stops on a failed assertion
  std::vector<long> calls_made(kCallers, 0);
  std::atomic<bool> go{false};
  std::atomic<int> finished{0};
  unsigned long target_before = jp_target_calls();
  unsigned long proxy_before = A::calls + B::calls + A::passed_through + B::passed_through;
  // A long-lived hook elsewhere, as a plugin has: without one, removing the last of A and B also takes
  // the engine's dlopen monitor out every cycle, and re-installing it would dominate the churn.
  using Keeper = AddHook<3>;
  jp_plt_hook* keeper = Keeper::Install("libjp_hook_never_loaded.so");
  ASSERT_NE(keeper, nullptr) << jp_plt_last_error();

  std::vector<std::thread> callers;
  std::atomic<long> wrong_results{0};
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      while (!go.load()) {
      }
      long i = 0;
      for (; i < kCallsPerThread || (cycles.load(std::memory_order_relaxed) < kMinCycles && !churn_done.load()); ++i) {
        // Alternate between a full-RELRO JUMP_SLOT and a GLOB_DAT slot.
        int r = (i & 1) ? full_call_add(t, static_cast<int>(i & 0xff)) : noplt_call_add(t, static_cast<int>(i & 0xff));
        if (r != t + static_cast<int>(i & 0xff)) wrong_results.fetch_add(1);
      }
      calls_made[t] = i;
      finished.fetch_add(1);
    });
  }
  auto churn_cycles = [&] {
    // Keep going until every caller is done, so the whole call window overlaps the churn.
    while (finished.load() < kCallers) {
      jp_plt_hook* a = A::Install("libjp_hook_full.so");
      jp_plt_hook* a2 = A::Install("libjp_hook_noplt.so");
      jp_plt_hook* b = B::Install(nullptr);  // stacks on A in both modules
      ASSERT_TRUE(a && a2 && b) << jp_plt_last_error();
      // Alternate removal order: splicing A out from under B, and plain LIFO.
      if (cycles.load() & 1) {
        ASSERT_EQ(jp_plt_hook_remove(a), JP_PLT_OK) << jp_plt_last_error();
        ASSERT_EQ(jp_plt_hook_remove(a2), JP_PLT_OK) << jp_plt_last_error();
        ASSERT_EQ(jp_plt_hook_remove(b), JP_PLT_OK) << jp_plt_last_error();
      } else {
        ASSERT_EQ(jp_plt_hook_remove(b), JP_PLT_OK) << jp_plt_last_error();
        ASSERT_EQ(jp_plt_hook_remove(a2), JP_PLT_OK) << jp_plt_last_error();
        ASSERT_EQ(jp_plt_hook_remove(a), JP_PLT_OK) << jp_plt_last_error();
      }
      cycles.fetch_add(1);
    }
  };
  std::thread churn([&] {
    go.store(true);
    churn_cycles();
    churn_done.store(true);
  });
  for (auto& t : callers) t.join();
  churn.join();

  unsigned long total = 0;
  for (long n : calls_made) total += static_cast<unsigned long>(n);
  EXPECT_EQ(wrong_results.load(), 0);
  EXPECT_EQ(jp_target_calls() - target_before, total);  // every call arrived, exactly once
  unsigned long proxied = A::calls + B::calls + A::passed_through + B::passed_through - proxy_before;
  EXPECT_GE(cycles.load(), kMinCycles);
  EXPECT_GT(proxied, 0u);  // the churn really overlapped the calls
  // Each call passes at most through A and B once each.
  EXPECT_LE(proxied, 2 * total);
  EXPECT_EQ(jp_plt_hook_remove(keeper), JP_PLT_OK);
  RecordProperty("install_remove_cycles", static_cast<int>(cycles.load()));
  RecordProperty("proxied_calls", static_cast<int>(proxied));
}

}  // namespace
}  // namespace jp::test
