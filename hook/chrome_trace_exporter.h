// Export of the timeline (and the reports as instant events) in the Chrome Trace Event format, which
// Perfetto UI (ui.perfetto.dev) and chrome://tracing open directly. One track per thread; durations are
// complete ("X") events, verdicts instant ("i") events; metadata ("M") names the process and threads.
// A previous run's timeline recovered from the timeline file is exported as its own process.
#ifndef JANKPROBE_HOOK_CHROME_TRACE_EXPORTER_H_
#define JANKPROBE_HOOK_CHROME_TRACE_EXPORTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hook/timeline.h"

namespace jp::hook {

struct TraceProcess {
  int32_t pid = 0;
  std::string name;                         // "com.example.app (jankprobe)"
  std::map<uint32_t, std::string> threads;  // tid -> name ("main")
  const std::vector<Event>* events = nullptr;
  const StringTable* strings = nullptr;               // for a live timeline
  const RecoveredTimeline* recovered = nullptr;       // for a previous run (strings from the file)
  uint64_t time_origin_ns = 0;                        // subtracted from every timestamp
};

struct TraceReport {
  uint64_t ts_ns = 0;
  std::string type;
  std::string json;  // the report itself, attached as args
};

// Writes the trace to `path`. false with *error on an I/O failure.
bool WriteChromeTrace(const std::string& path, const std::vector<TraceProcess>& processes,
                      const std::vector<TraceReport>& reports, int32_t report_pid, uint32_t report_tid,
                      std::string* error);

// Writes one JSON document per line. false with *error on an I/O failure.
bool WriteJsonLines(const std::string& path, const std::vector<std::string>& lines, std::string* error);

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_CHROME_TRACE_EXPORTER_H_
