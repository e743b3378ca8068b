// Valid config documents: defaults, every key landing in the right field, unknown keys as warnings,
// limits accepted right at their boundary, and Config -> JSON -> Config round trips.
#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "hook/config.h"

namespace jp {
namespace {

// The full example of docs/config.md (ConfigDocTest below checks that the two stay the same).
constexpr const char* kFullExample = R"({
  "enabled": true,
  "sample_rate": 0.2,
  "targeting": {
    "app_versions": ["5.12.0", "5.13.*"],
    "min_api": 24,
    "max_api": 34,
    "networks": ["wifi", "ethernet"],
    "device_ids": ["qa-pixel-7", "qa-galaxy-s9"]
  },
  "input":   { "enabled": true, "lag_ms": 150, "anr_ms": 4000, "android_api": 33 },
  "idle":    { "enabled": true, "lag_ms": 300, "record_min_us": 250 },
  "barrier": { "enabled": true, "check_ms": 500, "leak_ms": 2500, "auto_remove": true },
  "looper":  { "enabled": false, "source": "poll", "poll_library": "libutils.so", "lag_ms": 600,
               "anr_ms": 4500, "history_ms": 20000, "sample_after_ms": 60, "sample_interval_ms": 40,
               "record_min_us": 0 },
  "timeline": { "capacity": 16384, "file": "/data/data/com.example.app/files/jankprobe.ring" },
  "report": { "key_packages": ["com.example.", "org.example.feed."], "max_reports_per_minute": 5,
              "max_stack_frames": 48 },
  "device": { "device_id": "7b6c1a0e-3f9d-4c55-9a0e-2d4f1c8b9e31", "app_version": "5.13.2",
              "api_level": 33, "network": "wifi" }
})";

Config MustParse(std::string_view json, const DeviceFacts& defaults = DeviceFacts{}) {
  ConfigParseResult r = ParseConfig(json, defaults);
  EXPECT_TRUE(r.ok()) << r.error;
  return r.ok() ? *r.config : Config{};
}

TEST(ConfigParserTest, EmptyObjectGivesDocumentedDefaults) {
  ConfigParseResult r = ParseConfig("{}");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.warnings.empty());
  const Config& c = *r.config;
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.sample_rate, 1.0);
  EXPECT_TRUE(c.input.enabled);
  EXPECT_EQ(c.input.lag_ms, 100);
  EXPECT_EQ(c.input.anr_ms, 5000);
  EXPECT_EQ(c.input.android_api, 0);
  EXPECT_EQ(c.idle.lag_ms, 200);
  EXPECT_EQ(c.idle.record_min_us, 1000);
  EXPECT_EQ(c.barrier.check_ms, 1000);
  EXPECT_EQ(c.barrier.leak_ms, 3000);
  EXPECT_FALSE(c.barrier.auto_remove);
  EXPECT_EQ(c.looper.source, LooperSource::kAuto);
  EXPECT_EQ(c.looper.poll_library, "libutils.so");
  EXPECT_EQ(c.looper.lag_ms, 700);
  EXPECT_EQ(c.looper.anr_ms, 5000);
  EXPECT_EQ(c.looper.history_ms, 10000);
  EXPECT_EQ(c.looper.sample_after_ms, 80);
  EXPECT_EQ(c.looper.sample_interval_ms, 52);
  EXPECT_EQ(c.looper.record_min_us, 1000);
  EXPECT_EQ(c.timeline.capacity, 1024u);
  EXPECT_TRUE(c.timeline.file.empty());
  EXPECT_EQ(c.report.max_reports_per_minute, 10);
  EXPECT_EQ(c.report.max_stack_frames, 64);
  EXPECT_TRUE(c.targeting.app_versions.empty());
  EXPECT_EQ(c.device.network, NetworkType::kUnknown);
  EXPECT_EQ(c, Config{});
}

TEST(ConfigParserTest, WhitespaceAroundTheRootIsFine) {
  EXPECT_TRUE(ParseConfig(" \n\t{ }\r\n ").ok());
}

