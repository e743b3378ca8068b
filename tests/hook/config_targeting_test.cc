// Sampling and targeting: the hash is the documented one and stable, its shares match sample_rate over
// many devices, and every targeting rule decides (and explains) on its own.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hook/config.h"

namespace jp {
namespace {

Config WithDevice(const char* id, const char* version = "2.0.0", int api = 30,
                  NetworkType network = NetworkType::kWifi) {
  Config c;
  c.device.device_id = id;
  c.device.app_version = version;
  c.device.api_level = api;
  c.device.network = network;
  return c;
}

bool Runs(const Config& c, std::string* why = nullptr) {
  std::string reason;
  bool run = ShouldRun(c, &reason);
  EXPECT_FALSE(reason.empty());
  if (why) *why = reason;
  return run;
}

// Values computed outside this code base (a separate Python implementation of FNV-1a 64 + fmix64, see
// docs/config.md). They pin the algorithm: changing it would reshuffle which devices are sampled in.
TEST(SampleHashTest, MatchesTheDocumentedAlgorithm) {
  EXPECT_DOUBLE_EQ(SampleHash(""), 0.93676944839044);
  EXPECT_DOUBLE_EQ(SampleHash("a"), 0.5102945176565711);
  EXPECT_DOUBLE_EQ(SampleHash("device-42"), 0.8915654570925227);
  EXPECT_DOUBLE_EQ(SampleHash("8f14e45f-ceea-467f-a0e6-1b3a6c1e0a7d"), 0.03702907953739332);
}

TEST(SampleHashTest, StableAcrossCallsAndInUnitInterval) {
  for (int i = 0; i < 1000; ++i) {
    std::string id = "id-" + std::to_string(i);
    double h = SampleHash(id);
    EXPECT_EQ(h, SampleHash(id));
    EXPECT_GE(h, 0.0);
    EXPECT_LT(h, 1.0);
  }
}

TEST(SampleHashTest, ShouldRunDecidesTheSameEveryTime) {
  Config c = WithDevice("stable-device");
  c.sample_rate = 0.5;
  std::string first;
  bool decision = Runs(c, &first);
  for (int i = 0; i < 100; ++i) {
    std::string again;
    EXPECT_EQ(Runs(c, &again), decision);
    EXPECT_EQ(again, first);
  }
}

// The share of 100k synthetic devices sampled in is within one percentage point of sample_rate, for
// several id shapes (sequential names, bare numbers, UUID-like strings).
TEST(SampleHashTest, ShareOfDevicesMatchesSampleRate) {
  constexpr int kDevices = 100000;
  const std::vector<double> rates = {0.01, 0.1, 0.25, 0.5, 0.9};
  for (int shape = 0; shape < 3; ++shape) {
    std::vector<int> in(rates.size(), 0);
    for (int i = 0; i < kDevices; ++i) {
      char id[64];
      if (shape == 0) std::snprintf(id, sizeof id, "device-%d", i);
      if (shape == 1) std::snprintf(id, sizeof id, "%d", i);
      if (shape == 2) std::snprintf(id, sizeof id, "%08x-1b2c-4d3e-8f40-%012x", i * 2654435761u, i);
      Config c = WithDevice(id);
      for (size_t r = 0; r < rates.size(); ++r) {
        c.sample_rate = rates[r];
        in[r] += ShouldRun(c, nullptr) ? 1 : 0;
      }
    }
    for (size_t r = 0; r < rates.size(); ++r) {
      double share = static_cast<double>(in[r]) / kDevices;
      EXPECT_NEAR(share, rates[r], 0.01) << "id shape " << shape << ", rate " << rates[r];
    }
  }
}

// Raising the rate only adds devices: nobody sampled in at 10% drops out at 20%.
TEST(SampleHashTest, RaisingTheRateOnlyAddsDevices) {
  for (int i = 0; i < 10000; ++i) {
    Config c = WithDevice(("mono-" + std::to_string(i)).c_str());
    c.sample_rate = 0.1;
    bool at_low = ShouldRun(c, nullptr);
    c.sample_rate = 0.2;
    if (at_low) {
      EXPECT_TRUE(ShouldRun(c, nullptr)) << i;
    }
  }
}

TEST(ShouldRunTest, ReasonsNameTheHashAndTheRate) {
  Config c = WithDevice("device-42");  // hash 0.8916
  c.sample_rate = 0.5;
  std::string why;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "sampled out: hash 0.8916 >= sample_rate 0.5");
  c.sample_rate = 0.95;
  EXPECT_TRUE(Runs(c, &why));
  EXPECT_EQ(why, "on: sampled in: hash 0.8916 < sample_rate 0.95");
}

TEST(ShouldRunTest, DefaultsRunEverywhere) {
  std::string why;
  EXPECT_TRUE(Runs(Config{}, &why));
  EXPECT_EQ(why, "on: sample_rate 1 includes every device");
}

TEST(ShouldRunTest, MasterSwitchWinsOverEverything) {
  Config c = WithDevice("qa");
  c.targeting.device_ids = {"qa"};
  c.enabled = false;
  std::string why;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "disabled: enabled is false");
}

