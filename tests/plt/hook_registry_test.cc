// Chains: another tool before us, another tool after us, different previous targets per module, and
// several jankprobe hooks on one slot removed in every order.
#include <algorithm>
#include <array>
#include <string>

#include <gtest/gtest.h>

#include "jankprobe/plt.h"
#include "tests/fixtures/hook/callers.h"
#include "tests/fixtures/hook/target.h"
#include "tests/plt/hook_test_support.h"

namespace jp::test {
namespace {

void* AsPtr(int (*fn)(int, int)) { return reinterpret_cast<void*>(fn); }

TEST(ForeignTools, PatchedBeforeUsBecomesOurPrev) {
  using Hook = AddHook<1>;
  foreign_prev = RealTargetAdd();
  ASSERT_GE(ForeignPatch("libjp_hook_full.so", RealTargetAdd(), AsPtr(&ForeignProxy)), 1u);
  jp_plt_hook* hook = Hook::Install("libjp_hook_full.so");
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_EQ(Hook::prev, AsPtr(&ForeignProxy));
  unsigned long ours = Hook::calls, theirs = foreign_calls, target = jp_target_calls();
  EXPECT_EQ(full_call_add(1, 2), 3);
  EXPECT_EQ(Hook::calls - ours, 1u);
  EXPECT_EQ(foreign_calls - theirs, 1u);
  EXPECT_EQ(jp_target_calls() - target, 1u);

  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK) << jp_plt_last_error();
  EXPECT_EQ(full_call_add(1, 2), 3);  // the other tool's hook survives our removal
  EXPECT_EQ(Hook::calls - ours, 1u);
  EXPECT_EQ(foreign_calls - theirs, 2u);
  EXPECT_EQ(jp_target_calls() - target, 2u);
  ASSERT_GE(ForeignPatch("libjp_hook_full.so", AsPtr(&ForeignProxy), RealTargetAdd()), 1u);
}

TEST(ForeignTools, PatchedAfterUsKeepsWorkingAndLeavesUsInactive) {
  using Hook = AddHook<2>;
  jp_plt_hook* hook = Hook::Install("libjp_hook_full.so");
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  foreign_prev = AsPtr(&Hook::Proxy);
  ASSERT_GE(ForeignPatch("libjp_hook_full.so", AsPtr(&Hook::Proxy), AsPtr(&ForeignProxy)), 1u);

  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_REMOVED_STILL_CHAINED);
  EXPECT_NE(std::string(jp_plt_last_error()).find("another tool"), std::string::npos) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_is_active(hook), 0);
  unsigned long ours = Hook::calls, through = Hook::passed_through, theirs = foreign_calls, target = jp_target_calls();
  EXPECT_EQ(full_call_add(2, 2), 4);
  EXPECT_EQ(foreign_calls - theirs, 1u);
  EXPECT_EQ(Hook::calls - ours, 0u);             // inactive: no longer counts...
  EXPECT_EQ(Hook::passed_through - through, 1u);  // ...but passes the call on
  EXPECT_EQ(jp_target_calls() - target, 1u);

  // Re-installing while still chained re-activates without patching in front of the other tool again.
  EXPECT_EQ(Hook::Install("libjp_hook_full.so"), hook);
  EXPECT_EQ(jp_plt_hook_is_active(hook), 1);
  EXPECT_EQ(full_call_add(2, 2), 4);
  EXPECT_EQ(Hook::calls - ours, 1u);
  EXPECT_EQ(foreign_calls - theirs, 2u);
  EXPECT_EQ(jp_target_calls() - target, 2u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_REMOVED_STILL_CHAINED);

  // The other tool goes away and puts our proxy back; now a remove restores the real target.
  ASSERT_GE(ForeignPatch("libjp_hook_full.so", AsPtr(&ForeignProxy), AsPtr(&Hook::Proxy)), 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_ERR_UNKNOWN_HOOK);
  ours = Hook::calls;
  through = Hook::passed_through;
  EXPECT_EQ(full_call_add(2, 2), 4);
  EXPECT_EQ(Hook::calls - ours, 0u);
  EXPECT_EQ(Hook::passed_through - through, 0u);
  EXPECT_EQ(jp_target_calls() - target, 3u);
}

