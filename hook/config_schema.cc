// The schema of docs/config.md, applied to a parsed document. Each block reads its keys through an
// ObjectReader, which checks the type and range of one key at a time, names the key path in every error
// and remembers which keys it consumed, so that whatever is left over becomes an "unknown key" warning.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hook/config_schema.h"

namespace jp {
namespace {

using rapidjson::Value;

constexpr size_t kMaxSegmentBytes = 64;
constexpr size_t kMaxQuotedBytes = 48;
constexpr size_t kMaxPathBytes = 4095;  // PATH_MAX - 1 on Linux and Android

std::string EscapeBounded(std::string_view text, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_bytes; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

std::string FormatDouble(double d) {
  char buf[40];
  // An integral double was still written as a fraction or an exponent ("700.0", "7e2"): show it as one.
  if (d == std::floor(d) && std::fabs(d) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.1f", d);
    return buf;
  }
  // Otherwise the shortest form that reads back the same: "0.1" rather than "0.10000000000000001".
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

std::string FormatBound(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

std::string JoinNames(const std::vector<const char*>& names) {
  std::string out;
  for (const char* n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

struct NetworkName {
  const char* name;
  NetworkType type;
};
constexpr NetworkName kNetworkNames[] = {
    {"wifi", NetworkType::kWifi},   {"cellular", NetworkType::kCellular}, {"ethernet", NetworkType::kEthernet},
    {"other", NetworkType::kOther}, {"none", NetworkType::kNone},
};

class Context {
 public:
  explicit Context(SchemaReport* report) : report_(report) {}
  bool Fail(const std::string& path, const std::string& message) {
    report_->error = path.empty() ? message : path + ": " + message;
    return false;
  }
  void Warn(const std::string& path, const std::string& message) {
    if (report_->warnings.size() < ConfigLimits::kMaxWarnings) {
      report_->warnings.push_back(path + ": " + message);
    } else {
      ++suppressed_;
    }
  }
  void Finish() {
    if (suppressed_ > 0) {
      report_->warnings.push_back("... and " + std::to_string(suppressed_) + " more warnings");
    }
  }

 private:
  SchemaReport* report_;
  size_t suppressed_ = 0;
};

class ObjectReader {
 public:
  ObjectReader(const Value& object, std::string path, Context* ctx)
      : object_(object), path_(std::move(path)), ctx_(ctx), used_(object.MemberCount(), false) {}

  std::string PathOf(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  Context* ctx() const { return ctx_; }

  // The member's value, or null if absent. Marks it as consumed.
  const Value* Find(const char* key) {
    size_t i = 0;
    for (auto it = object_.MemberBegin(); it != object_.MemberEnd(); ++it, ++i) {
      if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == key) {
        used_[i] = true;
        return &it->value;
      }
    }
    return nullptr;
  }

  bool Bool(const char* key, bool* out) {
    const Value* v = Find(key);
    if (!v) return true;
    if (!v->IsBool()) return ctx_->Fail(PathOf(key), "expected true or false, got " + DescribeJsonValue(*v));
    *out = v->GetBool();
    return true;
  }

  bool Int(const char* key, int64_t lo, int64_t hi, int32_t* out) {
    const Value* v = Find(key);
    return !v || CheckInt(*v, PathOf(key), lo, hi, out);
  }

  bool Number(const char* key, double lo, double hi, double* out) {
    const Value* v = Find(key);
    if (!v) return true;
    // The reader never produces NaN or infinity (those tokens are not JSON), so a range check suffices.
    if (!v->IsNumber() || !(v->GetDouble() >= lo && v->GetDouble() <= hi)) {
      return ctx_->Fail(PathOf(key), "expected a number in [" + FormatBound(lo) + ", " + FormatBound(hi) +
                                         "], got " + DescribeJsonValue(*v));
    }
    *out = v->GetDouble();
    return true;
  }

  // A string of at most max_bytes bytes, without NUL (it ends up in C strings and file names).
  bool String(const char* key, size_t max_bytes, std::string* out) {
    const Value* v = Find(key);
    return !v || CheckString(*v, PathOf(key), 0, max_bytes, out);
  }

  bool StringList(const char* key, size_t max_entries, size_t max_bytes, std::vector<std::string>* out) {
    const Value* v = Find(key);
    if (!v) return true;
    std::string path = PathOf(key);
    if (!CheckArray(*v, path, max_entries, "strings")) return false;
    std::vector<std::string> list;
    list.reserve(v->Size());
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      std::string s;
      if (!CheckString((*v)[i], path + "[" + std::to_string(i) + "]", 1, max_bytes, &s)) return false;
      list.push_back(std::move(s));
    }
    *out = std::move(list);
    return true;
  }

  bool Network(const Value& v, const std::string& path, bool allow_unknown, NetworkType* out) {
    std::vector<const char*> names;
    for (const NetworkName& n : kNetworkNames) names.push_back(n.name);
    if (allow_unknown) names.push_back("unknown");
    if (v.IsString()) {
      std::string_view s(v.GetString(), v.GetStringLength());
      for (const NetworkName& n : kNetworkNames) {
        if (s == n.name) {
          *out = n.type;
          return true;
        }
      }
      if (allow_unknown && s == "unknown") {
        *out = NetworkType::kUnknown;
        return true;
      }
    }
    return ctx_->Fail(path, "expected one of " + JoinNames(names) + ", got " + DescribeJsonValue(v));
  }

  // A nested block: *out is null when absent; anything but an object is an error.
  bool Object(const char* key, const Value** out) {
    const Value* v = Find(key);
    *out = nullptr;
    if (!v) return true;
    if (!v->IsObject()) return ctx_->Fail(PathOf(key), "expected an object, got " + DescribeJsonValue(*v));
    *out = v;
    return true;
  }

  bool CheckArray(const Value& v, const std::string& path, size_t max_entries, const char* of) {
    if (!v.IsArray()) {
      return ctx_->Fail(path, std::string("expected an array of ") + of + ", got " + DescribeJsonValue(v));
    }
    if (v.Size() > max_entries) {
      return ctx_->Fail(path, "expected at most " + std::to_string(max_entries) + " entries, got " +
                                  std::to_string(v.Size()));
    }
    return true;
  }

  bool CheckInt(const Value& v, const std::string& path, int64_t lo, int64_t hi, int32_t* out) {
    // Doubles are refused even when integral ("100.0", "1e2"): a threshold written as a fraction is more
    // likely a unit mistake than a choice.
    if (!v.IsInt64() || v.GetInt64() < lo || v.GetInt64() > hi) {
      return ctx_->Fail(path, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                  "], got " + DescribeJsonValue(v));
    }
    *out = static_cast<int32_t>(v.GetInt64());
    return true;
  }

  bool CheckString(const Value& v, const std::string& path, size_t min_bytes, size_t max_bytes, std::string* out) {
    std::string expected = min_bytes > 0 ? "a non-empty string" : "a string";
    expected += " of at most " + std::to_string(max_bytes) + " bytes";
    if (!v.IsString()) return ctx_->Fail(path, "expected " + expected + ", got " + DescribeJsonValue(v));
    size_t n = v.GetStringLength();
    if (n < min_bytes || n > max_bytes) {
      return ctx_->Fail(path, "expected " + expected + ", got " + std::to_string(n) + " bytes");
    }
    if (std::memchr(v.GetString(), 0, n) != nullptr) {
      return ctx_->Fail(path, "expected a string without NUL characters, got one with \\u0000");
    }
    out->assign(v.GetString(), n);
    return true;
  }

  // Everything not consumed by a Find() is a key this version does not know: kept as a warning, so a
  // newer remote flag still works on an older plugin but a typo does not go unnoticed.
  void WarnUnknownKeys() {
    size_t i = 0;
    for (auto it = object_.MemberBegin(); it != object_.MemberEnd(); ++it, ++i) {
      if (used_[i]) continue;
      std::string key = PathSegment(std::string_view(it->name.GetString(), it->name.GetStringLength()));
      ctx_->Warn(path_.empty() ? key : path_ + "." + key, "unknown key");
    }
  }

 private:
  const Value& object_;
  std::string path_;
  Context* ctx_;
  std::vector<bool> used_;
};

// Reads the block named `key` of `parent` with `read`, which gets an ObjectReader for it.
template <typename ReadBlock>
bool Block(ObjectReader& parent, const char* key, ReadBlock read) {
  const Value* v = nullptr;
  if (!parent.Object(key, &v)) return false;
  if (!v) return true;
  ObjectReader r(*v, parent.PathOf(key), parent.ctx());
  if (!read(r)) return false;
  r.WarnUnknownKeys();
  return true;
}

// Two thresholds that must be ordered (a lag bound above its ANR bound would never fire as a lag).
bool NotBelow(ObjectReader& r, const char* key, int32_t value, const char* other_key, int32_t other) {
  if (value >= other) return true;
  return r.ctx()->Fail(r.PathOf(key), std::string("expected at least ") + r.PathOf(other_key) + " (" +
                                          std::to_string(other) + "), got " + std::to_string(value));
}

bool ReadTargeting(ObjectReader& r, TargetingConfig* t) {
  if (!r.StringList("app_versions", ConfigLimits::kMaxListEntries, ConfigLimits::kMaxIdBytes, &t->app_versions) ||
      !r.Int("min_api", 1, 99, &t->min_api) || !r.Int("max_api", 1, 99, &t->max_api) ||
      !r.StringList("device_ids", ConfigLimits::kMaxDeviceIds, ConfigLimits::kMaxIdBytes, &t->device_ids)) {
    return false;
  }
  if (t->min_api > 0 && t->max_api > 0 && !NotBelow(r, "max_api", t->max_api, "min_api", t->min_api)) return false;
  if (const Value* v = r.Find("networks")) {
    std::string path = r.PathOf("networks");
    if (!r.CheckArray(*v, path, ConfigLimits::kMaxListEntries, "network names")) return false;
    std::vector<NetworkType> networks;
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      NetworkType type;
      if (!r.Network((*v)[i], path + "[" + std::to_string(i) + "]", false, &type)) return false;
      networks.push_back(type);
    }
    t->networks = std::move(networks);
  }
  return true;
}

bool ReadDevice(ObjectReader& r, DeviceFacts* d) {
  if (!r.String("device_id", ConfigLimits::kMaxIdBytes, &d->device_id) ||
      !r.String("app_version", ConfigLimits::kMaxIdBytes, &d->app_version) ||
      !r.Int("api_level", 1, 99, &d->api_level)) {
    return false;
  }
  if (const Value* v = r.Find("network")) return r.Network(*v, r.PathOf("network"), true, &d->network);
  return true;
}

bool ReadInput(ObjectReader& r, InputConfig* c) {
  return r.Bool("enabled", &c->enabled) && r.Int("lag_ms", 1, 60000, &c->lag_ms) &&
         r.Int("anr_ms", 1, 600000, &c->anr_ms) && r.Int("android_api", 21, 99, &c->android_api) &&
         NotBelow(r, "anr_ms", c->anr_ms, "lag_ms", c->lag_ms);
}

bool ReadIdle(ObjectReader& r, IdleConfig* c) {
  return r.Bool("enabled", &c->enabled) && r.Int("lag_ms", 1, 60000, &c->lag_ms) &&
         r.Int("record_min_us", 0, 60000000, &c->record_min_us);
}

bool ReadBarrier(ObjectReader& r, BarrierConfig* c) {
  return r.Bool("enabled", &c->enabled) && r.Int("check_ms", 10, 60000, &c->check_ms) &&
         r.Int("leak_ms", 10, 600000, &c->leak_ms) && r.Bool("auto_remove", &c->auto_remove) &&
         NotBelow(r, "leak_ms", c->leak_ms, "check_ms", c->check_ms);
}

bool ReadLooperSource(ObjectReader& r, LooperSource* out) {
  const Value* v = r.Find("source");
  if (!v) return true;
  if (v->IsString()) {
    const std::string_view s(v->GetString(), v->GetStringLength());
    for (LooperSource source : {LooperSource::kAuto, LooperSource::kPoll, LooperSource::kPrinter}) {
      if (s == LooperSourceName(source)) {
        *out = source;
        return true;
      }
    }
  }
  return r.ctx()->Fail(r.PathOf("source"),
                       "expected one of \"auto\", \"poll\", \"printer\", got " + DescribeJsonValue(*v));
}

// A library file name ("libutils.so") or an absolute path, as the PLT engine takes a caller.
bool ReadPollLibrary(ObjectReader& r, std::string* out) {
  std::string s = *out;
  if (!r.String("poll_library", ConfigLimits::kMaxIdBytes, &s)) return false;
  if (s.empty() || (s[0] != '/' && s.find('/') != std::string::npos)) {
    return r.ctx()->Fail(r.PathOf("poll_library"),
                         "expected a library file name (\"libutils.so\") or an absolute path, got \"" +
                             EscapeBounded(s, kMaxQuotedBytes) + "\"");
  }
  *out = std::move(s);
  return true;
}

bool ReadLooper(ObjectReader& r, LooperConfig* c) {
  return r.Bool("enabled", &c->enabled) && ReadLooperSource(r, &c->source) && ReadPollLibrary(r, &c->poll_library) &&
         r.Int("lag_ms", 1, 60000, &c->lag_ms) &&
         r.Int("anr_ms", 1, 600000, &c->anr_ms) && r.Int("history_ms", 0, 600000, &c->history_ms) &&
         r.Int("sample_after_ms", 1, 60000, &c->sample_after_ms) &&
         r.Int("sample_interval_ms", 1, 10000, &c->sample_interval_ms) &&
         r.Int("record_min_us", 0, 60000000, &c->record_min_us) &&
         NotBelow(r, "anr_ms", c->anr_ms, "lag_ms", c->lag_ms);
}

bool ReadTimeline(ObjectReader& r, TimelineConfig* c) {
  int32_t capacity = static_cast<int32_t>(c->capacity);
  if (const Value* v = r.Find("capacity")) {
    int64_t lo = ConfigLimits::kMinTimelineCapacity, hi = ConfigLimits::kMaxTimelineCapacity;
    bool ok = v->IsInt64() && v->GetInt64() >= lo && v->GetInt64() <= hi &&
              (v->GetInt64() & (v->GetInt64() - 1)) == 0;
    if (!ok) {
      return r.ctx()->Fail(r.PathOf("capacity"), "expected a power of two in [" + std::to_string(lo) + ", " +
                                                     std::to_string(hi) + "], got " + DescribeJsonValue(*v));
    }
    capacity = static_cast<int32_t>(v->GetInt64());
  }
  c->capacity = static_cast<uint32_t>(capacity);
  if (!r.String("file", kMaxPathBytes, &c->file)) return false;
  if (!c->file.empty() && c->file[0] != '/') {
    return r.ctx()->Fail(r.PathOf("file"), "expected an absolute path (starting with '/') or \"\", got \"" +
                                               EscapeBounded(c->file, kMaxQuotedBytes) + "\"");
  }
  return true;
}

bool ReadReport(ObjectReader& r, ReportConfig* c) {
  return r.StringList("key_packages", ConfigLimits::kMaxListEntries, ConfigLimits::kMaxIdBytes, &c->key_packages) &&
         r.Int("max_reports_per_minute", 1, 600, &c->max_reports_per_minute) &&
         r.Int("max_stack_frames", 1, 256, &c->max_stack_frames);
}

}  // namespace

std::string PathSegment(std::string_view key) { return EscapeBounded(key, kMaxSegmentBytes); }

std::string DescribeJsonValue(const Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  if (v.IsNumber()) return FormatDouble(v.GetDouble());
  if (v.IsString()) {
    return "a string (\"" + EscapeBounded(std::string_view(v.GetString(), v.GetStringLength()), kMaxQuotedBytes) +
           "\")";
  }
  if (v.IsArray()) return "an array";
  return "an object";
}

bool ReadConfigSchema(const Value& root, Config* out, SchemaReport* report) {
  Context ctx(report);
  ObjectReader r(root, "", &ctx);
  bool ok = r.Bool("enabled", &out->enabled) && r.Number("sample_rate", 0.0, 1.0, &out->sample_rate) &&
            Block(r, "targeting", [&](ObjectReader& b) { return ReadTargeting(b, &out->targeting); }) &&
            Block(r, "input", [&](ObjectReader& b) { return ReadInput(b, &out->input); }) &&
            Block(r, "idle", [&](ObjectReader& b) { return ReadIdle(b, &out->idle); }) &&
            Block(r, "barrier", [&](ObjectReader& b) { return ReadBarrier(b, &out->barrier); }) &&
            Block(r, "looper", [&](ObjectReader& b) { return ReadLooper(b, &out->looper); }) &&
            Block(r, "timeline", [&](ObjectReader& b) { return ReadTimeline(b, &out->timeline); }) &&
            Block(r, "report", [&](ObjectReader& b) { return ReadReport(b, &out->report); }) &&
            Block(r, "device", [&](ObjectReader& b) { return ReadDevice(b, &out->device); });
  if (!ok) return false;
  r.WarnUnknownKeys();
  if (out->enabled && out->sample_rate > 0.0 && out->sample_rate < 1.0 && out->device.device_id.empty()) {
    ctx.Warn("sample_rate", "a share below 1 needs device.device_id to sample on; without it this device is "
                            "sampled out");
  }
  ctx.Finish();
  return true;
}

}  // namespace jp
