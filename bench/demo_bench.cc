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
// - resident memory: how much VmRSS grew from before the app's start to its end (the JVM's own start-up is
//   not in it), variant minus off; target for "all": under 512 KB. Split into anonymous and file pages.
//
// Flags (before the benchmark's own): --seconds=S (measured window per run, default 4), --warmup=S
// (default 1), --rounds=N (default 5). Every run's figures are printed to stderr.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

struct RunFigures {
  bool ok = false;
  double main_cpu_ns = 0, run_ns = 0, rss_growth_kb = 0, anon_growth_kb = 0, file_growth_kb = 0, touches = 0;
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

double Field(const std::string& json, const char* key) {
  const std::string k = std::string("\"") + key + "\":";
  const size_t at = json.find(k);
  return at == std::string::npos ? -1 : std::atof(json.c_str() + at + k.size());
}

RunFigures RunApp(const Variant& v) {
  RunFigures f;
  std::string cmd = std::string(JP_DEMO_LAUNCHER) + " --bench " + std::to_string(g_seconds) + " --warmup " +
                    std::to_string(g_warmup) + " --jankprobe " + (v.jankprobe ? "on" : "off");
  if (v.jankprobe) cmd += std::string(" --config ") + v.config;
  if (v.app_printer) cmd += " --app-printer noop";
  cmd += " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return f;
  std::string out;
  char buf[1024];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int rc = pclose(p);
  if (rc != 0) std::fprintf(stderr, "%s: exit status %d\n", cmd.c_str(), rc);
  if (rc != 0 || out.find("\"main_cpu_ns\"") == std::string::npos) return f;
  f.main_cpu_ns = Field(out, "main_cpu_ns");
  f.run_ns = Field(out, "run_ns");
  f.rss_growth_kb = Field(out, "rss_kb_after_app") - Field(out, "rss_kb_before_app");
  f.anon_growth_kb = Field(out, "anon_kb_after_app") - Field(out, "anon_kb_before_app");
  f.file_growth_kb = Field(out, "file_kb_after_app") - Field(out, "file_kb_before_app");
  f.touches = Field(out, "touches_finished");
  f.ok = f.run_ns > 0 && f.main_cpu_ns > 0;
  return f;
}

// rounds[r][v]: every variant's run in round r. Run once, on the first benchmark that needs them.
std::vector<std::vector<RunFigures>>* g_rounds_data = nullptr;
std::string g_failure;

const std::vector<std::vector<RunFigures>>& Rounds() {
  if (g_rounds_data) return *g_rounds_data;
  g_rounds_data = new std::vector<std::vector<RunFigures>>();
  for (int r = 0; r < g_rounds && g_failure.empty(); ++r) {
    std::vector<RunFigures> round;
    for (const Variant& v : kVariants) {
      const RunFigures f = RunApp(v);
      if (!f.ok) {
        g_failure = std::string("the ") + v.name + " run failed (try jankprobe-demo --bench 2 --jankprobe on by hand)";
        break;
      }
      std::fprintf(stderr, "round %d %-8s main thread %7.0f us/s, RSS growth %6.0f KB (anon %6.0f, file %5.0f), touches %.0f\n",
                   r, v.name, f.cpu_us_per_s(), f.rss_growth_kb, f.anon_growth_kb, f.file_growth_kb, f.touches);
      round.push_back(f);
    }
    if (g_failure.empty()) g_rounds_data->push_back(round);
  }
  return *g_rounds_data;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void BM_DemoAppOverhead(benchmark::State& state) {
  const size_t vi = static_cast<size_t>(state.range(0));
  const auto& rounds = Rounds();
  if (!g_failure.empty() || rounds.empty()) {
    state.SkipWithError(g_failure.empty() ? "no rounds ran" : g_failure.c_str());
    for (auto _ : state) {}
    return;
  }
  std::vector<double> cpu, extra_cpu, extra_rss, extra_anon, extra_file;
  double run_s = 0;
  for (const auto& round : rounds) {
    const RunFigures& off = round[0];
    const RunFigures& f = round[vi];
    cpu.push_back(f.cpu_us_per_s());
    extra_cpu.push_back(f.cpu_us_per_s() - off.cpu_us_per_s());
    extra_rss.push_back(f.rss_growth_kb - off.rss_growth_kb);
    extra_anon.push_back(f.anon_growth_kb - off.anon_growth_kb);
    extra_file.push_back(f.file_growth_kb - off.file_growth_kb);
    run_s += f.run_ns / 1e9;
  }
  for (auto _ : state) state.SetIterationTime(run_s / static_cast<double>(rounds.size()));
  state.SetLabel(kVariants[vi].name);
  state.counters["main_cpu_us_per_s"] = Median(cpu);
  if (vi != 0) {
    state.counters["extra_cpu_us_per_s"] = Median(extra_cpu);
    state.counters["extra_cpu_min"] = *std::min_element(extra_cpu.begin(), extra_cpu.end());
    state.counters["extra_cpu_max"] = *std::max_element(extra_cpu.begin(), extra_cpu.end());
    state.counters["extra_rss_kb"] = Median(extra_rss);
    state.counters["extra_rss_min"] = *std::min_element(extra_rss.begin(), extra_rss.end());
    state.counters["extra_rss_max"] = *std::max_element(extra_rss.begin(), extra_rss.end());
    state.counters["extra_anon_kb"] = Median(extra_anon);
    state.counters["extra_file_kb"] = Median(extra_file);
  }
  state.counters["rounds"] = static_cast<double>(rounds.size());
}
// One row per variant; the runs themselves happen once, in rounds (see Rounds()).
BENCHMARK(BM_DemoAppOverhead)->DenseRange(0, kVariantCount - 1)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

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
