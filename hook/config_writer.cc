// Config -> JSON in the schema of docs/config.md. Every key is written, so the status output shows the
// effective value of everything, defaults included. Optional values that are unset (android_api,
// min_api/max_api, api_level = 0) are left out because 0 is outside their accepted range.
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "hook/config.h"

namespace jp {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, const char* key) { w.Key(key); }
void Str(Writer& w, const std::string& s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void StrList(Writer& w, const char* key, const std::vector<std::string>& list) {
  Key(w, key);
  w.StartArray();
  for (const std::string& s : list) Str(w, s);
  w.EndArray();
}

void OptionalInt(Writer& w, const char* key, int32_t value) {
  if (value == 0) return;
  Key(w, key);
  w.Int(value);
}

}  // namespace

std::string ConfigToJson(const Config& c) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  Key(w, "enabled"); w.Bool(c.enabled);
  Key(w, "sample_rate"); w.Double(c.sample_rate);

  Key(w, "targeting");
  w.StartObject();
  StrList(w, "app_versions", c.targeting.app_versions);
  OptionalInt(w, "min_api", c.targeting.min_api);
  OptionalInt(w, "max_api", c.targeting.max_api);
  Key(w, "networks");
  w.StartArray();
  for (NetworkType n : c.targeting.networks) w.String(NetworkTypeName(n));
  w.EndArray();
  StrList(w, "device_ids", c.targeting.device_ids);
  w.EndObject();

  Key(w, "input");
  w.StartObject();
  Key(w, "enabled"); w.Bool(c.input.enabled);
  Key(w, "lag_ms"); w.Int(c.input.lag_ms);
  Key(w, "anr_ms"); w.Int(c.input.anr_ms);
  OptionalInt(w, "android_api", c.input.android_api);
  w.EndObject();

  Key(w, "idle");
  w.StartObject();
  Key(w, "enabled"); w.Bool(c.idle.enabled);
  Key(w, "lag_ms"); w.Int(c.idle.lag_ms);
  Key(w, "record_min_us"); w.Int(c.idle.record_min_us);
  w.EndObject();

  Key(w, "barrier");
  w.StartObject();
  Key(w, "enabled"); w.Bool(c.barrier.enabled);
  Key(w, "check_ms"); w.Int(c.barrier.check_ms);
  Key(w, "leak_ms"); w.Int(c.barrier.leak_ms);
  Key(w, "auto_remove"); w.Bool(c.barrier.auto_remove);
  w.EndObject();

  Key(w, "looper");
  w.StartObject();
  Key(w, "enabled"); w.Bool(c.looper.enabled);
  Key(w, "source"); w.String(LooperSourceName(c.looper.source));
  Key(w, "poll_library"); w.String(c.looper.poll_library.c_str());
  Key(w, "lag_ms"); w.Int(c.looper.lag_ms);
  Key(w, "anr_ms"); w.Int(c.looper.anr_ms);
  Key(w, "history_ms"); w.Int(c.looper.history_ms);
  Key(w, "sample_after_ms"); w.Int(c.looper.sample_after_ms);
  Key(w, "sample_interval_ms"); w.Int(c.looper.sample_interval_ms);
  Key(w, "record_min_us"); w.Int(c.looper.record_min_us);
  w.EndObject();

  Key(w, "timeline");
  w.StartObject();
  Key(w, "capacity"); w.Uint(c.timeline.capacity);
  Key(w, "file"); Str(w, c.timeline.file);
  w.EndObject();

  Key(w, "report");
  w.StartObject();
  StrList(w, "key_packages", c.report.key_packages);
  Key(w, "max_reports_per_minute"); w.Int(c.report.max_reports_per_minute);
  Key(w, "max_stack_frames"); w.Int(c.report.max_stack_frames);
  w.EndObject();

  Key(w, "device");
  w.StartObject();
  Key(w, "device_id"); Str(w, c.device.device_id);
  Key(w, "app_version"); Str(w, c.device.app_version);
  OptionalInt(w, "api_level", c.device.api_level);
  Key(w, "network"); w.String(NetworkTypeName(c.device.network));
  w.EndObject();

  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace jp