TEST(ConfigParserTest, FullExampleLandsInEveryField) {
  Config c = MustParse(kFullExample);
  EXPECT_TRUE(c.enabled);
  EXPECT_DOUBLE_EQ(c.sample_rate, 0.2);
  EXPECT_EQ(c.targeting.app_versions, (std::vector<std::string>{"5.12.0", "5.13.*"}));
  EXPECT_EQ(c.targeting.min_api, 24);
  EXPECT_EQ(c.targeting.max_api, 34);
  EXPECT_EQ(c.targeting.networks, (std::vector<NetworkType>{NetworkType::kWifi, NetworkType::kEthernet}));
  EXPECT_EQ(c.targeting.device_ids, (std::vector<std::string>{"qa-pixel-7", "qa-galaxy-s9"}));
  EXPECT_EQ(c.input.lag_ms, 150);
  EXPECT_EQ(c.input.anr_ms, 4000);
  EXPECT_EQ(c.input.android_api, 33);
  EXPECT_EQ(c.idle.lag_ms, 300);
  EXPECT_EQ(c.idle.record_min_us, 250);
  EXPECT_EQ(c.barrier.check_ms, 500);
  EXPECT_EQ(c.barrier.leak_ms, 2500);
  EXPECT_TRUE(c.barrier.auto_remove);
  EXPECT_FALSE(c.looper.enabled);
  EXPECT_EQ(c.looper.source, LooperSource::kPoll);
  EXPECT_EQ(c.looper.poll_library, "libutils.so");
  EXPECT_EQ(c.looper.lag_ms, 600);
  EXPECT_EQ(c.looper.anr_ms, 4500);
  EXPECT_EQ(c.looper.history_ms, 20000);
  EXPECT_EQ(c.looper.sample_after_ms, 60);
  EXPECT_EQ(c.looper.sample_interval_ms, 40);
  EXPECT_EQ(c.looper.record_min_us, 0);
  EXPECT_EQ(c.timeline.capacity, 16384u);
  EXPECT_EQ(c.timeline.file, "/data/data/com.example.app/files/jankprobe.ring");
  EXPECT_EQ(c.report.key_packages, (std::vector<std::string>{"com.example.", "org.example.feed."}));
  EXPECT_EQ(c.report.max_reports_per_minute, 5);
  EXPECT_EQ(c.report.max_stack_frames, 48);
  EXPECT_EQ(c.device.device_id, "7b6c1a0e-3f9d-4c55-9a0e-2d4f1c8b9e31");
  EXPECT_EQ(c.device.app_version, "5.13.2");
  EXPECT_EQ(c.device.api_level, 33);
  EXPECT_EQ(c.device.network, NetworkType::kWifi);
}

TEST(ConfigParserTest, KeysNotGivenKeepTheirDefaults) {
  Config c = MustParse(R"({"input": {"lag_ms": 250}, "barrier": {"auto_remove": true}})");
  Config expected;
  expected.input.lag_ms = 250;
  expected.barrier.auto_remove = true;
  EXPECT_EQ(c, expected);
}

TEST(ConfigParserTest, IntegersZeroAndOneAreValidSampleRates) {
  EXPECT_EQ(MustParse(R"({"sample_rate": 0})").sample_rate, 0.0);
  EXPECT_EQ(MustParse(R"({"sample_rate": 1})").sample_rate, 1.0);
  EXPECT_EQ(MustParse(R"({"sample_rate": 1e-3})").sample_rate, 0.001);
}

