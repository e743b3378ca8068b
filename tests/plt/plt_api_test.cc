// The public API end to end, through libjankprobe.so: every slot kind a caller library can have, the
// three forms of `caller`, symbol versions, errors, and handle reuse.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "jankprobe/plt.h"
#include "tests/fixtures/hook/callers.h"
#include "tests/fixtures/hook/target.h"
#include "tests/plt/hook_test_support.h"

namespace jp::test {
namespace {

struct CallerLib {
  const char* file_name;
  int (*call_add)(int, int);
  long (*call_getpid)();
};

// Lazy first: its JUMP_SLOTs still hold PLT stubs until something calls through them.
const CallerLib kCallers[] = {
    {"libjp_hook_lazy.so", &lazy_call_add, &lazy_call_getpid},
    {"libjp_hook_partial.so", &partial_call_add, &partial_call_getpid},
    {"libjp_hook_full.so", &full_call_add, &full_call_getpid},
    {"libjp_hook_noplt.so", &noplt_call_add, &noplt_call_getpid},
    {"libjp_hook_data.so", &data_call_add, &data_call_getpid},
};

class EachCaller : public ::testing::TestWithParam<CallerLib> {};

TEST_P(EachCaller, HooksAnotherFixturesFunctionAndUnhooks) {
  const CallerLib& lib = GetParam();
  using Hook = AddHook<1>;
  jp_plt_hook* hook = Hook::Install(lib.file_name);
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_STREQ(jp_plt_last_error(), "");
  EXPECT_GE(jp_plt_hook_slot_count(hook), 1u);
  EXPECT_EQ(jp_plt_hook_is_active(hook), 1);
  // The previous target is the real function, never the caller's own PLT stub.
  EXPECT_EQ(Hook::prev, RealTargetAdd());

  unsigned long proxy_before = Hook::calls, target_before = jp_target_calls();
  EXPECT_EQ(lib.call_add(2, 3), 5);
  EXPECT_EQ(Hook::calls - proxy_before, 1u);
  EXPECT_EQ(jp_target_calls() - target_before, 1u);

  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_is_active(hook), 0);
  EXPECT_EQ(jp_plt_hook_slot_count(hook), 0u);
  EXPECT_EQ(lib.call_add(4, 5), 9);
  EXPECT_EQ(Hook::calls - proxy_before, 1u);
  EXPECT_EQ(jp_target_calls() - target_before, 2u);
}

long (*g_getpid_prev)() = nullptr;
std::atomic<unsigned long> g_getpid_calls{0};
long GetpidProxy() {
  g_getpid_calls.fetch_add(1);
  return reinterpret_cast<long (*)()>(__atomic_load_n(reinterpret_cast<void**>(&g_getpid_prev), __ATOMIC_ACQUIRE))();
}

TEST_P(EachCaller, HooksALibcImport) {
  const CallerLib& lib = GetParam();
  jp_plt_hook* hook = jp_plt_hook_install(lib.file_name, "getpid", reinterpret_cast<void*>(&GetpidProxy),
                                          reinterpret_cast<void**>(&g_getpid_prev));
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  unsigned long before = g_getpid_calls;
  EXPECT_EQ(lib.call_getpid(), static_cast<long>(getpid()));
  EXPECT_EQ(g_getpid_calls - before, 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK) << jp_plt_last_error();
  EXPECT_EQ(lib.call_getpid(), static_cast<long>(getpid()));
  EXPECT_EQ(g_getpid_calls - before, 1u);
}

INSTANTIATE_TEST_SUITE_P(SlotKinds, EachCaller, ::testing::ValuesIn(kCallers),
                         [](const ::testing::TestParamInfo<CallerLib>& info) {
                           std::string name = info.param.file_name;
                           return name.substr(std::string("libjp_hook_").size(),
                                              name.size() - std::string("libjp_hook_.so").size());
                         });

TEST(CallerForms, AbsolutePath) {
  using Hook = AddHook<2>;
  jp_plt_hook* hook = Hook::Install(JP_HOOK_FULL_PATH);
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  unsigned long before = Hook::calls;
  EXPECT_EQ(full_call_add(1, 1), 2);
  EXPECT_EQ(partial_call_add(1, 1), 2);  // another module: not hooked
  EXPECT_EQ(Hook::calls - before, 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
}

TEST(CallerForms, NonCanonicalPathOfALoadedLibrary) {
  using Hook = AddHook<2>;
  std::string path = JP_HOOK_FULL_PATH;
  path.insert(path.rfind('/'), "/.");  // ".../fixtures/./libjp_hook_full.so"
  jp_plt_hook* hook = Hook::Install(path.c_str());
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_GE(jp_plt_hook_slot_count(hook), 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
}

TEST(CallerForms, NullMeansEveryModuleButJankprobe) {
  using Hook = AddHook<3>;
  jp_plt_hook* hook = Hook::Install(nullptr);
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_GE(jp_plt_hook_slot_count(hook), 5u);  // one or more per caller library
  unsigned long before = Hook::calls, target_before = jp_target_calls();
  for (const CallerLib& lib : kCallers) EXPECT_EQ(lib.call_add(1, 2), 3) << lib.file_name;
  EXPECT_EQ(Hook::calls - before, 5u);
  EXPECT_EQ(jp_target_calls() - target_before, 5u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
}

// jankprobe imports mprotect (it calls it to write read-only GOT pages). With caller NULL its own module
// is left alone, so the engine's own mprotect calls never reach a proxy; a fixture library's calls do.
// (Not this executable's: in sanitizer builds it defines mprotect itself and calls it without a slot.)
std::atomic<unsigned long> g_mprotect_calls{0};
void* g_mprotect_prev = nullptr;
int MprotectProxy(void* address, size_t length, int prot) {
  g_mprotect_calls.fetch_add(1);
  auto real = reinterpret_cast<int (*)(void*, size_t, int)>(__atomic_load_n(&g_mprotect_prev, __ATOMIC_ACQUIRE));
  return real(address, length, prot);
}

TEST(CallerForms, NullLeavesJankprobesOwnImportsAlone) {
  static char page_buffer[1 << 16] __attribute__((aligned(1 << 16)));
  jp_plt_hook* hook = jp_plt_hook_install(nullptr, "mprotect", reinterpret_cast<void*>(&MprotectProxy), &g_mprotect_prev);
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  unsigned long before = g_mprotect_calls;
  using Hook = AddHook<4>;
  jp_plt_hook* add_hook = Hook::Install("libjp_hook_full.so");  // writes a read-only GOT page
  ASSERT_NE(add_hook, nullptr) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_remove(add_hook), JP_PLT_OK);
  EXPECT_EQ(g_mprotect_calls - before, 0u);
  ASSERT_EQ(jp_fixture_mprotect(page_buffer, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE), 0);
  EXPECT_EQ(g_mprotect_calls - before, 1u);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
}

TEST(Versions, MatchesWithAndWithoutVersion) {
  using Hook = AddHook<5>;
  for (const char* symbol : {"jp_target_add", "jp_target_add@JPTARGET_1.0", "jp_target_add@@JPTARGET_1.0"}) {
    jp_plt_hook* hook = Hook::Install("libjp_hook_full.so", symbol);
    ASSERT_NE(hook, nullptr) << symbol << ": " << jp_plt_last_error();
    unsigned long before = Hook::calls;
    EXPECT_EQ(full_call_add(3, 4), 7);
    EXPECT_EQ(Hook::calls - before, 1u) << symbol;
    EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
  }
}

TEST(Versions, OtherVersionDoesNotMatch) {
  using Hook = AddHook<5>;
  EXPECT_EQ(Hook::Install("libjp_hook_full.so", "jp_target_add@JPTARGET_2.0"), nullptr);
  std::string error = jp_plt_last_error();
  EXPECT_NE(error.find("libjp_hook_full.so"), std::string::npos) << error;
  EXPECT_NE(error.find("jp_target_add@JPTARGET_2.0"), std::string::npos) << error;
}

TEST(Errors, ModuleDoesNotImportSymbol) {
  using Hook = AddHook<6>;
  EXPECT_EQ(Hook::Install("libjp_hook_full.so", "no_such_function"), nullptr);
  std::string error = jp_plt_last_error();
  EXPECT_NE(error.find("libjp_hook_full.so does not import no_such_function"), std::string::npos) << error;
}

TEST(Errors, NoModuleImportsSymbol) {
  using Hook = AddHook<6>;
  EXPECT_EQ(Hook::Install(nullptr, "no_such_function"), nullptr);
  std::string error = jp_plt_last_error();
  EXPECT_NE(error.find("not import no_such_function"), std::string::npos) << error;
}

TEST(Errors, AbsolutePathThatDoesNotExist) {
  using Hook = AddHook<6>;
  EXPECT_EQ(Hook::Install("/nonexistent/libjp_nowhere.so"), nullptr);
  std::string error = jp_plt_last_error();
  EXPECT_NE(error.find("no loaded module matches /nonexistent/libjp_nowhere.so"), std::string::npos) << error;
}

TEST(Errors, NullArguments) {
  void* prev = nullptr;
  void* proxy = reinterpret_cast<void*>(&AddHook<6>::Proxy);
  EXPECT_EQ(jp_plt_hook_install(nullptr, nullptr, proxy, &prev), nullptr);
  EXPECT_NE(std::string(jp_plt_last_error()).find("symbol is NULL"), std::string::npos) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_install(nullptr, "jp_target_add", nullptr, &prev), nullptr);
  EXPECT_NE(std::string(jp_plt_last_error()).find("proxy is NULL"), std::string::npos) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_install(nullptr, "jp_target_add", proxy, nullptr), nullptr);
  EXPECT_NE(std::string(jp_plt_last_error()).find("prev is NULL"), std::string::npos) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_install("", "jp_target_add", proxy, &prev), nullptr);
  EXPECT_EQ(jp_plt_hook_install(nullptr, "@JPTARGET_1.0", proxy, &prev), nullptr);
  EXPECT_EQ(jp_plt_hook_remove(nullptr), JP_PLT_ERR_INVALID_ARG);
  EXPECT_EQ(jp_plt_hook_slot_count(nullptr), 0u);
  EXPECT_EQ(jp_plt_hook_is_active(nullptr), 0);
  EXPECT_EQ(prev, nullptr);  // nothing was written on failure
}

