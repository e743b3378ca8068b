// The looper monitor's added cost on the main thread, per message, on the host JVM (HotSpot, no
// -Xcheck:jni). Target: at most 2 us per message over the stand-in's own Printer cost.
//
// - PrinterLines/standin: Looper's two lines per message built as Looper builds them and printed to a
//   Printer that does nothing: what message logging costs the app without jankprobe.
// - PrinterLines/jankprobe: the same lines through com.jankprobe.LooperPrinter chained to that Printer:
//   JNI in and out, the line copied and parsed, names interned, both clocks (wall + thread CPU), the
//   sampling deadline armed and disarmed, the looper.message record, the history window.
//   The difference of the two is the monitor's cost per message.
// - Dispatch/none|printer|poll: whole messages through the stand-in Looper (post n, wait for the last),
//   side by side: the looper monitor off, on the printer source, on the poll source (the stand-in
//   MessageQueue waits in the libutils.so fixture's epoll_wait, as on a phone). The app's own printer is
//   cleared first, so "none" and "poll" pay no log lines at all (as an app without message logging).
//   Besides wall time per message, main_cpu_per_message: the main thread's CPU clock (read from here by
//   its tid) over the batch, per message; the difference to "none" is the monitor's main-thread cost.
#include <benchmark/benchmark.h>
#include <dirent.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/jvm/app_under_test.h"

namespace jp::testing {
namespace {

constexpr const char* kScenarios = "com.example.app.LooperScenarios";
constexpr int kBatch = 1000;
const char* kOn = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false}})";
const char* kOff = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
                   R"("looper":{"enabled":false}})";
const char* kPrinter = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
                       R"("looper":{"source":"printer"}})";
const char* kPoll = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
                    R"("looper":{"source":"poll"}})";

// The test app's main thread (HotSpot names the native thread after the Java one, "main"), 0 if not found.
uint32_t MainThreadTid() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return 0;
  uint32_t found = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "main") found = static_cast<uint32_t>(std::strtoul(e->d_name, nullptr, 10));
  }
  closedir(d);
  return found;
}

// A thread's CPU clock from its tid (the clock id pthread_getcpuclockid would give).
double ThreadCpuNs(uint32_t tid) {
  const clockid_t clock = static_cast<clockid_t>((~tid << 3) | 6u);
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

bool Ready(benchmark::State& state) {
  const AppLaunch& launch = LaunchApp(kOn);
  if (!launch.ok || launch.start_rc != 0) {
    state.SkipWithError(("no JVM / plugin: " + launch.why).c_str());
    return false;
  }
  return true;
}

void PerMessage(benchmark::State& state, int per_iteration) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * per_iteration);
  // Seconds per message (shown with an SI prefix: "1.2u" = 1.2 us).
  state.counters["per_message"] = benchmark::Counter(static_cast<double>(state.iterations()) * per_iteration,
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void PrinterLines(benchmark::State& state, const char* method) {
  if (!Ready(state)) return;
  if (Configure(kOn) != 0) return state.SkipWithError("configure failed");
  JvmHarness* jvm = Jvm();
  for (auto _ : state) {
    JavaResult r = jvm->CallStatic(kScenarios, method, "(I)J", {I(kBatch)});
    if (!r.ok) return state.SkipWithError(r.why.c_str());
    benchmark::DoNotOptimize(r.value.j);
  }
  PerMessage(state, kBatch);
}

void BM_PrinterLines_Standin(benchmark::State& state) { PrinterLines(state, "benchPlain"); }
void BM_PrinterLines_Jankprobe(benchmark::State& state) { PrinterLines(state, "benchJankprobe"); }

void Dispatch(benchmark::State& state, const char* config, const char* want_source) {
  if (!Ready(state)) return;
  JvmHarness* jvm = Jvm();
  // No app printer: Looper builds its log lines only for the printer source's own printer.
  jvm->CallStatic(kScenarios, "replacePrinter", "(Ljava/lang/String;)I", {L(jvm->NewString("null"))});
  if (Configure(config) != 0) return state.SkipWithError("configure failed");
  const std::string status = CallString("status");
  if (want_source && status.find(std::string("\"source\":\"") + want_source + "\"") == std::string::npos) {
    return state.SkipWithError(("not on the " + std::string(want_source) + " source: " + status).c_str());
  }
  const uint32_t main_tid = MainThreadTid();
  if (main_tid == 0) return state.SkipWithError("no thread named main");
  double cpu = 0;
  for (auto _ : state) {
    const double cpu0 = ThreadCpuNs(main_tid);
    JavaResult r = jvm->CallStatic(kScenarios, "runQuick", "(I)I", {I(kBatch)});
    cpu += ThreadCpuNs(main_tid) - cpu0;
    if (!r.ok || r.value.i != 0) return state.SkipWithError(("runQuick: " + r.why).c_str());
  }
  PerMessage(state, kBatch + 1);  // the batch and the message that waits for it
  const double messages = static_cast<double>(state.iterations()) * (kBatch + 1);
  state.counters["main_cpu_per_message_ns"] = benchmark::Counter(cpu / messages);
  Configure(kOn);
}

void BM_Dispatch_None(benchmark::State& state) { Dispatch(state, kOff, nullptr); }
void BM_Dispatch_Printer(benchmark::State& state) { Dispatch(state, kPrinter, "printer"); }
void BM_Dispatch_Poll(benchmark::State& state) { Dispatch(state, kPoll, "poll"); }

BENCHMARK(BM_PrinterLines_Standin)->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_PrinterLines_Jankprobe)->Unit(benchmark::kMicrosecond)->MinTime(1.0);
// Interleaved repetitions, so that a slow phase of the host hits all three alike.
BENCHMARK(BM_Dispatch_None)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseRealTime()->Repetitions(5);
BENCHMARK(BM_Dispatch_Printer)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseRealTime()->Repetitions(5);
BENCHMARK(BM_Dispatch_Poll)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseRealTime()->Repetitions(5);

}  // namespace
}  // namespace jp::testing

BENCHMARK_MAIN();
