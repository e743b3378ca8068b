// Malformed and hostile config documents: each must be rejected with a message naming where the problem is
// and what was expected, and must leave a running config exactly as it was.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hook/config.h"

namespace jp {
namespace {

struct RejectCase {
  const char* name;
  std::string json;
  std::vector<std::string> expected;  // substrings of the error, each required
};

std::string Nested(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += "1";
  for (int i = 0; i < depth; ++i) s += "}";
  return s;
}

std::string ManyDeviceIds(size_t n) {
  std::string s = "{\"targeting\":{\"device_ids\":[";
  for (size_t i = 0; i < n; ++i) s += (i ? ",\"d" : "\"d") + std::to_string(i) + "\"";
  return s + "]}}";
}

std::vector<RejectCase> Cases() {
  using namespace std::string_literals;
  return {
      // Not an object, not JSON, or more than one document.
      {"empty", "", {"invalid JSON at offset 0", "The document is empty"}},
      {"whitespace_only", "  \n\t ", {"The document is empty"}},
      {"array_root", "[]", {"the config must be a JSON object, got an array"}},
      {"string_root", "\"on\"", {"must be a JSON object, got a string (\"on\")"}},
      {"null_root", "null", {"must be a JSON object, got null"}},
      {"number_root", "42", {"must be a JSON object, got 42"}},
      {"trailing_garbage", "{} garbage", {"offset 3", "The document root must not be followed by other values"}},
      {"two_documents", "{}{}", {"root must not be followed by other values"}},
      {"unterminated", "{\"enabled\": true", {"enabled: invalid JSON", "Missing a comma or '}'"}},
      {"single_quotes", "{'enabled': true}", {"Missing a name for object member"}},
      {"trailing_comma", "{\"enabled\": true,}", {"Missing a name for object member"}},
      {"comment", "{/* on */ \"enabled\": true}", {"Missing a name for object member"}},
      {"nul_byte_after_root", "{}\0{\"enabled\":false}"s, {"NUL byte at offset 2"}},
      // Wrong types.
      {"bool_as_string", R"({"enabled": "yes"})", {"enabled: expected true or false, got a string (\"yes\")"}},
      {"bool_as_number", R"({"input": {"enabled": 1}})", {"input.enabled: expected true or false, got 1"}},
      {"bool_null", R"({"enabled": null})", {"enabled: expected true or false, got null"}},
      {"rate_as_string", R"({"sample_rate": "0.5"})", {"sample_rate: expected a number in [0, 1], got a string"}},
      {"block_as_array", R"({"input": []})", {"input: expected an object, got an array"}},
      {"block_as_bool", R"({"timeline": true})", {"timeline: expected an object, got true"}},
      {"int_as_string", R"({"device": {"api_level": "30"}})", {"device.api_level: expected an integer in [1, 99], got a string (\"30\")"}},
      {"list_as_string", R"({"targeting": {"app_versions": "1.2"}})", {"targeting.app_versions: expected an array of strings, got a string"}},
      {"list_entry_number", R"({"targeting": {"app_versions": ["1.2", 3]}})", {"targeting.app_versions[1]: expected a non-empty string of at most 128 bytes, got 3"}},
      {"list_entry_array", R"({"report": {"key_packages": [["com.a"]]}})", {"report.key_packages[0]: expected a non-empty string", "got an array"}},
      // Out of range, fractions, huge numbers, NaN-ish tokens.
      {"negative_lag", R"({"input": {"lag_ms": -5}})", {"input.lag_ms: expected an integer in [1, 60000], got -5"}},
      {"zero_lag", R"({"idle": {"lag_ms": 0}})", {"idle.lag_ms: expected an integer in [1, 60000], got 0"}},
      {"fraction_for_int", R"({"input": {"lag_ms": 100.5}})", {"input.lag_ms: expected an integer in [1, 60000], got 100.5"}},
      {"integral_double_for_int", R"({"looper": {"lag_ms": 700.0}})", {"looper.lag_ms: expected an integer", "got 700.0"}},
      {"exponent_for_int", R"({"looper": {"anr_ms": 5e3}})", {"looper.anr_ms: expected an integer in [1, 600000], got 5000.0"}},
      {"int_above_int32", R"({"barrier": {"leak_ms": 4294967396}})", {"barrier.leak_ms: expected an integer in [10, 600000], got 4294967396"}},
      {"uint64_max", R"({"input": {"lag_ms": 18446744073709551615}})", {"input.lag_ms: expected an integer", "got 18446744073709551615"}},
      {"beyond_uint64", R"({"input": {"lag_ms": 99999999999999999999}})", {"input.lag_ms: expected an integer", "got 1e+20"}},
      {"number_too_big_for_double", R"({"input": {"lag_ms": 1e400}})", {"input.lag_ms: invalid JSON at offset", "Number too big to be stored in double"}},
      {"nan_token", R"({"input": {"lag_ms": NaN}})", {"input.lag_ms: invalid JSON", "Invalid value"}},
      {"infinity_token", R"({"sample_rate": Infinity})", {"sample_rate: invalid JSON", "Invalid value"}},
      {"minus_infinity_token", R"({"sample_rate": -Infinity})", {"sample_rate: invalid JSON at offset 17", "Invalid value"}},
      {"hex_number", R"({"idle": {"lag_ms": 0x10}})", {"idle.lag_ms: invalid JSON", "Missing a comma or '}'"}},
      {"leading_zero", R"({"idle": {"lag_ms": 010}})", {"idle.lag_ms: invalid JSON", "Missing a comma or '}'"}},
      {"rate_above_one", R"({"sample_rate": 1.5})", {"sample_rate: expected a number in [0, 1], got 1.5"}},
      {"rate_negative", R"({"sample_rate": -0.1})", {"sample_rate: expected a number in [0, 1], got -0.1"}},
      {"history_negative", R"({"looper": {"history_ms": -1}})", {"looper.history_ms: expected an integer in [0, 600000], got -1"}},
      {"frames_zero", R"({"report": {"max_stack_frames": 0}})", {"report.max_stack_frames: expected an integer in [1, 256], got 0"}},
      {"rate_limit_huge", R"({"report": {"max_reports_per_minute": 100000}})", {"report.max_reports_per_minute: expected an integer in [1, 600], got 100000"}},
      {"android_api_too_old", R"({"input": {"android_api": 20}})", {"input.android_api: expected an integer in [21, 99], got 20"}},
      {"capacity_not_power_of_two", R"({"timeline": {"capacity": 1000}})", {"timeline.capacity: expected a power of two in [64, 1048576], got 1000"}},
      {"capacity_too_big", R"({"timeline": {"capacity": 2097152}})", {"timeline.capacity: expected a power of two in [64, 1048576], got 2097152"}},
      {"capacity_too_small", R"({"timeline": {"capacity": 32}})", {"timeline.capacity: expected a power of two", "got 32"}},
      // Values that are fine alone but not together.
      {"anr_below_lag", R"({"input": {"anr_ms": 50}})", {"input.anr_ms: expected at least input.lag_ms (100), got 50"}},
      {"looper_anr_below_lag", R"({"looper": {"lag_ms": 6000}})", {"looper.anr_ms: expected at least looper.lag_ms (6000), got 5000"}},
      {"leak_below_check", R"({"barrier": {"check_ms": 5000}})", {"barrier.leak_ms: expected at least barrier.check_ms (5000), got 3000"}},
      {"api_range_inverted", R"({"targeting": {"min_api": 30, "max_api": 24}})", {"targeting.max_api: expected at least targeting.min_api (30), got 24"}},
      // Enumerations and strings.
      {"unknown_network_rule", R"({"targeting": {"networks": ["wifi", "lte"]}})", {"targeting.networks[1]: expected one of wifi, cellular, ethernet, other, none, got a string (\"lte\")"}},
      {"unknown_rule_cannot_be_unknown", R"({"targeting": {"networks": ["unknown"]}})", {"targeting.networks[0]: expected one of", "got a string (\"unknown\")"}},
      {"unknown_device_network", R"({"device": {"network": "5g"}})", {"device.network: expected one of wifi, cellular, ethernet, other, none, unknown, got a string (\"5g\")"}},
      {"empty_version_entry", R"({"targeting": {"app_versions": [""]}})", {"targeting.app_versions[0]: expected a non-empty string of at most 128 bytes, got 0 bytes"}},
      {"unknown_looper_source", R"({"looper": {"source": "choreographer"}})", {"looper.source: expected one of \"auto\", \"poll\", \"printer\", got a string (\"choreographer\")"}},
      {"looper_source_not_a_string", R"({"looper": {"source": 1}})", {"looper.source: expected one of \"auto\""}},
      {"empty_poll_library", R"({"looper": {"poll_library": ""}})", {"looper.poll_library: expected a library file name (\"libutils.so\") or an absolute path, got \"\""}},
      {"relative_poll_library_path", R"({"looper": {"poll_library": "lib/libutils.so"}})", {"looper.poll_library: expected a library file name (\"libutils.so\") or an absolute path, got \"lib/libutils.so\""}},
      {"relative_ring_file", R"({"timeline": {"file": "ring.bin"}})", {"timeline.file: expected an absolute path (starting with '/') or \"\", got \"ring.bin\""}},
      {"nul_in_device_id", R"({"device": {"device_id": "ab\u0000cd"}})", {"device.device_id: expected a string without NUL characters"}},
      {"device_id_too_long", "{\"device\": {\"device_id\": \"" + std::string(200, 'x') + "\"}}", {"device.device_id: expected a string of at most 128 bytes, got 200 bytes"}},
      {"too_many_device_ids", ManyDeviceIds(1025), {"targeting.device_ids: expected at most 1024 entries, got 1025"}},
      // Duplicate keys, anywhere.
      {"duplicate_root_key", R"({"enabled": true, "enabled": false})", {"enabled: duplicate key (appears more than once in the root object)"}},
      {"duplicate_nested_key", R"({"looper": {"lag_ms": 700, "anr_ms": 5000, "lag_ms": 800}})", {"looper.lag_ms: duplicate key (appears more than once in looper)"}},
      {"duplicate_in_unknown_block", R"({"future": {"x": [{"a": 1, "a": 2}]}})", {"future.x[0].a: duplicate key"}},
      // Encoding.
      {"invalid_utf8_value", "{\"device\": {\"device_id\": \"\xff\xfe\"}}", {"device.device_id: invalid JSON", "Invalid encoding in string"}},
      {"invalid_utf8_key", "{\"dev\xc3\x28ice\": 1}", {"invalid JSON", "Invalid encoding in string"}},
      {"overlong_utf8", "{\"device\": {\"app_version\": \"\xc0\xaf\"}}", {"device.app_version: invalid JSON", "Invalid encoding in string"}},
      {"truncated_utf8", "{\"device\": {\"app_version\": \"\xe4\xbd\"}}", {"device.app_version: invalid JSON", "Invalid encoding in string"}},
      {"lone_surrogate_escape", R"({"device": {"device_id": "\ud800"}})", {"device.device_id: invalid JSON", "The surrogate pair in string is invalid"}},
      {"raw_control_char", "{\"device\": {\"device_id\": \"a\tb\"}}", {"device.device_id: invalid JSON at offset 27"}},
      // Size and depth limits.
      {"nesting_17_levels", Nested(17), {"a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: nesting deeper than 16 levels"}},
      {"nesting_100k_arrays", std::string(100000, '['), {"[0][0][0]", "nesting deeper than 16 levels"}},
      {"string_10mb", "{\"device\": {\"device_id\": \"" + std::string(10 << 20, 'x') + "\"}}", {"config document is 10485789 bytes, larger than the 262144-byte limit"}},
      {"string_over_limit", "{\"device\": {\"device_id\": \"" + std::string(5000, 'x') + "\"}}", {"device.device_id: string of 5000 bytes exceeds the 4096-byte limit"}},
      {"key_over_limit", "{\"" + std::string(5000, 'k') + "\": 1}", {"kkkkkkkk...: key of 5000 bytes exceeds the 4096-byte limit"}},
      {"array_entry_over_limit", "{\"report\": {\"key_packages\": [\"a\", \"" + std::string(4097, 'p') + "\"]}}", {"report.key_packages[1]: string of 4097 bytes exceeds the 4096-byte limit"}},
  };
}

class ConfigRejectTest : public ::testing::TestWithParam<RejectCase> {};

TEST_P(ConfigRejectTest, RejectedWithSpecificMessage) {
  const RejectCase& c = GetParam();
  ConfigParseResult r = ParseConfig(c.json);
  ASSERT_FALSE(r.ok()) << c.name << " was accepted";
  EXPECT_FALSE(r.config.has_value());
  for (const std::string& want : c.expected) {
    EXPECT_NE(r.error.find(want), std::string::npos) << "error: " << r.error << "\nwanted: " << want;
  }
  EXPECT_LE(r.error.size(), 400u) << "messages stay short even for huge input: " << r.error.substr(0, 400);
}

TEST_P(ConfigRejectTest, RunningConfigStaysUntouched) {
  Config running;
  running.sample_rate = 0.25;
  running.input.lag_ms = 150;
  running.looper.enabled = false;
  running.device.device_id = "running-device";
  running.report.key_packages = {"com.example."};
  const Config before = running;
  std::string error = "stale";
  std::vector<std::string> warnings{"stale"};
  EXPECT_FALSE(ParseConfigInto(GetParam().json, &running, &error, &warnings));
  EXPECT_EQ(running, before);
  EXPECT_NE(error, "stale");
  EXPECT_FALSE(error.empty());
}

INSTANTIATE_TEST_SUITE_P(Hostile, ConfigRejectTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<RejectCase>& info) { return std::string(info.param.name); });

TEST(ConfigRejectTableTest, HasAtLeastThirtyCases) { EXPECT_GE(Cases().size(), 30u); }

}  // namespace
}  // namespace jp