TEST(Errors, RemoveOfUnknownOrRemovedHandle) {
  int not_a_hook = 0;
  EXPECT_EQ(jp_plt_hook_remove(reinterpret_cast<jp_plt_hook*>(&not_a_hook)), JP_PLT_ERR_UNKNOWN_HOOK);
  using Hook = AddHook<7>;
  jp_plt_hook* hook = Hook::Install("libjp_hook_full.so");
  ASSERT_NE(hook, nullptr) << jp_plt_last_error();
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_OK);
  EXPECT_EQ(jp_plt_hook_remove(hook), JP_PLT_ERR_UNKNOWN_HOOK);
  EXPECT_NE(std::string(jp_plt_last_error()).find("jp_target_add"), std::string::npos) << jp_plt_last_error();
}

TEST(Errors, LastErrorIsPerThread) {
  if (ThreadsUnavailable()) GTEST_SKIP() << "no threads under this emulator (qemu-i386 hangs in pthread_create)";
  using Hook = AddHook<6>;
  EXPECT_EQ(Hook::Install("libjp_hook_full.so", "no_such_function"), nullptr);
  std::string other_thread_error = "unset";
  std::thread([&] { other_thread_error = jp_plt_last_error(); }).join();
  EXPECT_EQ(other_thread_error, "");
  EXPECT_NE(std::string(jp_plt_last_error()), "");
}

TEST(Handles, ReinstallReusesTheHandle) {
  using Hook = AddHook<8>;
  jp_plt_hook* first = Hook::Install("libjp_hook_full.so");
  ASSERT_NE(first, nullptr) << jp_plt_last_error();
  EXPECT_EQ(Hook::Install("libjp_hook_full.so"), first);  // while installed: same handle, no double patch
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(jp_plt_hook_remove(first), JP_PLT_OK);
    ASSERT_EQ(Hook::Install("libjp_hook_full.so"), first);
  }
  unsigned long before = Hook::calls;
  EXPECT_EQ(full_call_add(1, 2), 3);
  EXPECT_EQ(Hook::calls - before, 1u);  // installed once, not stacked on itself
  EXPECT_EQ(jp_plt_hook_remove(first), JP_PLT_OK);
  // A different prev variable is a different hook.
  void* other_prev = nullptr;
  jp_plt_hook* other = jp_plt_hook_install("libjp_hook_full.so", "jp_target_add",
                                           reinterpret_cast<void*>(&Hook::Proxy), &other_prev);
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, first);
  EXPECT_EQ(jp_plt_hook_remove(other), JP_PLT_OK);
}

}  // namespace
}  // namespace jp::test
