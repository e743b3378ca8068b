#include "hook/chrome_trace_exporter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hook/event_json.h"
#include "hook/json_out.h"

namespace jp::hook {
namespace {

// Opens for writing through a temporary name and renames at the end, so a reader never sees half a file.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path) : path_(path), tmp_(path + ".tmp") {
    f_ = fopen(tmp_.c_str(), "wb");
  }
  ~AtomicFile() {
    if (f_) {
      fclose(f_);
      remove(tmp_.c_str());
    }
  }
  FILE* get() const { return f_; }
  bool Commit(std::string* error) {
    const bool write_ok = ferror(f_) == 0;
    const int close_rc = fclose(f_);
    f_ = nullptr;
    if (!write_ok || close_rc != 0) {
      *error = "write failed: " + tmp_ + ": " + strerror(errno);
      remove(tmp_.c_str());
      return false;
    }
    if (rename(tmp_.c_str(), path_.c_str()) != 0) {
      *error = "rename " + tmp_ + " -> " + path_ + " failed: " + strerror(errno);
      remove(tmp_.c_str());
      return false;
    }
    return true;
  }

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
};

// The same writer as reports and status (one copy of the writing code in the library), in its file mode.
using TraceWriter = JsonOut;

void Str(TraceWriter& w, std::string_view s) { w.String(s); }

void WriteMetadata(TraceWriter& w, int32_t pid, uint32_t tid, const char* what, std::string_view name) {
  w.StartObject();
  w.Key("ph");
  w.String("M");
  w.Key("pid");
  w.Int(pid);
  w.Key("tid");
  w.Uint(tid);
  w.Key("name");
  w.String(what);
  w.Key("args");
  w.StartObject();
  w.Key("name");
  Str(w, name);
  w.EndObject();
  w.EndObject();
}

// Recovered events carry string ids of the previous run: resolve them through the file's strings.
class RecoveredStrings {
 public:
  explicit RecoveredStrings(const RecoveredTimeline& r) : r_(r) {}
  std::string_view Lookup(uint16_t id) const { return r_.StringFor(id); }

 private:
  const RecoveredTimeline& r_;
};

template <typename Strings>
void WriteEvents(TraceWriter& w, const TraceProcess& p, const Strings& strings) {
  for (const Event& e : *p.events) {
    const bool instant = e.dur_ns == 0;
    w.StartObject();
    w.Key("ph");
    w.String(instant ? "i" : "X");
    w.Key("pid");
    w.Int(p.pid);
    w.Key("tid");
    w.Uint(e.tid);
    w.Key("cat");
    w.String(EventKindName(e.kind));
    std::string_view name = strings.Lookup(e.name);
    w.Key("name");
    Str(w, name.empty() ? std::string_view(EventKindName(e.kind)) : name);
    w.Key("ts");  // microseconds, as the format wants; fractions keep ns precision
    w.Double(static_cast<double>(e.ts_ns - p.time_origin_ns) / 1e3);
    if (instant) {
      w.Key("s");
      w.String("t");
    } else {
      w.Key("dur");
      w.Double(static_cast<double>(e.dur_ns) / 1e3);
    }
    w.Key("args");
    w.StartObject();
    WriteEventArgMembers(w, e, strings);
    w.EndObject();
    w.EndObject();
  }
}

}  // namespace

bool WriteChromeTrace(const std::string& path, const std::vector<TraceProcess>& processes,
                      const std::vector<TraceReport>& reports, int32_t report_pid, uint32_t report_tid,
                      std::string* error) {
  AtomicFile file(path);
  if (!file.get()) {
    *error = "cannot open " + path + " for writing: " + strerror(errno);
    return false;
  }
  TraceWriter w(file.get());
  w.StartObject();
  w.Key("displayTimeUnit");
  w.String("ms");
  w.Key("traceEvents");
  w.StartArray();
  uint64_t report_origin = 0;
  for (const TraceProcess& p : processes) {
    WriteMetadata(w, p.pid, 0, "process_name", p.name);
    for (const auto& [tid, name] : p.threads) WriteMetadata(w, p.pid, tid, "thread_name", name);
    if (!p.events) continue;
    if (p.recovered) {
      WriteEvents(w, p, RecoveredStrings(*p.recovered));
    } else if (p.strings) {
      WriteEvents(w, p, *p.strings);
    }
    if (p.pid == report_pid) report_origin = p.time_origin_ns;
  }
  for (const TraceReport& r : reports) {
    w.StartObject();
    w.Key("ph");
    w.String("i");
    w.Key("s");
    w.String("p");  // process-wide marker: a verdict is about the app, not one thread
    w.Key("pid");
    w.Int(report_pid);
    w.Key("tid");
    w.Uint(report_tid);
    w.Key("cat");
    w.String("verdict");
    w.Key("name");
    Str(w, r.type);
    w.Key("ts");
    w.Double(static_cast<double>(r.ts_ns - report_origin) / 1e3);
    w.Key("args");
    // The report as it was delivered, if it is one JSON object; an empty one otherwise.
    const size_t brace = r.json.find_first_not_of(" \t\r\n");
    if (brace == std::string::npos || r.json[brace] != '{' || !w.Embed(r.json)) {
      w.StartObject();
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  if (!w.Flush()) {
    *error = "write failed: " + path + ".tmp: " + strerror(errno);
    return false;  // the temporary file is removed by AtomicFile
  }
  return file.Commit(error);
}

bool WriteJsonLines(const std::string& path, const std::vector<std::string>& lines, std::string* error) {
  AtomicFile file(path);
  if (!file.get()) {
    *error = "cannot open " + path + " for writing: " + strerror(errno);
    return false;
  }
  for (const std::string& line : lines) {
    fwrite(line.data(), 1, line.size(), file.get());
    fputc('\n', file.get());
  }
  return file.Commit(error);
}

}  // namespace jp::hook
