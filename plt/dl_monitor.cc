#include "plt/dl_monitor.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

#include "jankprobe/plt.h"
#include "plt/dl_monitor_mode.h"
#include "plt/hook_registry.h"

namespace jp::plt {
namespace {

// The monitor's own hooks. A handle is set once its install returned; a call that arrives earlier falls
// back to the prev variable, which is set before any slot. Which ones go in depends on the mode
// (plt/dl_monitor_mode.h): the first three in every module, or the last two in the loader's library.
// Constant-initialised (no proxy pointer in here: a reinterpret_cast would make the array dynamically
// initialised, after a static constructor elsewhere may already have installed a hook): see ProxyOf.
struct MonitorHook {
  const char* symbol;
  void* prev = nullptr;
  std::atomic<jp_plt_hook*> handle{nullptr};
};

enum Index { kDlopen, kAndroidDlopenExt, kDlmopen, kLoaderDlopen, kLoaderDlopenExt, kHookCount };

// Where the loader entry points are imported: bionic's libdl.so, or what a host test names instead.
const char* g_loader_library = "libdl.so";
bool g_loader_entries_forced = false;  // a host test named its own loader entries

void* PrevTarget(Index i, const void* return_address);

// Runs inside the app's dlopen call: nothing may escape from here (out of memory leaves the new modules
// unhooked, which the next successful dlopen retries).
void RefreshQuietly() {
  try {
    RefreshAfterLoad();
  } catch (...) {
  }
}

// A loaded library may have brought dependencies along; RefreshAfterLoad looks at every new module.
// These three sit in every module (kEveryCaller): the loader sees jankprobe as the caller, which is why
// this mode is used only where that does not matter (plt/dl_monitor_mode.h).
void* DlopenProxy(const char* file, int flags) {
  using Fn = void* (*)(const char*, int);
  auto real = reinterpret_cast<Fn>(PrevTarget(kDlopen, __builtin_return_address(0)));
  void* handle = real(file, flags);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

void* AndroidDlopenExtProxy(const char* file, int flags, const void* extinfo) {
  using Fn = void* (*)(const char*, int, const void*);
  auto real = reinterpret_cast<Fn>(PrevTarget(kAndroidDlopenExt, __builtin_return_address(0)));
  void* handle = real(file, flags, extinfo);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

void* DlmopenProxy(long namespace_id, const char* file, int flags) {
  using Fn = void* (*)(long, const char*, int);
  auto real = reinterpret_cast<Fn>(PrevTarget(kDlmopen, __builtin_return_address(0)));
  void* handle = real(namespace_id, file, flags);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

// The loader's entry points (kLoaderEntries): the caller's address arrives as an argument and goes on
// unchanged, so the linker picks the namespace of whoever called dlopen. (libdl's dlopen usually
// tail-calls __loader_dlopen: the return address is then the app's caller, which PrevFor maps to the
// one module patched here like any other address outside the table.)
void* LoaderDlopenProxy(const char* file, int flags, const void* caller) {
  using Fn = void* (*)(const char*, int, const void*);
  auto real = reinterpret_cast<Fn>(PrevTarget(kLoaderDlopen, __builtin_return_address(0)));
  void* handle = real(file, flags, caller);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

void* LoaderDlopenExtProxy(const char* file, int flags, const void* extinfo, const void* caller) {
  using Fn = void* (*)(const char*, int, const void*, const void*);
  auto real = reinterpret_cast<Fn>(PrevTarget(kLoaderDlopenExt, __builtin_return_address(0)));
  void* handle = real(file, flags, extinfo, caller);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

MonitorHook g_hooks[kHookCount] = {
    {"dlopen"}, {"android_dlopen_ext"}, {"dlmopen"}, {"__loader_dlopen"}, {"__loader_android_dlopen_ext"}};

void* ProxyOf(Index i) {
  switch (i) {
    case kDlopen: return reinterpret_cast<void*>(&DlopenProxy);
    case kAndroidDlopenExt: return reinterpret_cast<void*>(&AndroidDlopenExtProxy);
    case kDlmopen: return reinterpret_cast<void*>(&DlmopenProxy);
    case kLoaderDlopen: return reinterpret_cast<void*>(&LoaderDlopenProxy);
    case kLoaderDlopenExt: return reinterpret_cast<void*>(&LoaderDlopenExtProxy);
    case kHookCount: break;
  }
  return nullptr;
}

void* PrevTarget(Index i, const void* return_address) {
  jp_plt_hook* h = g_hooks[i].handle.load(std::memory_order_acquire);
  return h != nullptr ? PrevFor(h, return_address) : __atomic_load_n(&g_hooks[i].prev, __ATOMIC_ACQUIRE);
}

Status Install(Index i, const char* caller) {
  jp_plt_hook* hook = nullptr;
  Status status = InstallHook(caller, g_hooks[i].symbol, ProxyOf(i), &g_hooks[i].prev, true, &hook);
  if (status.ok()) g_hooks[i].handle.store(hook, std::memory_order_release);
  return status;
}

void RemoveAll() {
  int ignored;
  for (MonitorHook& h : g_hooks) {
    if (jp_plt_hook* hook = h.handle.load(std::memory_order_acquire)) RemoveHook(hook, &ignored);
  }
}

// The mode, found by the first install and kept (the system does not change under us): kUnknown until
// then. The reason for kOff is published before the mode (both set once; a racing loser's copy is freed).
constexpr int kUnknown = -1;
std::atomic<int> g_mode{kUnknown};
std::atomic<std::string*> g_off_why{nullptr};

// The loader entry points' hooks, when this system has them: the hook on __loader_dlopen finding a slot
// in the loader's library is the test (libdl.so imports it from API 26 on). Either both go in, or none.
size_t InstallLoaderEntries() {
  if (!Install(kLoaderDlopen, g_loader_library).ok()) return 0;
  const size_t slots = jp_plt_hook_slot_count(g_hooks[kLoaderDlopen].handle.load(std::memory_order_acquire));
  if (slots > 0) {
    Install(kLoaderDlopenExt, g_loader_library);  // a libdl without android_dlopen_ext: dlopen is watched
  } else {
    int ignored;
    RemoveHook(g_hooks[kLoaderDlopen].handle.load(std::memory_order_acquire), &ignored);
  }
  return slots;
}

DlMonitorMode Choose() {
  const int known = g_mode.load(std::memory_order_acquire);
  if (known != kUnknown) return static_cast<DlMonitorMode>(known);
#if defined(__ANDROID__)
  const bool try_loader = true;
#else
  const bool try_loader = g_loader_entries_forced;
#endif
  const size_t loader_slots = try_loader ? InstallLoaderEntries() : 0;
  DlMonitorChoice choice =
      g_loader_entries_forced ? DlMonitorChoice{DlMonitorMode::kLoaderEntries, ""}
                              : ChooseDlMonitorMode(loader_slots, AndroidSdkLevel());
  if (choice.mode == DlMonitorMode::kLoaderEntries && loader_slots == 0) {
    choice = {DlMonitorMode::kOff, std::string(g_loader_library) + " imports no " + g_hooks[kLoaderDlopen].symbol +
                                       ": libraries loaded later are not watched"};
  }
  if (choice.mode == DlMonitorMode::kOff) {
    auto* why = new std::string(std::move(choice.why));
    std::string* none = nullptr;
    if (!g_off_why.compare_exchange_strong(none, why, std::memory_order_acq_rel)) delete why;
  }
  int expected = kUnknown;
  g_mode.compare_exchange_strong(expected, static_cast<int>(choice.mode), std::memory_order_acq_rel);
  return static_cast<DlMonitorMode>(g_mode.load(std::memory_order_acquire));
}

Status InstallMonitor() {
  switch (Choose()) {
    case DlMonitorMode::kLoaderEntries:
      if (InstallLoaderEntries() == 0) {
        return Status::NotFound(std::string("cannot monitor dlopen: ") + g_loader_library + " no longer imports " +
                                g_hooks[kLoaderDlopen].symbol);
      }
      return Status::Ok();
    case DlMonitorMode::kEveryCaller: {
      Status status = Install(kDlopen, nullptr);
      if (!status.ok()) return Status(status.code(), "cannot monitor dlopen: " + status.message());
      // These two exist only on some systems; a hook with no slots simply waits for a module importing them.
      Install(kAndroidDlopenExt, nullptr);
      Install(kDlmopen, nullptr);
      return Status::Ok();
    }
    case DlMonitorMode::kOff:
      break;
  }
  const std::string* why = g_off_why.load(std::memory_order_acquire);
  return Status::NotFound(why != nullptr ? *why : "libraries loaded later are not watched");
}

std::atomic<bool> g_installed{false};

}  // namespace

Status EnsureDlMonitor() {
  // No lock of its own: two threads may both install, and the second merely finds the same handles
  // (install reuses a handle with identical arguments). A lock held across the install would be held
  // across dlsym, which a library constructor running under the loader lock could deadlock against.
  if (g_installed.load(std::memory_order_seq_cst)) return Status::Ok();
  Status status = InstallMonitor();
  if (status.ok()) g_installed.store(true, std::memory_order_seq_cst);
  return status;
}

void ReleaseDlMonitorIfUnused() {
  if (ActiveUserHookCount() != 0 || !g_installed.exchange(false, std::memory_order_seq_cst)) return;
  RemoveAll();
  // A hook installed meanwhile may have seen the monitor still marked installed: put it back for it.
  if (ActiveUserHookCount() != 0) EnsureDlMonitor();
}

void UseLoaderEntriesForTest(const char* library, const char* dlopen_symbol, const char* dlopen_ext_symbol) {
  g_loader_library = library;
  g_hooks[kLoaderDlopen].symbol = dlopen_symbol;
  g_hooks[kLoaderDlopenExt].symbol = dlopen_ext_symbol;
  g_loader_entries_forced = true;
}

}  // namespace jp::plt
