// What jankprobe costs the demo app (issue 7): the same app without faults, run once with jankprobe off
// (never loaded) and once on (loaded and started with tools/demo/config/demo.json), each in its own
// process (one JVM per process), alternating so that drift hits both alike. Per pair:
// - the main thread's extra CPU time per second of run (CLOCK_THREAD_CPUTIME_ID of the app's main thread
//   over the run window; the target is under 10 us per second);
// - the process's extra resident memory: how much VmRSS grew over the app's run (from before the app's
//   start to its end, so the JVM's own start-up is not in it), on minus off (target: under 512 KB).
// The counters are means over the iterations; each iteration's figures are printed to stderr too.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct RunFigures {
  bool ok = false;
  double main_cpu_ns = 0, run_ns = 0, rss_before_app_kb = 0, rss_after_app_kb = 0, touches = 0;
};

double Field(const std::string& json, const char* key) {
  const std::string k = std::string("\"") + key + "\":";
  const size_t at = json.find(k);
  return at == std::string::npos ? -1 : std::atof(json.c_str() + at + k.size());
}

RunFigures RunApp(bool jankprobe, double seconds) {
  RunFigures f;
  const std::string cmd = std::string(JP_DEMO_LAUNCHER) + " --bench " + std::to_string(seconds) + " --jankprobe " +
                          (jankprobe ? "on" : "off") + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return f;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int rc = pclose(p);
  if (rc != 0) std::fprintf(stderr, "%s: exit status %d\n", cmd.c_str(), rc);
  if (out.find("\"main_cpu_ns\"") == std::string::npos) return f;
  f.main_cpu_ns = Field(out, "main_cpu_ns");
  f.run_ns = Field(out, "run_ns");
  f.rss_before_app_kb = Field(out, "rss_kb_before_app");
  f.rss_after_app_kb = Field(out, "rss_kb_after_app");
  f.touches = Field(out, "touches_finished");
  f.ok = f.run_ns > 0 && f.main_cpu_ns > 0;
  return f;
}

void BM_DemoAppOverhead(benchmark::State& state) {
  const double seconds = static_cast<double>(state.range(0));
  double off_cpu = 0, on_cpu = 0, extra_cpu = 0, extra_rss = 0, touches = 0;
  int n = 0;
  for (auto _ : state) {
    const RunFigures off = RunApp(false, seconds);
    const RunFigures on = RunApp(true, seconds);
    if (!off.ok || !on.ok) {
      state.SkipWithError("a demo run failed (run jankprobe-demo --bench 2 --jankprobe on by hand)");
      return;
    }
    const double off_us_s = off.main_cpu_ns / 1e3 / (off.run_ns / 1e9);
    const double on_us_s = on.main_cpu_ns / 1e3 / (on.run_ns / 1e9);
    const double rss = (on.rss_after_app_kb - on.rss_before_app_kb) - (off.rss_after_app_kb - off.rss_before_app_kb);
    std::fprintf(stderr, "pair %d: main thread %.0f us/s off, %.0f us/s on (extra %.0f); RSS growth %.0f KB off, %.0f KB on (extra %.0f); touches %.0f / %.0f\n",
                 n, off_us_s, on_us_s, on_us_s - off_us_s, off.rss_after_app_kb - off.rss_before_app_kb,
                 on.rss_after_app_kb - on.rss_before_app_kb, rss, off.touches, on.touches);
    off_cpu += off_us_s;
    on_cpu += on_us_s;
    extra_cpu += on_us_s - off_us_s;
    extra_rss += rss;
    touches += on.touches;
    ++n;
    state.SetIterationTime((off.run_ns + on.run_ns) / 1e9);
  }
  if (n == 0) return;
  state.counters["off_main_cpu_us_per_s"] = off_cpu / n;
  state.counters["on_main_cpu_us_per_s"] = on_cpu / n;
  state.counters["extra_main_cpu_us_per_s"] = extra_cpu / n;
  state.counters["extra_rss_kb"] = extra_rss / n;
  state.counters["touches_per_run"] = touches / n;
}
// Argument: seconds per run. 5 pairs of 5 s runs take about a minute.
BENCHMARK(BM_DemoAppOverhead)->Arg(5)->Iterations(5)->UseManualTime()->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
