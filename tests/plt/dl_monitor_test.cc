// Pending hooks: a hook on a library that is not loaded yet is in place when dlopen returns.
#include <dlfcn.h>

#include <string>

#include <gtest/gtest.h>

#include "jankprobe/plt.h"
#include "tests/fixtures/hook/callers.h"
#include "tests/fixtures/hook/target.h"
#include "tests/plt/hook_test_support.h"

namespace jp::test {
namespace {

bool IsLoaded(const char* path) { return dlopen(path, RTLD_NOW | RTLD_NOLOAD) != nullptr; }

using AddFnPtr = int (*)(int, int);

// The dlopen monitor is the engine's own hook: it goes in with the first hook and out with the last one,
// so a plugin that removed all its hooks (jankprobe_stop) leaves no patched slot behind.
TEST(DlMonitor, IsRemovedWithTheLastHook) {
  void* real_dlopen = dlsym(RTLD_DEFAULT, "dlopen");
  ASSERT_NE(real_dlopen, nullptr);
  jp_fixture_dlopen(nullptr, RTLD_NOW);  // bind the loader fixture's slot (it may be lazy)
  const size_t unhooked = CountWords("libjp_hook_loader.so", real_dlopen);
  ASSERT_GE(unhooked, 1u) << "the loader fixture's dlopen slot should hold the real dlopen";
  using Hook = AddHook<7>;
  jp_plt_hook* hook = Hook::Install("libjp_hook_pending_a.so");  // pending: needs the monitor
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_LT(CountWords("libjp_hook_loader.so", real_dlopen), unhooked) << "the monitor is not in the slot";
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
  EXPECT_EQ(CountWords("libjp_hook_loader.so", real_dlopen), unhooked) << "the monitor stayed behind";
  // And it comes back for the next pending hook, which still works at dlopen time.
  hook = Hook::Install("libjp_hook_pending_a.so");
  ASSERT_NE(hook, nullptr);
  EXPECT_LT(CountWords("libjp_hook_loader.so", real_dlopen), unhooked);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
}

TEST(PendingHook, ByFileNameIsInPlaceWhenDlopenReturns) {
  ASSERT_FALSE(IsLoaded(JP_HOOK_PENDING_A_PATH)) << "the fixture must not be loaded at start-up";
  using Hook = AddHook<1>;
  jp_plt_hook* hook = Hook::Install("libjp_hook_pending_a.so");
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_slot_count(hook), 0u);
  EXPECT_EQ(jp_plt_hook_is_active(hook), 1);

  void* handle = jp_fixture_dlopen(JP_HOOK_PENDING_A_PATH, RTLD_NOW);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_GE(jp_plt_hook_slot_count(hook), 1u);
  auto call_add = reinterpret_cast<AddFnPtr>(dlsym(handle, "pending_a_call_add"));
  ASSERT_NE(call_add, nullptr);
  unsigned long before = Hook::calls, target = jp_target_calls();
  EXPECT_EQ(call_add(20, 22), 42);
  EXPECT_EQ(Hook::calls - before, 1u);
  EXPECT_EQ(jp_target_calls() - target, 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
  EXPECT_EQ(call_add(1, 1), 2);
  EXPECT_EQ(Hook::calls - before, 1u);
}

// A lazily bound library: when the pending hook is applied its JUMP_SLOT still holds the PLT stub, so
// the previous target must come from dlvsym, not the stub (which would jump back into the proxy).
TEST(PendingHook, ByPathIntoALazyLibraryWithVersion) {
  ASSERT_FALSE(IsLoaded(JP_HOOK_PENDING_B_PATH));
  using Hook = AddHook<2>;
  jp_plt_hook* hook = Hook::Install(JP_HOOK_PENDING_B_PATH, "jp_target_add@JPTARGET_1.0");
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_slot_count(hook), 0u);

  void* handle = jp_fixture_dlopen(JP_HOOK_PENDING_B_PATH, RTLD_LAZY);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_GE(jp_plt_hook_slot_count(hook), 1u);
  EXPECT_EQ(Hook::prev, RealTargetAdd());
  auto call_add = reinterpret_cast<AddFnPtr>(dlsym(handle, "pending_b_call_add"));
  ASSERT_NE(call_add, nullptr);
  unsigned long before = Hook::calls, target = jp_target_calls();
  EXPECT_EQ(call_add(1, 2), 3);
  EXPECT_EQ(Hook::calls - before, 1u);
  EXPECT_EQ(jp_target_calls() - target, 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
}

// A hook with caller NULL also reaches libraries loaded after it.
TEST(PendingHook, NullCallerCoversLibrariesLoadedLater) {
  using Hook = AddHook<3>;
  jp_plt_hook* hook = Hook::Install(nullptr);
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  size_t before_load = jp_plt_hook_slot_count(hook);
  void* handle = jp_fixture_dlopen(JP_HOOK_PENDING_C_PATH, RTLD_NOW);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_GT(jp_plt_hook_slot_count(hook), before_load);
  auto call_add = reinterpret_cast<AddFnPtr>(dlsym(handle, "pending_c_call_add"));
  ASSERT_NE(call_add, nullptr);
  unsigned long before = Hook::calls;
  EXPECT_EQ(call_add(2, 2), 4);
  EXPECT_EQ(Hook::calls - before, 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
}

// dlclose + dlopen of the same library: it often comes back at the same address, where the engine's
// records of the old copy look like the new one's. The hook must be in the new copy, counted once.
TEST(PendingHook, LibraryUnloadedAndLoadedAgainIsHookedAgain) {
  using Hook = AddHook<5>;
  jp_plt_hook* hook = Hook::Install("libjp_hook_pending_d.so");
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  size_t first_slots = 0;
  for (int round = 0; round < 3; ++round) {
    void* handle = jp_fixture_dlopen(JP_HOOK_PENDING_D_PATH, RTLD_NOW);
    ASSERT_NE(handle, nullptr) << dlerror();
    if (round == 0) first_slots = jp_plt_hook_slot_count(hook);
    EXPECT_GE(first_slots, 1u);
    EXPECT_EQ(jp_plt_hook_slot_count(hook), first_slots) << "round " << round;
    auto call_add = reinterpret_cast<AddFnPtr>(dlsym(handle, "pending_d_call_add"));
    ASSERT_NE(call_add, nullptr);
    unsigned long before = Hook::calls, target = jp_target_calls();
    EXPECT_EQ(call_add(3, 3), 6);
    EXPECT_EQ(Hook::calls - before, 1u) << "round " << round;
    EXPECT_EQ(jp_target_calls() - target, 1u);
    ASSERT_EQ(dlclose(handle), 0);
  }
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK) << jp_plt_last_error();
}

TEST(PendingHook, RemoveBeforeLoadMeansNothingIsInstalled) {
  using Hook = AddHook<4>;
  jp_plt_hook* hook = Hook::Install("libjp_hook_never_loaded.so");
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
  EXPECT_EQ(jp_plt_hook_is_active(hook), 0);
}

}  // namespace
}  // namespace jp::test
