#include "plt/dl_monitor_mode.h"

#include <cstdlib>

#if defined(__ANDROID__)
#include <sys/system_properties.h>
#endif

namespace jp::plt {

namespace {
constexpr int kFirstNamespacedSdk = 24;  // Android 7.0: linker namespaces per caller
}  // namespace

DlMonitorChoice ChooseDlMonitorMode(size_t loader_entry_slots, int android_sdk) {
  if (loader_entry_slots > 0) return {DlMonitorMode::kLoaderEntries, ""};
  if (android_sdk >= kFirstNamespacedSdk) {
    return {DlMonitorMode::kOff,
            "libraries loaded later are not watched on Android API " + std::to_string(android_sdk) +
                ": libdl.so imports no __loader_dlopen (API 26+), and a proxy in front of dlopen would resolve "
                "other libraries' dlopen calls in the app's linker namespace"};
  }
  return {DlMonitorMode::kEveryCaller, ""};
}

int AndroidSdkLevel() {
#if defined(__ANDROID__)
  char value[PROP_VALUE_MAX] = {};
  if (__system_property_get("ro.build.version.sdk", value) <= 0) return 0;
  const long sdk = std::strtol(value, nullptr, 10);
  return sdk > 0 && sdk < 1000 ? static_cast<int>(sdk) : 0;
#else
  return 0;
#endif
}

}  // namespace jp::plt
