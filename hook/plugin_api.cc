// The C API of jankprobe.h, and the C++ registration hooks of monitor.h, over the Plugin singleton.
#include "hook/plugin.h"
#include "hook/text_release.h"
#include "jankprobe/jankprobe.h"

namespace jp::hook {

void RegisterMonitorFactory(Monitor monitor, MonitorFactory factory) {
  Plugin::RegisterFactory(monitor, factory);  // no Plugin::Get(): see g_factories in plugin.cc
}
void SetStackCaptureHook(StackCaptureFn fn, void* ctx) { Plugin::Get().SetStackCapture(fn, ctx); }
void SetMainThreadTid(uint32_t tid) { Plugin::Get().SetMainTid(tid); }
const PluginContext* CurrentPluginContext() { return Plugin::Get().Context(); }

}  // namespace jp::hook

using jp::hook::Plugin;

extern "C" {

// Start and configure run most of the library's code once (config parsing, hook installation, JNI
// resolution, monitor start-up); when they are done its pages leave the app's RSS (hook/text_release.h),
// whether they succeeded or not. These functions sit in the steady-state text: they run after the release.
JP_EXPORT int jankprobe_start(const char* config_json) {
  const int rc = Plugin::Get().Start(config_json);
  jp::hook::ReleaseStartOnlyText();
  return rc;
}
JP_EXPORT int jankprobe_configure(const char* config_json) {
  const int rc = Plugin::Get().Configure(config_json);
  jp::hook::ReleaseStartOnlyText();
  return rc;
}
// Stop runs start-only code too (monitor and hook teardown): given back the same way.
JP_EXPORT void jankprobe_stop(void) {
  Plugin::Get().Stop();
  jp::hook::ReleaseStartOnlyText();
}
// Export and status run code the steady state does not (JSON writing, the status of every monitor): the
// order places it with the start-only text, so it is given back the same way once they return.
JP_EXPORT int jankprobe_export(const char* path, int format) {
  const int rc = Plugin::Get().Export(path, format);
  jp::hook::ReleaseStartOnlyText();
  return rc;
}
JP_EXPORT const char* jankprobe_last_error(void) { return Plugin::LastError().c_str(); }
JP_EXPORT void jankprobe_set_report_listener(void (*fn)(const char*, void*), void* arg) {
  Plugin::Get().SetListener(fn, arg);
}
JP_EXPORT const char* jankprobe_status(void) {
  static thread_local std::string status;
  status = Plugin::Get().StatusJson();
  jp::hook::ReleaseStartOnlyText();
  return status.c_str();
}

}  // extern "C"
