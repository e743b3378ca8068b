// What jankprobe costs the demo app (issue 7): the same app without faults, each run its own
// `jankprobe-demo --bench` process (one JVM per process), in rounds. A round runs, in turn:
//   off      jankprobe never loaded (the baseline of that round)
//   printer  jankprobe off, the app's own do-nothing Printer on the main Looper: what Looper's two dispatch
//            strings per message cost ANY Printer-based monitor (ours, BlockCanary, Matrix): a reference line
//   none     jankprobe loaded and started with every monitor off (tools/demo/config/bench-none.json)
//   input, idle, barrier, looper   one monitor on (bench-<monitor>.json)
//   all      every monitor on (bench-all.json: demo.json with the default timeline capacity)
// Each variant's figures are differences to the same round's off run, so slow drift of the shared host
// hits both sides; the benchmark rows report the median over the rounds and the spread (min and max).
// - main-thread CPU: CLOCK_THREAD_CPUTIME_ID of the app's main thread over the measured window (after a
//   warm-up), per second of window; target for "all": under 10 us per second;
// - resident memory: how much VmRSS grew from before the app's start to its last message, while the app and
//   jankprobe still run (DemoHost.snapshot: nothing stopped or released for the measurement; the JVM's own
//   start-up is not in it), variant minus off; target for "all": under 512 KB. Split into anonymous and
//   file pages; extra_rss_after_stop_kb is the same once JankProbe.stop() returned (what stays behind).
//
// Flags (before the benchmark's own): --seconds=S (measured window per run, default 4), --warmup=S
// (default 1), --rounds=N (default 5). Every run's figures are printed to stderr, and after the rounds a
// spread line per variant: each round's extra RSS sorted, the median, how many rounds "all" stayed under
// the 512 KB target, and the host's 1-minute load average before and after (a claim about a few tens of
// KB needs a quiet host: the anonymous part alone moves +-100 KB between rounds).
// --history=FILE appends this invocation's per-round figures to FILE (one line per variant) and prints
// the spread over every invocation in it: the median of each invocation, their median, min and max, and
// how many invocations' medians were under the target, so that a claim rests on several invocations
// (>= 5) rather than on one. Nothing it prints changes what a run measures.
//
// BM_DemoAppAB, the finer CPU figure: whole processes differ by milliseconds per second of CPU on a shared
// host (JIT, heap, cache neighbours), far above a 10 us/s target. So per monitor variant ONE process runs
// `jankprobe-demo --ab`: the remote flag alternates between the variant's config and bench-none.json
// (every monitor off) in slices (on, off, off, on, ...), and each group of four gives one difference
// (on - off) / 2 per second of slice. Besides CPU time it reads the main thread's retired instructions
// and cycles (perf_event_open on that thread; user+kernel where allowed): instructions do not care what
// else runs on the host, so they resolve what CPU time cannot. extra_cycles_us_per_s converts the extra
// cycles into time at the main thread's own cycles per CPU-ns in the off slices. The same pair is also
// counted in user mode alone (extra_user_instr_per_s, extra_user_cycles_us_per_s): the kernel's share of
// the main thread's instructions (interrupts taken on it, faults) is most of them here and moves by
// hundreds of thousands per second between slices of the same work, while the monitors' own code runs
// in user mode; extra_kernel_instr_per_s is the rest (a syscall a monitor would add shows there). The
// launcher's JVM reads JP_DEMO_JVM_ARGS (e.g. JIT tiers) from the environment.
// Flags: --ab-slices=N (default 24, a multiple of 4), --slice-ms=MS (default 1000), --settle-ms=MS
// (default 700: the looper monitor's frame ticker runs until it parks after each switch).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

struct RunFigures {
  bool ok = false;
  // Growth from just before the app starts to its last message, while it and jankprobe still run.
  double main_cpu_ns = 0, run_ns = 0, rss_growth_kb = 0, anon_growth_kb = 0, file_growth_kb = 0, touches = 0;
  double rss_after_stop_kb = 0;  // the same, once the app's loop ended and JankProbe.stop() returned
  double cpu_us_per_s() const { return main_cpu_ns / 1e3 / (run_ns / 1e9); }
};

struct Variant {
  const char* name;
  bool jankprobe;
  bool app_printer;
  const char* config;  // in tools/demo/config
};