TEST(ConfigParserTest, RangeBoundariesAreInclusive) {
  Config lo = MustParse(R"({"input": {"lag_ms": 1, "anr_ms": 1, "android_api": 21}, "timeline": {"capacity": 64},
                           "report": {"max_reports_per_minute": 1, "max_stack_frames": 1}})");
  EXPECT_EQ(lo.input.lag_ms, 1);
  EXPECT_EQ(lo.input.anr_ms, 1);
  EXPECT_EQ(lo.timeline.capacity, 64u);
  Config hi = MustParse(R"({"input": {"lag_ms": 60000, "anr_ms": 600000, "android_api": 99},
                           "timeline": {"capacity": 1048576}, "report": {"max_stack_frames": 256}})");
  EXPECT_EQ(hi.input.lag_ms, 60000);
  EXPECT_EQ(hi.input.anr_ms, 600000);
  EXPECT_EQ(hi.timeline.capacity, 1048576u);
  EXPECT_EQ(hi.report.max_stack_frames, 256);
}

// record_min_us: 0 (every call/message its own record) up to a minute; negative or past that is an error
// that names the key and keeps the running config.
TEST(ConfigParserTest, RecordMinUsIsBoundedAndNamedWhenWrong) {
  Config hi = MustParse(R"({"idle": {"record_min_us": 60000000}, "looper": {"record_min_us": 60000000}})");
  EXPECT_EQ(hi.idle.record_min_us, 60000000);
  EXPECT_EQ(hi.looper.record_min_us, 60000000);
  ConfigParseResult neg = ParseConfig(R"({"looper": {"record_min_us": -1}})");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.error.find("looper.record_min_us"), std::string::npos) << neg.error;
  ConfigParseResult big = ParseConfig(R"({"idle": {"record_min_us": 60000001}})");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error.find("idle.record_min_us"), std::string::npos) << big.error;
  Config running;
  running.looper.record_min_us = 77;
  EXPECT_FALSE(ParseConfigInto(R"({"looper": {"record_min_us": "fast"}})", &running, nullptr, nullptr));
  EXPECT_EQ(running.looper.record_min_us, 77);
}

TEST(ConfigParserTest, UnknownKeysWarnWithTheirPathAndStillParse) {
  ConfigParseResult r = ParseConfig(
      R"({"looper": {"lag_msec": 5, "lag_ms": 900}, "colour": "blue", "device": {"imei": "x"},
          "future_monitor": {"enabled": true, "deep": [[{"k": 1}]]}})");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->looper.lag_ms, 900);
  std::vector<std::string> expected = {"looper.lag_msec: unknown key", "colour: unknown key",
                                       "future_monitor: unknown key", "device.imei: unknown key"};
  for (const std::string& w : expected) {
    EXPECT_NE(std::find(r.warnings.begin(), r.warnings.end(), w), r.warnings.end()) << "missing warning " << w;
  }
  EXPECT_EQ(r.warnings.size(), expected.size());
}

TEST(ConfigParserTest, UnknownKeyNamesAreEscapedInWarnings) {
  ConfigParseResult r = ParseConfig("{\"we\\u0001ird\\\"key\": 1}");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "we\\x01ird\\x22key: unknown key");
}

TEST(ConfigParserTest, WarningsAreCappedWithACount) {
  std::string json = "{";
  for (int i = 0; i < 100; ++i) json += (i ? ",\"x" : "\"x") + std::to_string(i) + "\":0";
  json += "}";
  ConfigParseResult r = ParseConfig(json);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.warnings.size(), ConfigLimits::kMaxWarnings + 1);
  EXPECT_EQ(r.warnings.back(), "... and " + std::to_string(100 - ConfigLimits::kMaxWarnings) + " more warnings");
}

// A hostile but well-formed document: 20k members in one object. Accepted (they are just unknown keys),
// with the warning list still bounded.
TEST(ConfigParserTest, WideObjectIsAcceptedWithBoundedWarnings) {
  std::string json = "{\"idle\": {\"lag_ms\": 321}";
  for (int i = 0; i < 20000; ++i) json += ",\"k" + std::to_string(i) + "\":0";
  json += "}";
  ASSERT_LE(json.size(), ConfigLimits::kMaxDocumentBytes);
  ConfigParseResult r = ParseConfig(json);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->idle.lag_ms, 321);
  EXPECT_EQ(r.warnings.size(), ConfigLimits::kMaxWarnings + 1);
}

