// Report rendering and the two lookups that give a report its meaning: which main-thread records
// overlap the lag (blocked_by) and which stack frames are the app's own (key frames).
#include <algorithm>

#include "hook/event_json.h"
#include "hook/json_out.h"
#include "hook/report.h"

namespace jp::hook {

std::vector<EventKind> OwnRecordKinds(const std::string& monitor) {
  if (monitor == "input") return {EventKind::kInputKey, EventKind::kInputMotion};
  if (monitor == "idle") return {EventKind::kIdleHandler};
  if (monitor == "looper") return {EventKind::kLooperMessage};
  if (monitor == "barrier") return {EventKind::kBarrier};
  return {};
}

namespace {

// Records nest: the looper's poll source times everything between two polls as one message, and an idle
// pass (with its idle.handler records) or a native input callback runs inside such a gap. The enclosing
// record always overlaps a lag at least as much as what ran inside it, but it names less. So a record
// strictly inside another one that accounts for at least half of the enclosing record's overlap is named
// first: "blocked by idle.handler PrefetchIdleHandler", not by the poll gap around it. A short record
// inside a long one (1% of it) does not explain the lag and stays behind.
void PreferNestedCulprits(std::vector<BlockedBy>* list) {
  std::vector<BlockedBy>& out = *list;
  auto inside = [](const Event& inner, const Event& outer) {
    return inner.dur_ns < outer.dur_ns && inner.ts_ns >= outer.ts_ns &&
           inner.ts_ns + inner.dur_ns <= outer.ts_ns + outer.dur_ns;
  };
  for (size_t i = 0; i < out.size(); ++i) {
    // Moving a nested record up makes it the new out[i]; it may itself enclose a better one. Each move
    // picks a strictly shorter record, so this ends.
    for (;;) {
      size_t best = out.size();
      for (size_t j = i + 1; j < out.size(); ++j) {
        if (inside(out[j].event, out[i].event) && out[j].overlap_ns * 2 >= out[i].overlap_ns &&
            (best == out.size() || out[j].overlap_ns > out[best].overlap_ns)) {
          best = j;
        }
      }
      if (best == out.size()) break;
      std::rotate(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(best),
                  out.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
  }
}

}  // namespace

std::vector<BlockedBy> FindBlockedBy(const std::vector<Event>& events, uint32_t main_tid, uint64_t ts_ns,
                                     uint64_t dur_ns, const std::vector<EventKind>& own_kinds, size_t limit) {
  std::vector<BlockedBy> out;
  const uint64_t end = ts_ns + dur_ns;
  // A report about a record of its own (an idle handler's call) lies inside the dispatch that ran it (the
  // poll source's gap around the idle pass): that enclosing record is the same work, not what held it.
  const bool own_record = std::any_of(events.begin(), events.end(), [&](const Event& e) {
    return e.tid == main_tid && e.ts_ns == ts_ns && e.dur_ns != 0 &&
           std::find(own_kinds.begin(), own_kinds.end(), e.kind) != own_kinds.end();
  });
  for (const Event& e : events) {
    if (e.tid != main_tid || e.dur_ns == 0) continue;  // instants hold nothing
    // An input record spans read -> finished: time a touch *waited* while something else ran. It is a
    // victim of the lag, never what held the thread.
    if (e.kind == EventKind::kInputKey || e.kind == EventKind::kInputMotion) continue;
    if (e.ts_ns == ts_ns && std::find(own_kinds.begin(), own_kinds.end(), e.kind) != own_kinds.end()) continue;
    const uint64_t e_end = e.ts_ns + e.dur_ns;
    if (own_record && e.ts_ns <= ts_ns && e_end >= end) continue;  // the dispatch the lagging call ran in
    const uint64_t lo = std::max(ts_ns, e.ts_ns);
    const uint64_t hi = std::min(end, e_end);
    if (hi <= lo) continue;
    out.push_back({e, hi - lo});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const BlockedBy& a, const BlockedBy& b) { return a.overlap_ns > b.overlap_ns; });
  PreferNestedCulprits(&out);
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::vector<std::string> SplitStackFrames(const std::string& text, size_t max_frames) {
  std::vector<std::string> frames;
  size_t start = 0;
  while (start < text.size() && (max_frames == 0 || frames.size() < max_frames)) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) frames.emplace_back(text, start, end - start);
    start = end + 1;
  }
  return frames;
}

bool IsKeyFrame(std::string_view frame, const std::vector<std::string>& key_packages) {
  // Java stack frames come as "at com.example.Foo.bar(Foo.java:12)" (Throwable.toString style) or bare.
  while (!frame.empty() && (frame.front() == ' ' || frame.front() == '\t')) frame.remove_prefix(1);
  if (frame.substr(0, 3) == "at ") frame.remove_prefix(3);
  for (const std::string& prefix : key_packages) {
    if (!prefix.empty() && frame.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

std::string RenderReportJson(const Report& report, uint64_t seq, const std::vector<BlockedBy>& blocked_by,
                             const StringTable& strings, const std::vector<std::string>& key_packages) {
  JsonOut w;
  auto str = [&w](const std::string& s) { w.String(s); };
  w.StartObject();
  w.Key("type");
  str(report.type);
  w.Key("monitor");
  str(report.monitor);
  w.Key("seq");
  w.Uint64(seq);
  w.Key("ts_ns");
  w.Uint64(report.ts_ns);
  w.Key("dur_ms");
  w.Double(static_cast<double>(report.dur_ns) / 1e6);
  for (const ReportField& f : report.fields) {
    w.Key(f.key);
    switch (f.type) {
      case ReportField::Type::kInt: w.Int64(f.i); break;
      case ReportField::Type::kDouble: w.Double(f.d); break;
      case ReportField::Type::kString: str(f.s); break;
      case ReportField::Type::kBool: w.Bool(f.i != 0); break;
      case ReportField::Type::kRawJson: {
        // Embedded only if it parses: a monitor bug must not produce an unreadable report line.
        if (!w.Embed(f.s)) w.Null();
        break;
      }
    }
  }
  if (!report.stack.empty()) {
    w.Key("stack_captured_while_stuck");
    w.Bool(report.stack_captured_while_stuck);
    w.Key("stack");
    w.StartArray();
    const std::string* key_frame = nullptr;
    for (const std::string& frame : report.stack) {
      const bool key = IsKeyFrame(frame, key_packages);
      if (key && !key_frame) key_frame = &frame;
      w.StartObject();
      w.Key("frame");
      str(frame);
      w.Key("key");
      w.Bool(key);
      w.EndObject();
    }
    w.EndArray();
    if (key_frame) {
      w.Key("key_frame");
      str(*key_frame);
    }
  }
  w.Key("blocked_by");
  w.StartArray();
  for (const BlockedBy& b : blocked_by) {
    WriteEventObject(w, b.event, strings, static_cast<double>(b.overlap_ns) / 1e6);
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace jp::hook