const Variant kVariants[] = {
    {"off", false, false, ""},
    {"printer", false, true, ""},
    {"none", true, false, "bench-none.json"},
    {"input", true, false, "bench-input.json"},
    {"idle", true, false, "bench-idle.json"},
    {"barrier", true, false, "bench-barrier.json"},
    {"looper", true, false, "bench-looper.json"},
    {"all", true, false, "bench-all.json"},
};
constexpr size_t kVariantCount = sizeof kVariants / sizeof kVariants[0];

double g_seconds = 4, g_warmup = 1;
int g_rounds = 5;
std::string g_history;                       // --history=FILE: per-invocation figures appended and summed up
constexpr double kTargetExtraRssKb = 512;    // issue 7: the process's extra resident memory, "all"
double g_load_before = -1, g_load_after = -1;  // the host's 1-minute load average around the rounds
double g_ab_slices = 24, g_slice_ms = 1000, g_settle_ms = 700;

double Field(const std::string& json, const char* key) {
  const std::string k = std::string("\"") + key + "\":";
  const size_t at = json.find(k);
  return at == std::string::npos ? -1 : std::atof(json.c_str() + at + k.size());
}

// Runs one launcher command; its stdout in *out, the exit status returned (-1 when it could not start).
int RunLauncher(const std::string& cmd, std::string* out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) *out += buf;
  return pclose(p);
}

RunFigures RunApp(const Variant& v) {
  RunFigures f;
  std::string cmd = std::string(JP_DEMO_LAUNCHER) + " --bench " + std::to_string(g_seconds) + " --warmup " +
                    std::to_string(g_warmup) + " --jankprobe " + (v.jankprobe ? "on" : "off");
  if (v.jankprobe) cmd += std::string(" --config ") + v.config;
  if (v.app_printer) cmd += " --app-printer noop";
  cmd += " 2>/dev/null";
  std::string out;
  const int rc = RunLauncher(cmd, &out);
  if (rc != 0) std::fprintf(stderr, "%s: exit status %d\n", cmd.c_str(), rc);
  if (rc != 0 || out.find("\"main_cpu_ns\"") == std::string::npos) return f;
  f.main_cpu_ns = Field(out, "main_cpu_ns");
  f.run_ns = Field(out, "run_ns");
  f.rss_growth_kb = Field(out, "rss_kb_running") - Field(out, "rss_kb_before_app");
  f.anon_growth_kb = Field(out, "anon_kb_running") - Field(out, "anon_kb_before_app");
  f.file_growth_kb = Field(out, "file_kb_running") - Field(out, "file_kb_before_app");
  f.rss_after_stop_kb = Field(out, "rss_kb_after_app") - Field(out, "rss_kb_before_app");
  f.touches = Field(out, "touches_finished");
  f.ok = f.run_ns > 0 && f.main_cpu_ns > 0 && Field(out, "rss_kb_running") > 0;
  return f;
}