TEST(ShouldRunTest, ZeroRateSamplesEveryoneOut) {
  Config c = WithDevice("a");  // hash 0.51
  c.sample_rate = 0.0;
  std::string why;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "sampled out: sample_rate 0");
}

TEST(ShouldRunTest, PartialRateWithoutDeviceIdIsSampledOut) {
  Config c;
  c.sample_rate = 0.999;
  std::string why;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "sampled out: no device.device_id to sample on (sample_rate 0.999)");
}

TEST(ShouldRunTest, AlwaysOnListBypassesSamplingAndRules) {
  Config c = WithDevice("device-42", "1.0.0", 19, NetworkType::kCellular);
  c.sample_rate = 0.0;
  c.targeting.app_versions = {"9.9.9"};
  c.targeting.min_api = 24;
  c.targeting.networks = {NetworkType::kWifi};
  EXPECT_FALSE(Runs(c));
  c.targeting.device_ids = {"other", "device-42"};
  std::string why;
  EXPECT_TRUE(Runs(c, &why));
  EXPECT_EQ(why, "on: device id is listed in targeting.device_ids");
}

TEST(ShouldRunTest, EmptyDeviceIdNeverMatchesTheAlwaysOnList) {
  Config c;
  c.sample_rate = 0.0;
  c.targeting.device_ids = {""};  // the parser refuses "", but a hand-built config must not match it either
  EXPECT_FALSE(Runs(c));
}

TEST(ShouldRunTest, AppVersionRule) {
  Config c = WithDevice("x", "5.13.2");
  std::string why;
  c.targeting.app_versions = {"5.12.0", "5.13.2"};
  EXPECT_TRUE(Runs(c));
  c.targeting.app_versions = {"5.12.0", "5.13"};
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "not targeted: app version 5.13.2 not in targeting.app_versions");
  c.targeting.app_versions = {"5.13.*"};
  EXPECT_TRUE(Runs(c));
  c.targeting.app_versions = {"5.1*"};
  EXPECT_TRUE(Runs(c));
  c.targeting.app_versions = {"5.13.2.*"};
  EXPECT_FALSE(Runs(c));
  c.targeting.app_versions = {"*"};
  EXPECT_TRUE(Runs(c));
  c.device.app_version.clear();
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "not targeted: app version unknown (no device.app_version) and targeting.app_versions is set");
}

TEST(ShouldRunTest, ApiLevelRange) {
  Config c = WithDevice("x", "1", 23);
  std::string why;
  c.targeting.min_api = 24;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "not targeted: api level 23 below min 24");
  c.device.api_level = 24;
  EXPECT_TRUE(Runs(c));
  c.targeting.max_api = 30;
  c.device.api_level = 30;
  EXPECT_TRUE(Runs(c));
  c.device.api_level = 31;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "not targeted: api level 31 above max 30");
  c.targeting.min_api = 0;
  c.device.api_level = 5;
  EXPECT_TRUE(Runs(c)) << "only an upper bound";
  c.device.api_level = 0;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "not targeted: api level unknown (no device.api_level) and targeting has an api range");
}

TEST(ShouldRunTest, NetworkRule) {
  Config c = WithDevice("x", "1", 30, NetworkType::kCellular);
  std::string why;
  c.targeting.networks = {NetworkType::kWifi, NetworkType::kEthernet};
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "not targeted: network cellular not in targeting.networks (wifi, ethernet)");
  c.device.network = NetworkType::kEthernet;
  EXPECT_TRUE(Runs(c));
  c.device.network = NetworkType::kUnknown;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why, "not targeted: network unknown not in targeting.networks (wifi, ethernet)");
  c.targeting.networks.clear();
  EXPECT_TRUE(Runs(c)) << "no rule, no restriction";
}

TEST(ShouldRunTest, TargetingIsCheckedBeforeSampling) {
  Config c = WithDevice("a", "1.0", 30);  // hash 0.51: sampled in at 0.9
  c.sample_rate = 0.9;
  EXPECT_TRUE(Runs(c));
  c.targeting.min_api = 31;
  std::string why;
  EXPECT_FALSE(Runs(c, &why));
  EXPECT_EQ(why.rfind("not targeted:", 0), 0u) << why;
}

TEST(ShouldRunTest, ParsedDocumentDecidesLikeTheStruct) {
  ConfigParseResult r = ParseConfig(R"({"sample_rate": 0.5, "targeting": {"min_api": 24, "networks": ["wifi"]},
      "device": {"device_id": "8f14e45f-ceea-467f-a0e6-1b3a6c1e0a7d", "api_level": 29, "network": "wifi"}})");
  ASSERT_TRUE(r.ok()) << r.error;
  std::string why;
  EXPECT_TRUE(ShouldRun(*r.config, &why));
  EXPECT_EQ(why, "on: sampled in: hash 0.0370 < sample_rate 0.5");
  EXPECT_FALSE(ShouldRun(*r.config, nullptr) != true);
}

TEST(ShouldRunTest, NullReasonPointerIsAllowed) {
  Config c;
  c.enabled = false;
  EXPECT_FALSE(ShouldRun(c, nullptr));
}

}  // namespace
}  // namespace jp