TEST(PerModulePrev, EachModuleReachesItsOwnPrevious) {
  using Hook = AddHook<3>;
  EXPECT_EQ(partial_call_add(0, 0), 0);  // resolve the lazy slot so the foreign tool can find it
  foreign_prev = RealTargetAdd();
  ASSERT_GE(ForeignPatch("libjp_hook_partial.so", RealTargetAdd(), AsPtr(&ForeignProxy)), 1u);
  jp_plt_hook* hook = Hook::Install(nullptr);
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_prev_for(hook, AsPtr(&partial_call_add)), AsPtr(&ForeignProxy));
  EXPECT_EQ(jp_plt_hook_prev_for(hook, AsPtr(&full_call_add)), RealTargetAdd());
  EXPECT_EQ(jp_plt_hook_prev_for(hook, AsPtr(&noplt_call_add)), RealTargetAdd());

  unsigned long ours = Hook::calls, theirs = foreign_calls, target = jp_target_calls();
  EXPECT_EQ(full_call_add(5, 5), 10);
  EXPECT_EQ(Hook::calls - ours, 1u);
  EXPECT_EQ(foreign_calls - theirs, 0u);
  EXPECT_EQ(partial_call_add(5, 5), 10);
  EXPECT_EQ(Hook::calls - ours, 2u);
  EXPECT_EQ(foreign_calls - theirs, 1u);
  EXPECT_EQ(jp_target_calls() - target, 2u);

  // Toggling keeps the same handle and the same answers.
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
    ASSERT_EQ(Hook::Install(nullptr), hook);
  }
  EXPECT_EQ(jp_plt_hook_prev_for(hook, AsPtr(&partial_call_add)), AsPtr(&ForeignProxy));
  EXPECT_EQ(jp_plt_hook_prev_for(hook, AsPtr(&full_call_add)), RealTargetAdd());

  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
  EXPECT_EQ(partial_call_add(1, 1), 2);
  EXPECT_EQ(foreign_calls - theirs, 2u);
  EXPECT_EQ(Hook::calls - ours, 2u);
  ASSERT_GE(ForeignPatch("libjp_hook_partial.so", AsPtr(&ForeignProxy), RealTargetAdd()), 1u);
}

// Three jankprobe hooks stacked on one slot, removed in each of the 6 orders. After every removal one
// call must reach exactly the hooks still installed, each once, and the real function once.
TEST(Stacked, RemovedInEveryOrder) {
  using H0 = AddHook<10>;
  using H1 = AddHook<11>;
  using H2 = AddHook<12>;
  std::array<int, 3> order = {0, 1, 2};
  do {
    jp_plt_hook* hooks[3] = {H0::Install("libjp_hook_full.so"), H1::Install("libjp_hook_full.so"),
                             H2::Install("libjp_hook_full.so")};
    for (jp_plt_hook* h : hooks) ASSERT_NE(h, nullptr) << jp_plt_last_error();
    EXPECT_EQ(H1::prev, AsPtr(&H0::Proxy));
    EXPECT_EQ(H2::prev, AsPtr(&H1::Proxy));
    bool installed[3] = {true, true, true};
    for (int step = 0; step <= 3; ++step) {
      unsigned long before[3] = {H0::calls, H1::calls, H2::calls};
      unsigned long target = jp_target_calls();
      ASSERT_EQ(full_call_add(step, 1), step + 1);
      unsigned long after[3] = {H0::calls, H1::calls, H2::calls};
      std::string where = "order " + std::to_string(order[0]) + std::to_string(order[1]) +
                          std::to_string(order[2]) + " step " + std::to_string(step);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(after[i] - before[i], installed[i] ? 1u : 0u) << where << " hook " << i;
      EXPECT_EQ(jp_target_calls() - target, 1u) << where;
      if (step == 3) break;
      int victim = order[step];
      EXPECT_EQ(jp_plt_hook_remove(hooks[victim]), JP_PLT_OK) << where << ": " << jp_plt_last_error();
      installed[victim] = false;
      // A removed hook is also never passed through: it was spliced out of the chain.
      EXPECT_EQ(H0::passed_through + H1::passed_through + H2::passed_through, 0u) << where;
    }
    EXPECT_EQ(H0::passed_through + H1::passed_through + H2::passed_through, 0u);
  } while (std::next_permutation(order.begin(), order.end()));
}

}  // namespace
}  // namespace jp::test
