// The public C API (include/jankprobe/plt.h): argument checks, the thread-local last error, and a
// try/catch at the boundary so that nothing ever throws into the caller.
#include <cstdio>
#include <cstring>
#include <new>

#include "jankprobe/plt.h"
#include "plt/dl_monitor.h"
#include "plt/hook_registry.h"

namespace {

// A fixed buffer: trivially destructible thread_local, no allocation to report an allocation failure.
thread_local char g_last_error[512];

void SetError(const char* message) { std::snprintf(g_last_error, sizeof(g_last_error), "%s", message); }
void SetError(const jp::plt::Status& status) { SetError(status.message().c_str()); }
void ClearError() { g_last_error[0] = '\0'; }

}  // namespace

extern "C" {

JP_EXPORT jp_plt_hook* jp_plt_hook_install(const char* caller, const char* symbol, void* proxy, void** prev) {
  try {
    // The monitor goes in first so that a pending hook can never miss a dlopen between the two.
    jp::plt::Status monitor = jp::plt::EnsureDlMonitor();
    jp_plt_hook* hook = nullptr;
    jp::plt::Status status = jp::plt::InstallHook(caller, symbol, proxy, prev, false, &hook);
    if (!status.ok()) {
      SetError(status);
      return nullptr;
    }
    // The monitor may have been released (last hook removed) between EnsureDlMonitor and our hook
    // becoming active; now that it is active, a release can no longer miss it, so check once more.
    if (monitor.ok()) monitor = jp::plt::EnsureDlMonitor();
    if (!monitor.ok() && jp_plt_hook_slot_count(hook) == 0) {
      // Pending, but nothing will ever install it: say why rather than wait forever.
      SetError(monitor);
      return nullptr;
    }
    ClearError();
    return hook;
  } catch (const std::bad_alloc&) {
    SetError("jp_plt_hook_install: out of memory");
  } catch (...) {
    SetError("jp_plt_hook_install: unexpected internal error");
  }
  return nullptr;
}

JP_EXPORT int jp_plt_hook_remove(jp_plt_hook* hook) {
  try {
    int result = JP_PLT_OK;
    jp::plt::Status status = jp::plt::RemoveHook(hook, &result);
    if (!status.ok()) {
      SetError(status);
      return status.code();
    }
    if (result == JP_PLT_REMOVED_STILL_CHAINED) {
      SetError(("removed " + hook->symbol + ", but another tool hooked it after us in " + hook->caller.Describe() +
                "; our proxy stays in its chain, inactive")
                   .c_str());
    } else {
      ClearError();
    }
    jp::plt::ReleaseDlMonitorIfUnused();  // the last hook gone: leave no dlopen hook behind either
    return result;
  } catch (const std::bad_alloc&) {
    SetError("jp_plt_hook_remove: out of memory");
    return JP_PLT_ERR_NO_MEMORY;
  } catch (...) {
    SetError("jp_plt_hook_remove: unexpected internal error");
    return JP_PLT_ERR_INVALID_ARG;
  }
}

JP_EXPORT size_t jp_plt_hook_slot_count(const jp_plt_hook* hook) {
  return hook != nullptr ? hook->slot_count.load(std::memory_order_relaxed) : 0;
}

JP_EXPORT int jp_plt_hook_is_active(const jp_plt_hook* hook) {
  return hook != nullptr ? hook->active.load(std::memory_order_acquire) : 0;
}

JP_EXPORT void* jp_plt_hook_prev_for(const jp_plt_hook* hook, const void* return_address) {
  return hook != nullptr ? jp::plt::PrevFor(hook, return_address) : nullptr;
}

JP_EXPORT const char* jp_plt_last_error(void) { return g_last_error; }

}  // extern "C"
