// plt::ChooseDlMonitorMode: where the dlopen monitor may hook, from what this system offers
// (plt/dl_monitor_mode.h).
#include "plt/dl_monitor_mode.h"

#include <gtest/gtest.h>

namespace jp::plt {
namespace {

TEST(DlMonitorMode, LoaderEntriesWhereLibdlImportsThem) {
  EXPECT_EQ(ChooseDlMonitorMode(1, 26).mode, DlMonitorMode::kLoaderEntries);
  EXPECT_EQ(ChooseDlMonitorMode(2, 35).mode, DlMonitorMode::kLoaderEntries);
  EXPECT_EQ(ChooseDlMonitorMode(1, 0).mode, DlMonitorMode::kLoaderEntries) << "an SDK level that could not be read";
}

TEST(DlMonitorMode, OffWithNamespacesButNoLoaderEntry) {
  for (int sdk : {24, 25, 26, 34}) {
    const DlMonitorChoice c = ChooseDlMonitorMode(0, sdk);
    EXPECT_EQ(c.mode, DlMonitorMode::kOff) << "API " << sdk;
    EXPECT_NE(c.why.find("API " + std::to_string(sdk)), std::string::npos) << c.why;
    EXPECT_NE(c.why.find("namespace"), std::string::npos) << c.why;
  }
}

TEST(DlMonitorMode, EveryCallerWithoutNamespaces) {
  for (int sdk : {0, 21, 23}) {
    const DlMonitorChoice c = ChooseDlMonitorMode(0, sdk);
    EXPECT_EQ(c.mode, DlMonitorMode::kEveryCaller) << "API " << sdk;
    EXPECT_TRUE(c.why.empty()) << c.why;
  }
}

TEST(DlMonitorMode, NoSdkLevelOffAndroid) {
#if !defined(__ANDROID__)
  EXPECT_EQ(AndroidSdkLevel(), 0);
#endif
}

}  // namespace
}  // namespace jp::plt