TEST(ConfigParserTest, ParseIntoAcceptsNullOutputs) {
  Config running;
  running.idle.lag_ms = 777;
  EXPECT_FALSE(ParseConfigInto("{\"idle\": {\"lag_ms\": -1}}", &running, nullptr, nullptr));
  EXPECT_EQ(running.idle.lag_ms, 777);
  EXPECT_TRUE(ParseConfigInto("{\"idle\": {\"lag_ms\": 5}}", &running, nullptr, nullptr));
  EXPECT_EQ(running.idle.lag_ms, 5);
}

TEST(ConfigParserTest, SamplingWithoutDeviceIdWarns) {
  ConfigParseResult r = ParseConfig(R"({"sample_rate": 0.5})");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("sample_rate: a share below 1 needs device.device_id"), std::string::npos);
  EXPECT_TRUE(ParseConfig(R"({"sample_rate": 0.5, "device": {"device_id": "d"}})").warnings.empty());
}

TEST(ConfigParserTest, NestingUpToTheLimitIsAccepted) {
  // 16 levels in total: the root object plus 15 nested ones under an unknown key.
  std::string json;
  for (int i = 0; i < ConfigLimits::kMaxDepth; ++i) json += "{\"a\":";
  json += "1";
  for (int i = 0; i < ConfigLimits::kMaxDepth; ++i) json += "}";
  ConfigParseResult r = ParseConfig(json);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.warnings, std::vector<std::string>{"a: unknown key"});
}

TEST(ConfigParserTest, DocumentSizeLimitIsExact) {
  std::string at_limit = "{}" + std::string(ConfigLimits::kMaxDocumentBytes - 2, ' ');
  EXPECT_TRUE(ParseConfig(at_limit).ok());
  ConfigParseResult over = ParseConfig(at_limit + " ");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error.find("262145 bytes, larger than the 262144-byte limit"), std::string::npos) << over.error;
}

TEST(ConfigParserTest, StringLimitIsExact) {
  std::string key(ConfigLimits::kMaxStringBytes, 'k');
  EXPECT_TRUE(ParseConfig("{\"" + key + "\": 1}").ok());
  EXPECT_FALSE(ParseConfig("{\"" + key + "k\": 1}").ok());
}

TEST(ConfigParserTest, Utf8StringsAreKeptByteExact) {
  Config c = MustParse("{\"device\": {\"device_id\": \"\xe8\xae\xbe\xe5\xa4\x87-\\u00e9-\xf0\x9f\x93\xb1\"}}");
  EXPECT_EQ(c.device.device_id, "\xe8\xae\xbe\xe5\xa4\x87-\xc3\xa9-\xf0\x9f\x93\xb1");
}

TEST(ConfigParserTest, EmptyRingFileMeansInMemory) {
  EXPECT_TRUE(MustParse(R"({"timeline": {"file": ""}})").timeline.file.empty());
}

TEST(ConfigParserTest, DeviceFactsFallBackToTheGivenDefaults) {
  DeviceFacts at_start;
  at_start.device_id = "abc";
  at_start.app_version = "1.0";
  at_start.api_level = 30;
  at_start.network = NetworkType::kCellular;
  Config c = MustParse(R"({"device": {"network": "wifi"}})", at_start);
  EXPECT_EQ(c.device.device_id, "abc");
  EXPECT_EQ(c.device.app_version, "1.0");
  EXPECT_EQ(c.device.api_level, 30);
  EXPECT_EQ(c.device.network, NetworkType::kWifi);
  EXPECT_EQ(MustParse("{}", at_start).device, at_start);
}

