// The new-library monitor: PLT hooks on the loader's entry points, so that after the real call returns,
// and before it returns to its caller, every active hook (pending ones included) is applied to the
// modules it just loaded. Which entry points depends on the system (plt/dl_monitor_mode.h): on Android
// 8.0+ __loader_dlopen and __loader_android_dlopen_ext in libdl.so (the caller's address passed on); on
// older Android and glibc dlopen, android_dlopen_ext and dlmopen (those that exist) in every module
// except jankprobe's own; on Android 7.x none (a pending hook's install then fails, saying why).
#ifndef JANKPROBE_PLT_DL_MONITOR_H_
#define JANKPROBE_PLT_DL_MONITOR_H_

#include "plt/status.h"

namespace jp::plt {

// Installs the monitor once (later calls are cheap no-ops). Must be called without the engine mutex.
// Modules loaded later receive the monitor hooks like any other hook with caller NULL.
Status EnsureDlMonitor();

// Removes the monitor's hooks once no hook of the public API is active any more, so that a plugin that
// removed all its hooks (jankprobe_stop) leaves nothing patched behind. A hook installed concurrently
// re-installs the monitor: both sides publish their change before they look at the other's (seq_cst).
void ReleaseDlMonitorIfUnused();

// For host tests: the loader entry points to hook instead of Android's (a library that imports
// `dlopen_symbol(file, flags, caller)` and `dlopen_ext_symbol(file, flags, extinfo, caller)`), as if
// this were Android 8.0+. Before the first hook is installed; not thread-safe.
void UseLoaderEntriesForTest(const char* library, const char* dlopen_symbol, const char* dlopen_ext_symbol);

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_DL_MONITOR_H_
