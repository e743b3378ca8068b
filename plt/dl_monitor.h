// The new-library monitor: PLT hooks on dlopen, android_dlopen_ext and dlmopen (those that exist) in
// every module except jankprobe's own, so that after the real call returns, and before it returns to
// its caller, every active hook (pending ones included) is applied to the modules it just loaded.
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

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_DL_MONITOR_H_
