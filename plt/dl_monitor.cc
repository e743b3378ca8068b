#include "plt/dl_monitor.h"

#include <dlfcn.h>

#include <atomic>

#include "jankprobe/plt.h"
#include "plt/hook_registry.h"

namespace jp::plt {
namespace {

// The previous targets and handles of the monitor's own hooks. The handles are set once the install
// returned; a call that arrives earlier falls back to the prev variable, which is set before any slot.
void* g_dlopen_prev = nullptr;
void* g_android_dlopen_ext_prev = nullptr;
void* g_dlmopen_prev = nullptr;
std::atomic<jp_plt_hook*> g_dlopen_hook{nullptr};
std::atomic<jp_plt_hook*> g_android_dlopen_ext_hook{nullptr};
std::atomic<jp_plt_hook*> g_dlmopen_hook{nullptr};

void* PrevTarget(const std::atomic<jp_plt_hook*>& hook, void** prev_var, const void* return_address) {
  jp_plt_hook* h = hook.load(std::memory_order_acquire);
  return h != nullptr ? PrevFor(h, return_address) : __atomic_load_n(prev_var, __ATOMIC_ACQUIRE);
}

// Runs inside the app's dlopen call: nothing may escape from here (out of memory leaves the new modules
// unhooked, which the next successful dlopen retries).
void RefreshQuietly() {
  try {
    RefreshAfterLoad();
  } catch (...) {
  }
}

// A loaded library may have brought dependencies along; RefreshAfterLoad looks at every new module.
// Known limitation on glibc: dlopen takes its caller's address to pick the RUNPATH/$ORIGIN used for a
// bare file name; through this proxy the caller is jankprobe. Bionic has __loader_dlopen for that; the
// engine does not use it yet, which is harmless in an app (one linker namespace for app libraries).
void* DlopenProxy(const char* file, int flags) {
  using Fn = void* (*)(const char*, int);
  auto real = reinterpret_cast<Fn>(PrevTarget(g_dlopen_hook, &g_dlopen_prev, __builtin_return_address(0)));
  void* handle = real(file, flags);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

void* AndroidDlopenExtProxy(const char* file, int flags, const void* extinfo) {
  using Fn = void* (*)(const char*, int, const void*);
  auto real = reinterpret_cast<Fn>(
      PrevTarget(g_android_dlopen_ext_hook, &g_android_dlopen_ext_prev, __builtin_return_address(0)));
  void* handle = real(file, flags, extinfo);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

void* DlmopenProxy(long namespace_id, const char* file, int flags) {
  using Fn = void* (*)(long, const char*, int);
  auto real = reinterpret_cast<Fn>(PrevTarget(g_dlmopen_hook, &g_dlmopen_prev, __builtin_return_address(0)));
  void* handle = real(namespace_id, file, flags);
  if (handle != nullptr) RefreshQuietly();
  return handle;
}

Status InstallMonitor() {
  jp_plt_hook* hook = nullptr;
  Status status = InstallHook(nullptr, "dlopen", reinterpret_cast<void*>(&DlopenProxy), &g_dlopen_prev, true, &hook);
  if (!status.ok()) return Status(status.code(), "cannot monitor dlopen: " + status.message());
  g_dlopen_hook.store(hook, std::memory_order_release);
  // These two exist only on some systems; a hook with no slots simply waits for a module importing them.
  if (InstallHook(nullptr, "android_dlopen_ext", reinterpret_cast<void*>(&AndroidDlopenExtProxy),
                  &g_android_dlopen_ext_prev, true, &hook).ok()) {
    g_android_dlopen_ext_hook.store(hook, std::memory_order_release);
  }
  if (InstallHook(nullptr, "dlmopen", reinterpret_cast<void*>(&DlmopenProxy), &g_dlmopen_prev, true, &hook).ok()) {
    g_dlmopen_hook.store(hook, std::memory_order_release);
  }
  return Status::Ok();
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
  int ignored;
  for (std::atomic<jp_plt_hook*>* h : {&g_dlopen_hook, &g_android_dlopen_ext_hook, &g_dlmopen_hook}) {
    if (jp_plt_hook* hook = h->load(std::memory_order_acquire)) RemoveHook(hook, &ignored);
  }
  // A hook installed meanwhile may have seen the monitor still marked installed: put it back for it.
  if (ActiveUserHookCount() != 0) EnsureDlMonitor();
}


}  // namespace jp::plt