TEST(ConfigParserTest, ParseIntoReplacesOnSuccessAndKeepsDeviceFacts) {
  Config running;
  running.device.device_id = "kept";
  std::string error = "stale";
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseConfigInto(R"({"idle": {"lag_ms": 999}, "typo": 1})", &running, &error, &warnings));
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(running.idle.lag_ms, 999);
  EXPECT_EQ(running.device.device_id, "kept");
  EXPECT_EQ(warnings, std::vector<std::string>{"typo: unknown key"});
  // Keys absent from the new document go back to their defaults: a remote flag is a whole state, not a patch.
  ASSERT_TRUE(ParseConfigInto("{}", &running, nullptr, nullptr));
  EXPECT_EQ(running.idle.lag_ms, 200);
}

TEST(ConfigParserTest, FullExampleRoundTripsThroughJson) {
  Config c = MustParse(kFullExample);
  std::string json = ConfigToJson(c);
  ConfigParseResult again = ParseConfig(json);
  ASSERT_TRUE(again.ok()) << again.error << "\n" << json;
  EXPECT_TRUE(again.warnings.empty());
  EXPECT_EQ(*again.config, c);
}

TEST(ConfigParserTest, DefaultsRoundTripThroughJson) {
  ConfigParseResult again = ParseConfig(ConfigToJson(Config{}));
  ASSERT_TRUE(again.ok()) << again.error;
  EXPECT_EQ(*again.config, Config{});
}

TEST(ConfigParserTest, OddSampleRatesRoundTripExactly) {
  for (double rate : {0.1, 1.0 / 3.0, 0.123456789012345678, 5e-324, 0.9999999999999999}) {
    Config c;
    c.sample_rate = rate;
    c.device.device_id = "d";
    Config back = MustParse(ConfigToJson(c));
    EXPECT_EQ(back.sample_rate, rate);
  }
}

TEST(ConfigParserTest, StringsNeedingEscapesRoundTrip) {
  Config c;
  c.device.device_id = "quote\" backslash\\ tab\t unicode \xc3\xa9";
  c.report.key_packages = {"com.\"odd\"."};
  Config back = MustParse(ConfigToJson(c));
  EXPECT_EQ(back, c);
}

}  // namespace
}  // namespace jp

namespace jp {
namespace {

std::string ReadDoc() {
  std::ifstream in(std::string(JP_SOURCE_DIR) + "/docs/config.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Dotted paths of every scalar or list in an object: {"a": {"b": 1}} -> "a.b".
void CollectKeys(const rapidjson::Value& v, const std::string& prefix, std::set<std::string>* out) {
  for (const auto& m : v.GetObject()) {
    std::string key = prefix + m.name.GetString();
    if (m.value.IsObject()) {
      CollectKeys(m.value, key + ".", out);
    } else {
      out->insert(key);
    }
  }
}

TEST(ConfigDocTest, FullExampleInTheDocParsesToTheSameConfig) {
  std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty()) << "docs/config.md not found under " << JP_SOURCE_DIR;
  size_t heading = doc.find("## Full example");
  ASSERT_NE(heading, std::string::npos);
  size_t begin = doc.find("```json\n", heading);
  ASSERT_NE(begin, std::string::npos);
  begin += 8;
  size_t end = doc.find("```", begin);
  ASSERT_NE(end, std::string::npos);
  ConfigParseResult from_doc = ParseConfig(std::string_view(doc).substr(begin, end - begin));
  ASSERT_TRUE(from_doc.ok()) << from_doc.error;
  EXPECT_TRUE(from_doc.warnings.empty());
  EXPECT_EQ(*from_doc.config, MustParse(kFullExample));
}

TEST(ConfigDocTest, SchemaTablesListExactlyTheKeysTheParserKnows) {
  std::string doc = ReadDoc();
  std::set<std::string> documented;
  std::regex row("\\n\\| `([a-z_.]+)` \\|");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it) {
    documented.insert((*it)[1]);
  }
  // The full example sets every optional key, so its JSON form has every key of the schema.
  rapidjson::Document written;
  written.Parse(ConfigToJson(MustParse(kFullExample)).c_str());
  ASSERT_TRUE(written.IsObject());
  std::set<std::string> known;
  CollectKeys(written, "", &known);
  EXPECT_EQ(documented, known);
}

}  // namespace
}  // namespace jp