// The host's 1-minute load average (-1 when it cannot be read): printed beside the spread, since the
// figures are only as quiet as the host.
double LoadAverage1() {
  double load = -1;
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

double Quantile(std::vector<double> v, double q);
void ReportSpread(const std::vector<std::vector<RunFigures>>& rounds);

// rounds[r][v]: every variant's run in round r. Run once, on the first benchmark that needs them.
std::vector<std::vector<RunFigures>>* g_rounds_data = nullptr;
std::string g_failure;

const std::vector<std::vector<RunFigures>>& Rounds() {
  if (g_rounds_data) return *g_rounds_data;
  g_rounds_data = new std::vector<std::vector<RunFigures>>();
  g_load_before = LoadAverage1();
  for (int r = 0; r < g_rounds && g_failure.empty(); ++r) {
    std::vector<RunFigures> round;
    for (const Variant& v : kVariants) {
      const RunFigures f = RunApp(v);
      if (!f.ok) {
        g_failure = std::string("the ") + v.name + " run failed (try jankprobe-demo --bench 2 --jankprobe on by hand)";
        break;
      }
      std::fprintf(stderr,
                   "round %d %-8s main thread %7.0f us/s, RSS growth %6.0f KB (anon %6.0f, file %5.0f; after stop %6.0f), "
                   "touches %.0f\n",
                   r, v.name, f.cpu_us_per_s(), f.rss_growth_kb, f.anon_growth_kb, f.file_growth_kb, f.rss_after_stop_kb,
                   f.touches);
      round.push_back(f);
    }
    if (g_failure.empty()) g_rounds_data->push_back(round);
  }
  g_load_after = LoadAverage1();
  if (g_failure.empty() && !g_rounds_data->empty()) ReportSpread(*g_rounds_data);
  return *g_rounds_data;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// Extra resident memory (variant minus the same round's off run) of every round, KB: total, anon, file.
struct ExtraRss {
  std::vector<double> rss, anon, file;
};

ExtraRss ExtraRssOf(const std::vector<std::vector<RunFigures>>& rounds, size_t vi) {
  ExtraRss e;
  for (const auto& round : rounds) {
    e.rss.push_back(round[vi].rss_growth_kb - round[0].rss_growth_kb);
    e.anon.push_back(round[vi].anon_growth_kb - round[0].anon_growth_kb);
    e.file.push_back(round[vi].file_growth_kb - round[0].file_growth_kb);
  }
  return e;
}

std::string Joined(std::vector<double> v, bool sorted) {
  if (sorted) std::sort(v.begin(), v.end());
  std::string out;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%s%.0f", out.empty() ? "" : ",", x);
    out += buf;
  }
  return out;
}

// Parses "a,b,c" (as Joined writes it) into numbers; false if anything else is there.
bool ParseList(const char* text, std::vector<double>* out) {
  out->clear();
  const char* p = text;
  for (;;) {
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    if (end == p) return false;
    out->push_back(x);
    if (*end != ',') return true;
    p = end + 1;
  }
}

// The history file's line per variant and invocation:
//   demo_bench <unix time> load <before> <after> rounds <n> variant <name> rss <r,...> anon <a,...> file <f,...>
struct HistoryLine {
  double time = 0, load_before = -1, load_after = -1;
  std::string variant;
  ExtraRss extra;
};

bool ParseHistoryLine(const std::string& line, HistoryLine* h) {
  char variant[32], rss[1024], anon[1024], file[1024];
  int n = 0;
  if (std::sscanf(line.c_str(), "demo_bench %lf load %lf %lf rounds %d variant %31s rss %1023s anon %1023s file %1023s",
                  &h->time, &h->load_before, &h->load_after, &n, variant, rss, anon, file) != 8) {
    return false;
  }
  h->variant = variant;
  return ParseList(rss, &h->extra.rss) && ParseList(anon, &h->extra.anon) && ParseList(file, &h->extra.file) &&
         static_cast<int>(h->extra.rss.size()) == n;
}

// After the rounds: the spread of this invocation per variant, then (--history) over all invocations.
void ReportSpread(const std::vector<std::vector<RunFigures>>& rounds) {
  std::fprintf(stderr, "extra RSS per round (variant - off, KB, sorted), host load %.2f -> %.2f:\n", g_load_before,
               g_load_after);
  for (size_t vi = 1; vi < kVariantCount; ++vi) {
    const ExtraRss e = ExtraRssOf(rounds, vi);
    const double median = Quantile(e.rss, 0.5);
    std::fprintf(stderr, "  %-8s median %+5.0f [%s] (anon median %+.0f, file median %+.0f)", kVariants[vi].name,
                 median, Joined(e.rss, true).c_str(), Quantile(e.anon, 0.5), Quantile(e.file, 0.5));
    if (std::strcmp(kVariants[vi].name, "all") == 0) {
      const long under = std::count_if(e.rss.begin(), e.rss.end(), [](double x) { return x < kTargetExtraRssKb; });
      std::fprintf(stderr, ", under %.0f KB in %ld of %zu rounds", kTargetExtraRssKb, under, e.rss.size());
    }
    std::fprintf(stderr, "\n");
  }
  if (g_history.empty()) return;
  FILE* out = std::fopen(g_history.c_str(), "a");
  if (!out) {
    std::fprintf(stderr, "cannot append to --history file %s: %s\n", g_history.c_str(), std::strerror(errno));
    return;
  }
  for (size_t vi = 1; vi < kVariantCount; ++vi) {
    const ExtraRss e = ExtraRssOf(rounds, vi);
    std::fprintf(out, "demo_bench %.0f load %.2f %.2f rounds %zu variant %s rss %s anon %s file %s\n",
                 static_cast<double>(std::time(nullptr)), g_load_before, g_load_after, rounds.size(), kVariants[vi].name,
                 Joined(e.rss, false).c_str(), Joined(e.anon, false).c_str(), Joined(e.file, false).c_str());
  }
  std::fclose(out);
  // Every invocation in the file, this one included: per variant the median of each, in file order.
  std::map<std::string, std::vector<HistoryLine>> by_variant;
  std::ifstream in(g_history);
  std::string line;
  size_t unreadable = 0;
  while (std::getline(in, line)) {
    HistoryLine h;
    if (ParseHistoryLine(line, &h)) {
      by_variant[h.variant].push_back(h);
    } else if (!line.empty()) {
      ++unreadable;
    }
  }
  std::fprintf(stderr, "over the invocations in %s (each one's median extra RSS, KB, in order%s):\n", g_history.c_str(),
               unreadable ? "; some lines unreadable" : "");
  for (size_t vi = 1; vi < kVariantCount; ++vi) {
    const auto it = by_variant.find(kVariants[vi].name);
    if (it == by_variant.end()) continue;
    std::vector<double> medians, anon_medians, loads;
    for (const HistoryLine& h : it->second) {
      medians.push_back(Quantile(h.extra.rss, 0.5));
      anon_medians.push_back(Quantile(h.extra.anon, 0.5));
      loads.push_back(std::max(h.load_before, h.load_after));
    }
    std::fprintf(stderr, "  %-8s %zu invocations: median of medians %+5.0f [min %+.0f, max %+.0f] (%s), anon %+.0f",
                 kVariants[vi].name, medians.size(), Quantile(medians, 0.5),
                 *std::min_element(medians.begin(), medians.end()), *std::max_element(medians.begin(), medians.end()),
                 Joined(medians, false).c_str(), Quantile(anon_medians, 0.5));
    if (std::strcmp(kVariants[vi].name, "all") == 0) {
      const long under =
          std::count_if(medians.begin(), medians.end(), [](double x) { return x < kTargetExtraRssKb; });
      std::fprintf(stderr, ", under %.0f KB in %ld of %zu", kTargetExtraRssKb, under, medians.size());
    }
    std::fprintf(stderr, ", highest host load %.2f\n", *std::max_element(loads.begin(), loads.end()));
  }
}

void BM_DemoAppOverhead(benchmark::State& state) {
  const size_t vi = static_cast<size_t>(state.range(0));
  const auto& rounds = Rounds();
  if (!g_failure.empty() || rounds.empty()) {
    state.SkipWithError(g_failure.empty() ? "no rounds ran" : g_failure.c_str());
    for (auto _ : state) {}
    return;
  }
  std::vector<double> cpu, extra_cpu, extra_rss, extra_anon, extra_file, extra_after_stop;
  double run_s = 0;
  for (const auto& round : rounds) {
    const RunFigures& off = round[0];
    const RunFigures& f = round[vi];
    cpu.push_back(f.cpu_us_per_s());
    extra_cpu.push_back(f.cpu_us_per_s() - off.cpu_us_per_s());
    extra_rss.push_back(f.rss_growth_kb - off.rss_growth_kb);
    extra_anon.push_back(f.anon_growth_kb - off.anon_growth_kb);
    extra_file.push_back(f.file_growth_kb - off.file_growth_kb);
    extra_after_stop.push_back(f.rss_after_stop_kb - off.rss_after_stop_kb);
    run_s += f.run_ns / 1e9;
  }
  for (auto _ : state) state.SetIterationTime(run_s / static_cast<double>(rounds.size()));
  state.SetLabel(kVariants[vi].name);
  state.counters["main_cpu_us_per_s"] = Quantile(cpu, 0.5);
  if (vi != 0) {
    state.counters["extra_cpu_us_per_s"] = Quantile(extra_cpu, 0.5);
    state.counters["extra_cpu_min"] = *std::min_element(extra_cpu.begin(), extra_cpu.end());
    state.counters["extra_cpu_max"] = *std::max_element(extra_cpu.begin(), extra_cpu.end());
    state.counters["extra_rss_kb"] = Quantile(extra_rss, 0.5);
    state.counters["extra_rss_min"] = *std::min_element(extra_rss.begin(), extra_rss.end());
    state.counters["extra_rss_max"] = *std::max_element(extra_rss.begin(), extra_rss.end());
    state.counters["extra_anon_kb"] = Quantile(extra_anon, 0.5);
    state.counters["extra_anon_min"] = *std::min_element(extra_anon.begin(), extra_anon.end());
    state.counters["extra_anon_max"] = *std::max_element(extra_anon.begin(), extra_anon.end());
    state.counters["extra_file_kb"] = Quantile(extra_file, 0.5);
    state.counters["extra_rss_after_stop_kb"] = Quantile(extra_after_stop, 0.5);
  }
  state.counters["rounds"] = static_cast<double>(rounds.size());
  state.counters["host_load"] = std::max(g_load_before, g_load_after);
}
// One row per variant; the runs themselves happen once, in rounds (see Rounds()).
BENCHMARK(BM_DemoAppOverhead)->DenseRange(0, kVariantCount - 1)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

// --- the in-process A/B runs ---

struct AbSlice {
  bool on = false;
  double cpu_ns = 0, wall_ns = 0, instructions = -1, cycles = -1, touches = 0;
  double user_instructions = -1, user_cycles = -1;
};

// Parses the launcher's {"ab":true,...,"slices":[[on,cpu,wall,instr,cycles,touches,uinstr,ucycles],...]} line.
std::vector<AbSlice> ParseAbSlices(const std::string& out) {
  std::vector<AbSlice> slices;
  size_t at = out.find("\"slices\":[");
  if (at == std::string::npos) return slices;
  at += 10;
  while ((at = out.find('[', at)) != std::string::npos) {
    double v[8];
    const char* p = out.c_str() + at + 1;
    bool ok = true;
    for (double& x : v) {
      char* end = nullptr;
      x = std::strtod(p, &end);
      if (end == p) {
        ok = false;
        break;
      }
      p = end + 1;  // past ',' or ']'
    }
    if (!ok) break;
    AbSlice s;
    s.on = v[0] == 1;
    s.cpu_ns = v[1];
    s.wall_ns = v[2];
    s.instructions = v[3];
    s.cycles = v[4];
    s.touches = v[5];
    s.user_instructions = v[6];
    s.user_cycles = v[7];
    slices.push_back(s);
    at = static_cast<size_t>(p - out.c_str());
  }
  return slices;
}


const Variant* FindVariant(const char* name) {
  for (const Variant& v : kVariants) {
    if (std::strcmp(v.name, name) == 0) return &v;
  }
  return nullptr;
}

const char* const kAbVariants[] = {"input", "idle", "barrier", "looper", "all"};

void BM_DemoAppAB(benchmark::State& state) {
  const Variant& v = *FindVariant(kAbVariants[state.range(0)]);
  const int slices = static_cast<int>(g_ab_slices) / 4 * 4;
  const std::string cmd = std::string(JP_DEMO_LAUNCHER) + " --ab " + std::to_string(slices) + " --slice-ms " +
                          std::to_string(static_cast<long>(g_slice_ms)) + " --settle-ms " +
                          std::to_string(static_cast<long>(g_settle_ms)) + " --warmup " + std::to_string(g_warmup) +
                          " --config " + v.config + " --off-config bench-none.json 2>/dev/null";
  std::string out;
  const int rc = RunLauncher(cmd, &out);
  const std::vector<AbSlice> all = ParseAbSlices(out);
  if (rc != 0 || static_cast<int>(all.size()) != slices || slices < 4) {
    const std::string why = cmd + ": exit status " + std::to_string(rc) + ", " + std::to_string(all.size()) + " slices";
    state.SkipWithError(why.c_str());
    for (auto _ : state) {}
    return;
  }
  // Per group of four (on, off, off, on): (sum on - sum off) / 2, per second of slice.
  std::vector<double> d_cpu_us, d_instr, d_cycles, d_uinstr, d_ucycles, d_kinstr, off_cycles_per_ns;
  bool counted = true, user_counted = true;
  double wall_s = 0;
  for (size_t g = 0; g + 4 <= all.size(); g += 4) {
    double cpu = 0, instr = 0, cycles = 0, uinstr = 0, ucycles = 0;
    for (size_t i = g; i < g + 4; ++i) {
      const AbSlice& s = all[i];
      const double per_s = 1e9 / s.wall_ns, sign = s.on ? 0.5 : -0.5;
      cpu += sign * s.cpu_ns * per_s / 1e3;
      instr += sign * s.instructions * per_s;
      cycles += sign * s.cycles * per_s;
      uinstr += sign * s.user_instructions * per_s;
      ucycles += sign * s.user_cycles * per_s;
      counted = counted && s.instructions >= 0 && s.cycles >= 0;
      user_counted = user_counted && s.user_instructions >= 0 && s.user_cycles >= 0;
      if (!s.on && s.cpu_ns > 0) off_cycles_per_ns.push_back(s.cycles / s.cpu_ns);
      wall_s += s.wall_ns / 1e9;
      std::fprintf(stderr,
                   "ab %-8s slice %2zu %-3s cpu %7.0f us/s  instr %9.0f/s  cycles %10.0f/s  user instr %9.0f/s  "
                   "user cycles %10.0f/s  touches %.0f\n",
                   v.name, i, s.on ? "on" : "off", s.cpu_ns * per_s / 1e3, s.instructions * per_s, s.cycles * per_s,
                   s.user_instructions * per_s, s.user_cycles * per_s, s.touches);
    }
    d_cpu_us.push_back(cpu);
    d_instr.push_back(instr);
    d_cycles.push_back(cycles);
    d_uinstr.push_back(uinstr);
    d_ucycles.push_back(ucycles);
    d_kinstr.push_back(instr - uinstr);
  }
  for (auto _ : state) state.SetIterationTime(wall_s);
  state.SetLabel(v.name);
  state.counters["groups"] = static_cast<double>(d_cpu_us.size());
  state.counters["extra_cpu_us_per_s"] = Quantile(d_cpu_us, 0.5);
  state.counters["extra_cpu_q1"] = Quantile(d_cpu_us, 0.25);
  state.counters["extra_cpu_q3"] = Quantile(d_cpu_us, 0.75);
  if (counted) {
    const double cycles_per_us = Quantile(off_cycles_per_ns, 0.5) * 1e3;
    state.counters["extra_instr_per_s"] = Quantile(d_instr, 0.5);
    state.counters["extra_instr_q1"] = Quantile(d_instr, 0.25);
    state.counters["extra_instr_q3"] = Quantile(d_instr, 0.75);
    state.counters["extra_cycles_per_s"] = Quantile(d_cycles, 0.5);
    state.counters["extra_cycles_us_per_s"] = cycles_per_us > 0 ? Quantile(d_cycles, 0.5) / cycles_per_us : -1;
    if (user_counted) {
      // User mode alone: what the monitors' own code adds, without the kernel's interrupt noise; the
      // kernel's difference (syscalls a monitor adds, e.g. a futex wake) beside it.
      state.counters["extra_user_instr_per_s"] = Quantile(d_uinstr, 0.5);
      state.counters["extra_user_instr_q1"] = Quantile(d_uinstr, 0.25);
      state.counters["extra_user_instr_q3"] = Quantile(d_uinstr, 0.75);
      state.counters["extra_kernel_instr_per_s"] = Quantile(d_kinstr, 0.5);
      state.counters["extra_user_cycles_us_per_s"] =
          cycles_per_us > 0 ? Quantile(d_ucycles, 0.5) / cycles_per_us : -1;
    }
  }
}
BENCHMARK(BM_DemoAppAB)->DenseRange(0, sizeof kAbVariants / sizeof kAbVariants[0] - 1)->Iterations(1)
    ->UseManualTime()->Unit(benchmark::kSecond);

bool TakeFlag(const char* arg, const char* name, double* out) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *out = std::atof(arg + n + 1);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    double v = 0;
    if (i > 0 && TakeFlag(argv[i], "--seconds", &v)) {
      g_seconds = v > 0 ? v : g_seconds;
    } else if (i > 0 && TakeFlag(argv[i], "--warmup", &v)) {
      g_warmup = v >= 0 ? v : g_warmup;
    } else if (i > 0 && TakeFlag(argv[i], "--rounds", &v)) {
      g_rounds = v >= 1 ? static_cast<int>(v) : g_rounds;
    } else if (i > 0 && std::strncmp(argv[i], "--history=", 10) == 0) {
      g_history = argv[i] + 10;
    } else if (i > 0 && TakeFlag(argv[i], "--ab-slices", &v)) {
      g_ab_slices = v >= 4 ? v : g_ab_slices;
    } else if (i > 0 && TakeFlag(argv[i], "--slice-ms", &v)) {
      g_slice_ms = v >= 100 ? v : g_slice_ms;
    } else if (i > 0 && TakeFlag(argv[i], "--settle-ms", &v)) {
      g_settle_ms = v >= 0 ? v : g_settle_ms;
    } else {
      rest.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
