#include "hook/android_api.h"

#if defined(__ANDROID__)
#include <sys/system_properties.h>
#endif

namespace jp::hook {

int ParseSdkProperty(const char* value) {
  if (value == nullptr || *value == '\0') return 0;
  int level = 0;
  for (const char* p = value; *p; ++p) {
    if (*p < '0' || *p > '9' || level >= 100) return 0;  // also stops overflow on absurd input
    level = level * 10 + (*p - '0');
  }
  return level;
}

ApiLevel ResolveAndroidApi(int config_api) {
  ApiLevel out;
  if (config_api > 0) {
    out.level = config_api;
    out.source = "config";
    return out;
  }
#if defined(__ANDROID__)
  char value[PROP_VALUE_MAX] = {};
  if (__system_property_get("ro.build.version.sdk", value) > 0) {
    out.level = ParseSdkProperty(value);
    out.source = out.level > 0 ? "ro.build.version.sdk" : std::string("unreadable ro.build.version.sdk \"") + value + "\"";
  } else {
    out.source = "ro.build.version.sdk is not set";
  }
#else
  out.source = "not on Android and input.android_api not set";
#endif
  return out;
}

}  // namespace jp::hook
