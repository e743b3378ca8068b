// Helpers shared by the hook engine's run-time tests: counting proxies for jp_target_add, and a model
// of "another hooking tool" that patches GOT slots without going through jankprobe.
#ifndef JANKPROBE_TESTS_PLT_HOOK_TEST_SUPPORT_H_
#define JANKPROBE_TESTS_PLT_HOOK_TEST_SUPPORT_H_

#include <atomic>
#include <cstddef>

#include "jankprobe/plt.h"

namespace jp::test {

using AddFn = int (*)(int, int);

// A proxy for jp_target_add with its own prev variable, handle and counters. N makes distinct proxies.
// `calls` counts calls while the hook is active; `passed_through` calls that arrived while inactive
// (the proxy is still in another tool's chain after a STILL_CHAINED remove).
template <int N>
struct AddHook {
  static inline void* prev = nullptr;
  static inline std::atomic<jp_plt_hook*> handle{nullptr};
  static inline std::atomic<unsigned long> calls{0};
  static inline std::atomic<unsigned long> passed_through{0};

  static int Proxy(int a, int b) {
    jp_plt_hook* h = handle.load(std::memory_order_acquire);
    if (h == nullptr || jp_plt_hook_is_active(h)) {
      calls.fetch_add(1, std::memory_order_relaxed);
    } else {
      passed_through.fetch_add(1, std::memory_order_relaxed);
    }
    auto next = reinterpret_cast<AddFn>(JP_PLT_PREV(h, prev));
    return next(a, b);
  }

  static jp_plt_hook* Install(const char* caller, const char* symbol = "jp_target_add") {
    jp_plt_hook* h = jp_plt_hook_install(caller, symbol, reinterpret_cast<void*>(&Proxy), &prev);
    if (h != nullptr) handle.store(h, std::memory_order_release);
    return h;
  }
};

// "Another tool": finds, in the writable PT_LOAD segments (RELRO included) of the loaded module whose
// base name is `module_basename`, every pointer-sized word equal to `expected`, and overwrites it with
// `replacement`. It does not use jankprobe's ELF reader on purpose. Returns the number of words written.
size_t ForeignPatch(const char* module_basename, void* expected, void* replacement);

// How many pointer-sized words in the writable PT_LOAD segments of module `module_basename` equal
// `value` (reads only). Used to see whether a GOT slot holds the real function or a proxy.
size_t CountWords(const char* module_basename, const void* value);

// A foreign proxy for jp_target_add: counts, then calls `foreign_prev`.
extern std::atomic<unsigned long> foreign_calls;
extern void* foreign_prev;
int ForeignProxy(int a, int b);

// True where threads cannot be created (JP_TEST_NO_THREADS is set for qemu-i386, see hook.cmake).
bool ThreadsUnavailable();

// The real jp_target_add, found with dlsym (not &jp_target_add, which in some executables is a PLT stub).
void* RealTargetAdd();

}  // namespace jp::test

#endif  // JANKPROBE_TESTS_PLT_HOOK_TEST_SUPPORT_H_
