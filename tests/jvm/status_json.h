// The plugin's status (JankProbe.status() through the test app) as the JVM tests and benchmarks read it:
// one monitor's state and details, parsed from a fresh status on every read. Absent entries read as a
// value no real counter has (-1, UINT64_MAX, ""), so a test that asserts on them fails with the status.
#ifndef JANKPROBE_TESTS_JVM_STATUS_JSON_H_
#define JANKPROBE_TESTS_JVM_STATUS_JSON_H_

#include <rapidjson/document.h>

#include <cstdint>
#include <string>

#include "tests/jvm/app_under_test.h"

namespace jp::testing {

struct MonitorStatus {
  rapidjson::Document doc;
  const rapidjson::Value* details = nullptr;  // monitors.<name>.details; null when the monitor has none
  std::string state;  // monitors.<name>.state; "unparsable status" / "no entry" when there is none

  int64_t Int(const char* key) const { return Has(key) && (*details)[key].IsInt64() ? (*details)[key].GetInt64() : -1; }
  uint64_t Uint(const char* key) const {
    return Has(key) && (*details)[key].IsUint64() ? (*details)[key].GetUint64() : UINT64_MAX;
  }
  std::string Str(const char* key) const {
    return Has(key) && (*details)[key].IsString() ? (*details)[key].GetString() : std::string();
  }
  bool Has(const char* key) const { return details && details->IsObject() && details->HasMember(key); }
};

// Fills *s with `monitor`'s entry of a status read now.
inline void ReadStatus(const char* monitor, MonitorStatus* s) {
  s->doc.Parse(CallString("status").c_str());
  if (s->doc.HasParseError() || !s->doc.IsObject() || !s->doc.HasMember("monitors")) {
    s->state = "unparsable status";
    return;
  }
  const rapidjson::Value& monitors = s->doc["monitors"];
  if (!monitors.HasMember(monitor)) {
    s->state = "no entry";
    return;
  }
  const rapidjson::Value& m = monitors[monitor];
  s->state = m.HasMember("state") && m["state"].IsString() ? m["state"].GetString() : "no state";
  if (m.HasMember("details")) s->details = &m["details"];
}

inline MonitorStatus StatusOf(const char* monitor) {
  MonitorStatus s;
  ReadStatus(monitor, &s);
  return s;
}

// One idle handler class's figures (the idle status's per_handler entry), or found = false.
struct IdleClassFigures {
  bool found = false;
  uint64_t calls = 0, folded = 0, total_ns = 0, max_ns = 0;
};
// *classes (optional): how many classes have figures.
inline IdleClassFigures ClassFiguresOf(const std::string& handler_class, size_t* classes = nullptr) {
  IdleClassFigures f;
  const MonitorStatus s = StatusOf("idle");
  if (!s.Has("per_handler")) return f;
  const auto& per_handler = (*s.details)["per_handler"].GetArray();
  if (classes) *classes = per_handler.Size();
  for (const auto& h : per_handler) {
    if (handler_class != h["class"].GetString()) continue;
    f.found = true;
    f.calls = h["calls"].GetUint64();
    f.folded = h["folded"].GetUint64();
    f.total_ns = h["total_ns"].GetUint64();
    f.max_ns = h["max_ns"].GetUint64();
  }
  return f;
}

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_JVM_STATUS_JSON_H_
