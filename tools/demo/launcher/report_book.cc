#include "tools/demo/launcher/report_book.h"

#include <rapidjson/document.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "tools/demo/launcher/touch_dispatcher.h"

namespace jp::demo {
namespace {

const int64_t g_t0 = MonotonicNs();

std::string Str(const rapidjson::Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsString() ? it->value.GetString() : std::string();
}
double Num(const rapidjson::Value& o, const char* key, double fallback = 0) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsNumber() ? it->value.GetDouble() : fallback;
}
bool Bool(const rapidjson::Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}
bool Has(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

// "at com.example.demo.CheckoutButton.recomputeCart(CheckoutButton.java:17)" -> "CheckoutButton.recomputeCart"
std::string ShortFrame(const std::string& frame) {
  std::string f = frame.rfind("at ", 0) == 0 ? frame.substr(3) : frame;
  f = f.substr(0, f.find('('));
  const size_t method_dot = f.rfind('.');
  if (method_dot == std::string::npos) return f;
  const size_t class_dot = f.rfind('.', method_dot - 1);
  return class_dot == std::string::npos ? f : f.substr(class_dot + 1);
}

std::string Culprit(const SeenReport& r) {
  std::string c;
  if (!r.handler.empty()) c += "handler " + r.handler;
  if (!r.key_frame.empty()) c += (c.empty() ? "" : "; ") + std::string("key frame ") + ShortFrame(r.key_frame);
  if (!r.blocked_name.empty()) {
    char overlap[32];
    std::snprintf(overlap, sizeof overlap, "%.0f ms", r.blocked_overlap_ms);
    c += (c.empty() ? "" : "; ") + std::string("blocked by ") + r.blocked_kind + " " + r.blocked_name + " (" +
         overlap + ")";
  }
  return c;
}

}  // namespace

double ReportBook::Now() const { return static_cast<double>(MonotonicNs() - g_t0) / 1e9; }

void ReportBook::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  std::fprintf(out_, "[%6.3f s] %s\n", Now(), line.c_str());
  std::fflush(out_);
}

void ReportBook::OnReport(const std::string& json) {
  SeenReport r;
  r.at_s = Now();
  r.raw = json;
  rapidjson::Document d;
  if (!d.Parse(json.c_str()).HasParseError() && d.IsObject()) {
    r.parsed = true;
    r.type = Str(d, "type");
    r.monitor = Str(d, "monitor");
    r.action = Str(d, "action");
    r.key_frame = Str(d, "key_frame");
    r.handler = Str(d, "handler");
    r.dur_ms = Num(d, "dur_ms");
    r.event_seq = static_cast<int64_t>(Num(d, "event_seq", -1));
    r.anr_reported = Bool(d, "anr_reported");
    r.removed = Bool(d, "removed");
    r.confirmed = Bool(d, "confirmed");
    auto b = d.FindMember("blocked_by");
    if (b != d.MemberEnd() && b->value.IsArray() && !b->value.Empty() && b->value[0].IsObject()) {
      r.blocked_kind = Str(b->value[0], "kind");
      r.blocked_name = Str(b->value[0], "name");
      r.blocked_overlap_ms = Num(b->value[0], "overlap_ms");
    }
  }
  r.fault = Attribute(r);
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = r.parsed ? r.type : "unparsable report: " + json;
  if (!r.action.empty()) what += " " + r.action + " seq " + std::to_string(r.event_seq);
  std::fprintf(out_, "[%6.3f s] REPORT %-26s %8.1f ms  %s%s\n", r.at_s, what.c_str(), r.dur_ms, Culprit(r).c_str(),
               r.type == "barrier_removed" ? (r.removed ? "; removed, sync messages run again" : "; NOT removed") : "");
  std::fflush(out_);
  reports_.push_back(std::move(r));
}

