// The device's API level (hook/android_api.h): the config's value wins, property values parse strictly, and
// a host (no ro.build.version.sdk) says why the level is unknown.
#include "hook/android_api.h"

#include <gtest/gtest.h>

namespace jp::hook {
namespace {

TEST(AndroidApi, ConfigWinsAndPropertyValuesAreParsedStrictly) {
  EXPECT_EQ(ResolveAndroidApi(33).level, 33);
  EXPECT_EQ(ResolveAndroidApi(33).source, "config");
  EXPECT_EQ(ParseSdkProperty("34"), 34);
  EXPECT_EQ(ParseSdkProperty(""), 0);
  EXPECT_EQ(ParseSdkProperty("3x"), 0);
  EXPECT_EQ(ParseSdkProperty("99999999999"), 0);
#if !defined(__ANDROID__)
  EXPECT_EQ(ResolveAndroidApi(0).level, 0);
  EXPECT_FALSE(ResolveAndroidApi(0).source.empty());
#endif
}

}  // namespace
}  // namespace jp::hook
