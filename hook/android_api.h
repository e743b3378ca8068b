// Which Android release's InputMessage layout to decode: the config's input.android_api when given, else
// the device's ro.build.version.sdk (read with __system_property_get on Android; absent on a host).
#ifndef JANKPROBE_HOOK_ANDROID_API_H_
#define JANKPROBE_HOOK_ANDROID_API_H_

#include <string>

namespace jp::hook {

struct ApiLevel {
  int level = 0;       // 0 = unknown
  std::string source;  // "config", "ro.build.version.sdk", or why it is unknown
};

// config_api: InputConfig::android_api (0 = not set).
ApiLevel ResolveAndroidApi(int config_api);

// Parses a property value such as "33"; 0 for anything that is not a plain positive decimal below 1000.
int ParseSdkProperty(const char* value);

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_ANDROID_API_H_
