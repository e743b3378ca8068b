// Whether this device runs the plugin under a config: the master switch, the always-on list, the
// targeting rules, then the sampling share. The order fixes which reason is reported when several apply.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "hook/config.h"

namespace jp {
namespace {

// FNV-1a 64 (offset basis and prime from the FNV reference), byte by byte, so it is the same on every ABI
// and endianness.
uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// MurmurHash3's 64-bit finaliser. FNV-1a of ids that differ only in their last characters differ mostly in
// low bits; this spreads every input bit over the top bits the sample position is taken from.
uint64_t Fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

std::string Format(const char* fmt, double a, double b) {
  char buf[96];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

bool VersionMatches(const std::string& rule, const std::string& version) {
  if (!rule.empty() && rule.back() == '*') {
    std::string_view prefix(rule.data(), rule.size() - 1);
    return std::string_view(version).substr(0, prefix.size()) == prefix;
  }
  return rule == version;
}

std::string NetworkList(const std::vector<NetworkType>& networks) {
  std::string out;
  for (NetworkType n : networks) {
    if (!out.empty()) out += ", ";
    out += NetworkTypeName(n);
  }
  return out;
}

// The targeting rules other than the always-on list. Empty `why` on success.
bool Targeted(const Config& c, std::string* why) {
  const TargetingConfig& t = c.targeting;
  const DeviceFacts& d = c.device;
  if (!t.app_versions.empty()) {
    if (d.app_version.empty()) {
      *why = "not targeted: app version unknown (no device.app_version) and targeting.app_versions is set";
      return false;
    }
    bool match = false;
    for (const std::string& rule : t.app_versions) match = match || VersionMatches(rule, d.app_version);
    if (!match) {
      *why = "not targeted: app version " + d.app_version + " not in targeting.app_versions";
      return false;
    }
  }
  if ((t.min_api > 0 || t.max_api > 0) && d.api_level <= 0) {
    *why = "not targeted: api level unknown (no device.api_level) and targeting has an api range";
    return false;
  }
  if (t.min_api > 0 && d.api_level < t.min_api) {
    *why = "not targeted: api level " + std::to_string(d.api_level) + " below min " + std::to_string(t.min_api);
    return false;
  }
  if (t.max_api > 0 && d.api_level > t.max_api) {
    *why = "not targeted: api level " + std::to_string(d.api_level) + " above max " + std::to_string(t.max_api);
    return false;
  }
  if (!t.networks.empty()) {
    bool match = false;
    for (NetworkType n : t.networks) match = match || n == d.network;
    if (!match) {
      *why = std::string("not targeted: network ") + NetworkTypeName(d.network) + " not in targeting.networks (" +
             NetworkList(t.networks) + ")";
      return false;
    }
  }
  return true;
}

}  // namespace

const char* NetworkTypeName(NetworkType type) {
  switch (type) {
    case NetworkType::kWifi: return "wifi";
    case NetworkType::kCellular: return "cellular";
    case NetworkType::kEthernet: return "ethernet";
    case NetworkType::kOther: return "other";
    case NetworkType::kNone: return "none";
    case NetworkType::kUnknown: break;
  }
  return "unknown";
}

double SampleHash(std::string_view device_id) {
  // The top 53 bits fill a double's mantissa exactly: the result is in [0, 1) and never rounds up to 1.
  return static_cast<double>(Fmix64(Fnv1a64(device_id)) >> 11) * 0x1.0p-53;
}

bool ShouldRun(const Config& c, std::string* why) {
  std::string reason;
  bool run = false;
  bool listed = false;
  if (!c.device.device_id.empty()) {
    for (const std::string& id : c.targeting.device_ids) listed = listed || id == c.device.device_id;
  }
  if (!c.enabled) {
    reason = "disabled: enabled is false";
  } else if (listed) {
    reason = "on: device id is listed in targeting.device_ids";
    run = true;
  } else if (!Targeted(c, &reason)) {
    run = false;
  } else if (c.sample_rate >= 1.0) {
    reason = "on: sample_rate 1 includes every device";
    run = true;
  } else if (c.sample_rate <= 0.0) {
    reason = "sampled out: sample_rate 0";
  } else if (c.device.device_id.empty()) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "sampled out: no device.device_id to sample on (sample_rate %g)", c.sample_rate);
    reason = buf;
  } else {
    double h = SampleHash(c.device.device_id);
    run = h < c.sample_rate;
    reason = run ? Format("on: sampled in: hash %.4f < sample_rate %g", h, c.sample_rate)
                 : Format("sampled out: hash %.4f >= sample_rate %g", h, c.sample_rate);
  }
  if (why) *why = std::move(reason);
  return run;
}

}  // namespace jp
