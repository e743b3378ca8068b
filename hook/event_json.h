// Writing timeline events as JSON, shared by reports (blocked_by) and the Chrome trace exporter so that
// both name kinds, args and times the same way. Writer: hook::JsonOut (hook/json_out.h), the library's one
// JSON writer; a template only because the strings come from a live table or a recovered file.
#ifndef JANKPROBE_HOOK_EVENT_JSON_H_
#define JANKPROBE_HOOK_EVENT_JSON_H_

#include <string_view>

#include "hook/timeline.h"

namespace jp::hook {

// Writes the event's typed args as members of the JSON object the writer is currently inside.
// `strings` is anything with Lookup(uint16_t) -> string_view: a live StringTable or a recovered file's.
template <typename Writer, typename Strings>
void WriteEventArgMembers(Writer& w, const Event& e, const Strings& strings) {
  for (const EventArg& a : e.args) {
    if (a.type == ArgType::kNone) continue;
    std::string_view key = strings.Lookup(a.key);
    if (key.empty()) key = "arg";
    w.Key(key.data(), key.size());
    switch (a.type) {
      case ArgType::kInt: w.Int64(a.as_int()); break;
      case ArgType::kDouble: w.Double(a.as_double()); break;
      case ArgType::kString: {
        std::string_view s = strings.Lookup(a.as_string());
        w.String(s.data(), s.size());
        break;
      }
      case ArgType::kNone: break;
    }
  }
}

// {"kind":"idle.handler","name":"com.example.Prefetch","ts_ns":..,"dur_ms":..,"tid":..,"args":{..}}
template <typename Writer>
void WriteEventObject(Writer& w, const Event& e, const StringTable& strings, double overlap_ms = -1) {
  w.StartObject();
  w.Key("kind");
  w.String(EventKindName(e.kind));
  std::string_view name = strings.Lookup(e.name);
  w.Key("name");
  w.String(name.data(), name.size());
  w.Key("ts_ns");
  w.Uint64(e.ts_ns);
  w.Key("dur_ms");
  w.Double(static_cast<double>(e.dur_ns) / 1e6);
  w.Key("tid");
  w.Uint(e.tid);
  if (overlap_ms >= 0) {
    w.Key("overlap_ms");
    w.Double(overlap_ms);
  }
  w.Key("args");
  w.StartObject();
  WriteEventArgMembers(w, e, strings);
  w.EndObject();
  w.EndObject();
}

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_EVENT_JSON_H_
