// What the demo saw: every report as it arrives (printed at once, one line each), the plugin's status at
// each step of the script, and at the end the summary table and the check of check mode: each scripted
// fault reported once with the right culprit, and nothing else.
#ifndef JANKPROBE_TOOLS_DEMO_LAUNCHER_REPORT_BOOK_H_
#define JANKPROBE_TOOLS_DEMO_LAUNCHER_REPORT_BOOK_H_

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace jp::demo {

// The fields of one report the demo prints and checks (the raw JSON is kept too).
struct SeenReport {
  double at_s = 0;  // run clock when it arrived
  std::string raw;
  bool parsed = false;
  std::string type, monitor, action, key_frame, handler;
  double dur_ms = 0;
  int64_t event_seq = -1;
  bool anr_reported = false, removed = false, confirmed = false;
  std::string blocked_kind, blocked_name;  // longest overlap first
  double blocked_overlap_ms = 0;
  int fault = 0;  // which scripted fault it belongs to (0 = none: unexpected)
};

struct SeenStatus {
  std::string phase;
  std::string raw;
  std::string input, idle, barrier, looper;  // monitors.<name>.state
};

class ReportBook {
 public:
  explicit ReportBook(FILE* out) : out_(out) {}

  void OnReport(const std::string& json);
  void OnStatus(const std::string& phase, const std::string& json);
  void Log(const std::string& line);

  // Prints the summary table; returns true when the fault script was reported as expected.
  bool SummarizeAndCheck(bool faults_played);
  std::vector<SeenReport> reports() const;

 private:
  double Now() const;
  int Attribute(const SeenReport& r) const;
  const SeenStatus* Status(const std::string& phase) const;

  FILE* out_;
  mutable std::mutex mu_;
  std::vector<SeenReport> reports_;
  std::vector<SeenStatus> statuses_;
};

}  // namespace jp::demo

#endif  // JANKPROBE_TOOLS_DEMO_LAUNCHER_REPORT_BOOK_H_
