// Which dlopen entry points the new-library monitor (plt/dl_monitor.h) may hook on this system, and why.
//
// A dlopen proxy must not change who the loader thinks is calling. Since Android 7.0 (API 24) bionic
// resolves a bare library name in the linker namespace of the module that called dlopen (libdl's
// dlopen passes its own return address on as the caller). A proxy in front of dlopen calls it from
// jankprobe, in the app's class-loader namespace: a system library's dlopen of a library that is private
// to its own namespace would then fail ("not accessible for the namespace") or load a second copy. So:
// - Android 8.0+ (API 26): libdl.so's dlopen and android_dlopen_ext call the linker's __loader_dlopen
//   and __loader_android_dlopen_ext with the caller's address as an argument. The monitor hooks those
//   two imports in libdl.so only and passes the address on unchanged (ByteHook's choice for API >= 26).
// - Android 7.x (API 24-25): no such entry point is imported; what is left is the linker's internals.
//   The monitor stays off and says so: hooks on libraries already loaded work, pending ones fail.
// - Android before 7.0 and glibc: no namespaces; the monitor hooks dlopen, android_dlopen_ext and
//   dlmopen in every module (glibc: a bare file name then resolves with jankprobe's RUNPATH, not the
//   caller's, a difference no app library relies on in practice).
#ifndef JANKPROBE_PLT_DL_MONITOR_MODE_H_
#define JANKPROBE_PLT_DL_MONITOR_MODE_H_

#include <cstddef>
#include <string>

namespace jp::plt {

enum class DlMonitorMode {
  kLoaderEntries,  // the loader's caller-taking entry points, in the library that calls them (libdl.so)
  kEveryCaller,    // dlopen and friends, in every module but jankprobe's own
  kOff,            // no safe place: libraries loaded later are not watched
};

struct DlMonitorChoice {
  DlMonitorMode mode;
  std::string why;  // for kOff: the reason, as a pending hook's install error says it
};

// `loader_entry_slots`: how many slots a hook on the loader entry points found in libdl.so (0 when
// there is none, or off Android). `android_sdk`: the device's API level, 0 when not Android.
DlMonitorChoice ChooseDlMonitorMode(size_t loader_entry_slots, int android_sdk);

// The device's API level (ro.build.version.sdk), or 0 off Android or when it cannot be read.
int AndroidSdkLevel();

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_DL_MONITOR_MODE_H_