void ReportBook::OnStatus(const std::string& phase, const std::string& json) {
  // Measurement aid: JP_DEMO_STATUS=<prefix> keeps each status document as <prefix>.<phase>.json.
  if (const char* prefix = std::getenv("JP_DEMO_STATUS")) {
    if (FILE* f = std::fopen((std::string(prefix) + "." + phase + ".json").c_str(), "w")) {
      std::fputs(json.c_str(), f);
      std::fclose(f);
    }
  }
  SeenStatus s;
  s.phase = phase;
  s.raw = json;
  rapidjson::Document d;
  if (!d.Parse(json.c_str()).HasParseError() && d.IsObject()) {
    auto m = d.FindMember("monitors");
    if (m != d.MemberEnd() && m->value.IsObject()) {
      auto state = [&](const char* name) {
        auto it = m->value.FindMember(name);
        return it != m->value.MemberEnd() && it->value.IsObject() ? Str(it->value, "state") : std::string("?");
      };
      s.input = state("input");
      s.idle = state("idle");
      s.barrier = state("barrier");
      s.looper = state("looper");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::fprintf(out_, "[%6.3f s] status (%s): input %s, idle %s, barrier %s, looper %s\n", Now(), phase.c_str(),
               s.input.c_str(), s.idle.c_str(), s.barrier.c_str(), s.looper.c_str());
  std::fflush(out_);
  statuses_.push_back(std::move(s));
}

int ReportBook::Attribute(const SeenReport& r) const {
  if (!r.parsed) return 0;
  if (r.type == "touch_lag" && r.anr_reported) return 4;
  if (r.type == "touch_lag" && Has(r.key_frame, "CheckoutButton.")) return 1;
  if (r.type == "touch_lag" && Has(r.blocked_name, "PrefetchIdleHandler")) return 2;
  if (r.type == "idle_lag" && Has(r.handler, "PrefetchIdleHandler")) return 2;
  if (r.type == "barrier_leak" || r.type == "barrier_removed") return 3;
  if (r.type == "input_anr" && (Has(r.key_frame, "ReportUploader.") || Has(r.blocked_name, "ReportUploader"))) return 4;
  if (r.monitor == "looper" && Has(r.raw, "ReportUploader")) return 4;
  return 0;
}

const SeenStatus* ReportBook::Status(const std::string& phase) const {
  for (const SeenStatus& s : statuses_) {
    if (s.phase == phase) return &s;
  }
  return nullptr;
}

std::vector<SeenReport> ReportBook::reports() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reports_;
}

bool ReportBook::SummarizeAndCheck(bool faults_played) {
  std::lock_guard<std::mutex> lock(mu_);
  auto of = [&](int fault, const std::string& type) {
    std::vector<const SeenReport*> out;
    for (const SeenReport& r : reports_) {
      if (r.fault == fault && (type.empty() || r.type == type)) out.push_back(&r);
    }
    return out;
  };
  struct Row {
    std::string fault, expected, got, culprit;
    bool ok;
  };
  std::vector<Row> rows;
  auto one = [](const std::vector<const SeenReport*>& v) { return v.size() == 1 ? v[0] : nullptr; };
  auto count = [](const std::vector<const SeenReport*>& v) { return std::to_string(v.size()); };

  if (faults_played) {
    {
      auto lags = of(1, "touch_lag");
      const SeenReport* r = one(lags);
      rows.push_back({"1 slow click handler (400 ms)", "touch_lag UP, key frame CheckoutButton", count(lags),
                      r ? Culprit(*r) : "", r && r->action == "UP" && r->dur_ms >= 380});
    }
    {
      auto idle = of(2, "idle_lag");
      auto lags = of(2, "touch_lag");
      const SeenReport* i = one(idle);
      const SeenReport* t = one(lags);
      rows.push_back({"2 slow IdleHandler (350 ms)", "idle_lag PrefetchIdleHandler", count(idle), i ? Culprit(*i) : "",
                      i && i->dur_ms >= 330});
      rows.push_back({"  ...delays the next DOWN", "touch_lag DOWN, blocked_by it", count(lags), t ? Culprit(*t) : "",
                      t && t->action == "DOWN" && t->dur_ms >= 330 && t->blocked_kind == "idle.handler"});
    }
    {
      auto leak = of(3, "barrier_leak");
      auto removed = of(3, "barrier_removed");
      const SeenReport* l = one(leak);
      const SeenReport* m = one(removed);
      rows.push_back({"3 leaked sync barrier", "barrier_leak (confirmed)", count(leak),
                      l ? "age " + std::to_string(static_cast<int>(l->dur_ms)) + " ms" : "", l && l->confirmed});
      rows.push_back({"  ...auto-removed", "barrier_removed (removed)", count(removed), m && m->removed ? "removed" : "",
                      m && m->removed});
    }
    {
      auto anr = of(4, "input_anr");
      auto lags = of(4, "touch_lag");
      const SeenReport* a = one(anr);
      const SeenReport* t = one(lags);
      rows.push_back({"4 message stuck 6 s", "input_anr DOWN, key frame ReportUploader", count(anr), a ? Culprit(*a) : "",
                      a && a->action == "DOWN" && a->dur_ms >= 4900});
      rows.push_back({"  ...the touch finishes", "touch_lag, same seq, anr_reported", count(lags), t ? Culprit(*t) : "",
                      t && a && t->event_seq == a->event_seq && t->dur_ms >= 5700});
      const SeenStatus* start = Status("start");
      const bool looper_on = start && start->looper == "on";
      std::vector<const SeenReport*> looper;
      std::map<std::string, int> per_type;
      bool once = true;
      for (const SeenReport& r : reports_) {
        if (r.fault == 4 && r.monitor == "looper") {
          looper.push_back(&r);
          if (++per_type[r.type] > 1) once = false;
        }
      }
      std::string types;
      for (const auto& [type, n] : per_type) types += (types.empty() ? "" : ", ") + type;
      rows.push_back({"  ...seen by the looper monitor", looper_on ? "looper reports naming ReportUploader" : "none (looper monitor not on)",
                      count(looper), types, looper_on ? !looper.empty() && once : looper.empty()});
    }
    {
      const SeenStatus* off = Status("idle off");
      const SeenStatus* on = Status("idle on again");
      const bool ok = off && on && off->idle.rfind("off", 0) == 0 && on->idle == "on";
      rows.push_back({"remote flag: idle off, on again", "idle: off -> on", off && on ? off->idle + " -> " + on->idle : "missing",
                      "", ok});
    }
  }
  auto unexpected = of(0, "");
  std::string list;
  for (const SeenReport* r : unexpected) list += (list.empty() ? "" : ", ") + r->type;
  rows.push_back({"anything else", "nothing", count(unexpected), list, unexpected.empty()});

  bool all = true;
  std::fprintf(out_, "\n== summary: %zu reports\n", reports_.size());
  std::fprintf(out_, "%-34s %-42s %-4s %-3s %s\n", "fault", "expected", "got", "ok", "culprit");
  for (const Row& row : rows) {
    std::fprintf(out_, "%-34s %-42s %-4s %-3s %s\n", row.fault.c_str(), row.expected.c_str(), row.got.c_str(),
                 row.ok ? "yes" : "NO", row.culprit.c_str());
    all = all && row.ok;
  }
  std::fflush(out_);
  return all;
}

}  // namespace jp::demo
