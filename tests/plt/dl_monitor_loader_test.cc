// The dlopen monitor in its Android 8.0+ mode (plt/dl_monitor_mode.h), on a host: the loader entry
// points (fake_linker.c's stand-ins for __loader_dlopen / __loader_android_dlopen_ext) are hooked in the
// library that imports them (fake_libdl.c's stand-in for libdl.so) and nowhere else; the caller's address
// reaches the loader unchanged, so the linker would pick the app's namespace, not jankprobe's; a pending
// hook is in place when the app's dlopen returns; the monitor leaves with the last hook.
#include <dlfcn.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "jankprobe/plt.h"
#include "plt/dl_monitor.h"
#include "tests/fixtures/hook/callers.h"
#include "tests/fixtures/hook/fake_loader.h"
#include "tests/fixtures/hook/target.h"
#include "tests/plt/hook_test_support.h"

namespace jp::test {
namespace {

// As if this were Android 8.0+, before anything installs a hook (the mode is chosen once per process).
const bool g_loader_mode = [] {
  plt::UseLoaderEntriesForTest("libjp_fake_libdl.so", "jp_fake_loader_dlopen", "jp_fake_loader_dlopen_ext");
  return true;
}();

using AddFnPtr = int (*)(int, int);

// The module that holds `address`, by file name ("" when none).
std::string ModuleOf(const void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash != nullptr ? slash + 1 : info.dli_fname;
}

void* Real(const char* symbol) { return dlsym(RTLD_DEFAULT, symbol); }

TEST(DlMonitorLoaderMode, HooksTheLoaderEntriesInLibdlOnlyAndPassesTheCallerOn) {
  ASSERT_TRUE(g_loader_mode);
  void* const real_dlopen = Real("dlopen");
  void* const real_entry = Real("jp_fake_loader_dlopen");
  void* const real_entry_ext = Real("jp_fake_loader_dlopen_ext");
  ASSERT_NE(real_entry, nullptr);
  ASSERT_NE(real_entry_ext, nullptr);
  jp_fixture_dlopen(nullptr, RTLD_NOW);  // bind the loader fixture's dlopen slot (it may be lazy)
  ASSERT_NE(jp_fake_app_dlopen(nullptr, RTLD_NOW), nullptr);  // and the stand-in libdl's two
  ASSERT_NE(jp_fake_app_dlopen_ext(nullptr, RTLD_NOW, nullptr), nullptr);
  const size_t dlopen_words = CountWords("libjp_hook_loader.so", real_dlopen);
  ASSERT_GE(dlopen_words, 1u);
  ASSERT_GE(CountWords("libjp_fake_libdl.so", real_entry), 1u) << "the stand-in libdl imports the entry";
  ASSERT_GE(CountWords("libjp_fake_libdl.so", real_entry_ext), 1u);

  using HookA = AddHook<11>;
  jp_plt_hook* a = HookA::Install("libjp_hook_pending_a.so");  // pending: needs the monitor
  ASSERT_NE(a, nullptr) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_slot_count(a), 0u);
  EXPECT_EQ(CountWords("libjp_fake_libdl.so", real_entry), 0u) << "the loader entry's slot is not ours";
  EXPECT_EQ(CountWords("libjp_fake_libdl.so", real_entry_ext), 0u) << "nor the extended entry's";
  EXPECT_EQ(CountWords("libjp_hook_loader.so", real_dlopen), dlopen_words)
      << "dlopen was hooked in another module: its loads would name jankprobe as their caller";

  // The app's dlopen: through the stand-in libdl and our proxy to the loader, which sees the app.
  void* handle = jp_fake_app_dlopen(JP_HOOK_PENDING_A_PATH, RTLD_NOW);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_EQ(ModuleOf(jp_fake_loader_last_caller()), "libjp_fake_app.so")
      << "the loader was told another caller than the app's call site";
  EXPECT_GE(jp_plt_hook_slot_count(a), 1u) << "the pending hook was not in place when dlopen returned";
  auto call_add = reinterpret_cast<AddFnPtr>(dlsym(handle, "pending_a_call_add"));
  ASSERT_NE(call_add, nullptr);
  const unsigned long before = HookA::calls;
  EXPECT_EQ(call_add(20, 22), 42);
  EXPECT_EQ(HookA::calls - before, 1u);

  // android_dlopen_ext's path: the extinfo and the caller both arrive.
  using HookB = AddHook<12>;
  jp_plt_hook* b = HookB::Install(JP_HOOK_PENDING_B_PATH);
  ASSERT_NE(b, nullptr) << jp_plt_last_error();
  const int extinfo = 7;
  void* handle_b = jp_fake_app_dlopen_ext(JP_HOOK_PENDING_B_PATH, RTLD_NOW, &extinfo);
  ASSERT_NE(handle_b, nullptr) << dlerror();
  EXPECT_EQ(jp_fake_loader_last_extinfo(), &extinfo);
  EXPECT_EQ(ModuleOf(jp_fake_loader_last_caller()), "libjp_fake_app.so");
  EXPECT_GE(jp_plt_hook_slot_count(b), 1u);

  // A failed load passes its null on and leaves the hooks as they were.
  EXPECT_EQ(jp_fake_app_dlopen("/nonexistent/libjp_none.so", RTLD_NOW), nullptr);
  EXPECT_EQ(ModuleOf(jp_fake_loader_last_caller()), "libjp_fake_app.so");

  // The last hook gone, the loader entries' slots hold the loader's functions again.
  EXPECT_EQ(jp_plt_hook_remove(a), JP_PLT_OK);
  EXPECT_EQ(CountWords("libjp_fake_libdl.so", real_entry), 0u) << "the monitor left with a hook still active";
  EXPECT_EQ(jp_plt_hook_remove(b), JP_PLT_OK);
  EXPECT_GE(CountWords("libjp_fake_libdl.so", real_entry), 1u) << "the monitor stayed behind";
  EXPECT_GE(CountWords("libjp_fake_libdl.so", real_entry_ext), 1u);
  EXPECT_EQ(CountWords("libjp_hook_loader.so", real_dlopen), dlopen_words);
}

}  // namespace
}  // namespace jp::test
