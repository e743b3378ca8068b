// A lag verdict on its way to the app: what was late (type, when, how long), the monitor's own fields,
// the main-thread stack if one was captured while it was stuck, and which timeline records of the main
// thread overlap the lag ("blocked_by": the message or idle handler that held it).
//
// Reports are built off the hot path (on the watchdog thread or when a monitor's record is matched), so
// they may allocate freely.
#ifndef JANKPROBE_HOOK_REPORT_H_
#define JANKPROBE_HOOK_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hook/timeline.h"

namespace jp::hook {

// One of the monitor's own fields. kRawJson carries an already-serialised JSON value (an object or array
// the monitor built, e.g. a history window); it is validated before it is embedded.
struct ReportField {
  enum class Type : uint8_t { kInt, kDouble, kString, kBool, kRawJson };
  std::string key;
  Type type = Type::kInt;
  int64_t i = 0;
  double d = 0;
  std::string s;

  static ReportField Int(std::string k, int64_t v) { ReportField f; f.key = std::move(k); f.type = Type::kInt; f.i = v; return f; }
  static ReportField Double(std::string k, double v) { ReportField f; f.key = std::move(k); f.type = Type::kDouble; f.d = v; return f; }
  static ReportField String(std::string k, std::string v) { ReportField f; f.key = std::move(k); f.type = Type::kString; f.s = std::move(v); return f; }
  static ReportField Bool(std::string k, bool v) { ReportField f; f.key = std::move(k); f.type = Type::kBool; f.i = v; return f; }
  static ReportField RawJson(std::string k, std::string json) { ReportField f; f.key = std::move(k); f.type = Type::kRawJson; f.s = std::move(json); return f; }
};

struct Report {
  std::string type;      // "touch_lag", "input_anr", "idle_lag", "barrier_leak", "message_lag", ...
  std::string monitor;   // "input", "idle", "barrier", "looper", "core"
  uint64_t ts_ns = 0;    // CLOCK_MONOTONIC start of the late thing
  uint64_t dur_ns = 0;   // how long it was late (or still was, at the verdict)
  std::vector<ReportField> fields;
  std::vector<std::string> stack;  // main-thread frames, innermost first; empty when none was captured
  bool stack_captured_while_stuck = false;
};

// A timeline record of the main thread that overlaps a lag.
struct BlockedBy {
  Event event;
  uint64_t overlap_ns = 0;
};

// The main-thread records overlapping [ts, ts+dur), longest overlap first (except that a record nested in
// another one and holding at least half its overlap comes before it: it names more), at most `limit`, leaving out
// instants, input records (they measure waiting, not work), records of the report's own kinds at
// exactly the same start (the lagging event itself) and, when that record is there, the records that
// enclose it whole (the dispatch it ran in).
std::vector<BlockedBy> FindBlockedBy(const std::vector<Event>& events, uint32_t main_tid, uint64_t ts_ns,
                                     uint64_t dur_ns, const std::vector<EventKind>& own_kinds, size_t limit);

// The record kinds a monitor's reports are about ("input": key and motion records...).
std::vector<EventKind> OwnRecordKinds(const std::string& monitor);

// A captured stack's text (one frame per line, innermost first) as frames, empty lines skipped, at most
// max_frames (0 = all). Every monitor turns its StackSample into Report::stack with this.
std::vector<std::string> SplitStackFrames(const std::string& text, size_t max_frames = 0);

// True when a frame ("at com.example.Foo.bar(Foo.java:12)" or "com.example.Foo.bar(...)") belongs to one
// of the app's package prefixes.
bool IsKeyFrame(std::string_view frame, const std::vector<std::string>& key_packages);

// Serialises a report to one line of JSON (RapidJSON writer). `strings` resolves interned names of the
// blocked_by records.
std::string RenderReportJson(const Report& report, uint64_t seq, const std::vector<BlockedBy>& blocked_by,
                             const StringTable& strings, const std::vector<std::string>& key_packages);

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_REPORT_H_
