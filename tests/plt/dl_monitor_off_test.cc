// The dlopen monitor where no safe entry point exists (Android 7.x, or a libdl.so that imports no
// __loader_dlopen; plt/dl_monitor_mode.h), on a host: a pending hook's install fails saying why, every
// time, and nothing is patched for it; a hook on a library already loaded still goes in and works.
#include <dlfcn.h>

#include <string>

#include <gtest/gtest.h>

#include "jankprobe/plt.h"
#include "plt/dl_monitor.h"
#include "tests/fixtures/hook/callers.h"
#include "tests/fixtures/hook/target.h"
#include "tests/plt/hook_test_support.h"

namespace jp::test {
namespace {

// A "libdl" that imports no loader entry: the monitor finds nowhere to go.
const bool g_no_loader_entry = [] {
  plt::UseLoaderEntriesForTest("libjp_hook_target.so", "jp_no_loader_dlopen", "jp_no_loader_dlopen_ext");
  return true;
}();

TEST(DlMonitorOff, APendingHookFailsSayingWhyAndALoadedLibraryIsStillHooked) {
  ASSERT_TRUE(g_no_loader_entry);
  void* const real_dlopen = dlsym(RTLD_DEFAULT, "dlopen");
  jp_fixture_dlopen(nullptr, RTLD_NOW);
  const size_t dlopen_words = CountWords("libjp_hook_loader.so", real_dlopen);
  ASSERT_GE(dlopen_words, 1u);

  for (int attempt = 0; attempt < 2; ++attempt) {  // the second from the mode kept by the first
    jp_plt_hook* pending = AddHook<21>::Install("libjp_hook_pending_c.so");
    EXPECT_EQ(pending, nullptr) << "attempt " << attempt << ": a pending hook nothing would ever install";
    const std::string error = jp_plt_last_error();
    EXPECT_NE(error.find("libjp_hook_target.so imports no jp_no_loader_dlopen"), std::string::npos) << error;
    EXPECT_NE(error.find("not watched"), std::string::npos) << error;
  }
  EXPECT_EQ(CountWords("libjp_hook_loader.so", real_dlopen), dlopen_words) << "dlopen was hooked anyway";

  using Hook = AddHook<22>;
  jp_plt_hook* loaded = Hook::Install("libjp_hook_full.so");
  ASSERT_NE(loaded, nullptr) << jp_plt_last_error();
  EXPECT_GE(jp_plt_hook_slot_count(loaded), 1u);
  const unsigned long before = Hook::calls;
  EXPECT_EQ(full_call_add(2, 3), 5);
  EXPECT_EQ(Hook::calls - before, 1u);
  EXPECT_EQ(jp_plt_hook_remove(loaded), JP_PLT_OK);
}

}  // namespace
}  // namespace jp::test
