// The looper monitor's added cost on the main thread, per message, on the host JVM (HotSpot, no
// -Xcheck:jni). Target: at most 2 us per message over the stand-in's own Printer cost.
//
// - PrinterLines/standin: Looper's two lines per message built as Looper builds them and printed to a
//   Printer that does nothing: what message logging costs the app without jankprobe.
// - PrinterLines/jankprobe: the same lines through com.jankprobe.LooperPrinter chained to that Printer:
//   JNI in and out, the line copied and parsed, names interned, both clocks (wall + thread CPU), the
//   sampling deadline armed and disarmed, the looper.message record, the history window.
//   The difference of the two is the monitor's cost per message.
// - Dispatch/monitor_off|on: whole messages through the stand-in Looper (post n, wait for the last), with
//   the looper monitor switched off (the app's own printer only) and on.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/jvm/app_under_test.h"

namespace jp::testing {
namespace {

constexpr const char* kScenarios = "com.example.app.LooperScenarios";
constexpr int kBatch = 1000;
const char* kOn = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false}})";
const char* kOff = R"({"input":{"enabled":false},"idle":{"enabled":false},"barrier":{"enabled":false},)"
                   R"("looper":{"enabled":false}})";

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

void Dispatch(benchmark::State& state, const char* config) {
  if (!Ready(state)) return;
  if (Configure(config) != 0) return state.SkipWithError("configure failed");
  JvmHarness* jvm = Jvm();
  for (auto _ : state) {
    JavaResult r = jvm->CallStatic(kScenarios, "runQuick", "(I)I", {I(kBatch)});
    if (!r.ok || r.value.i != 0) return state.SkipWithError(("runQuick: " + r.why).c_str());
  }
  PerMessage(state, kBatch + 1);  // the batch and the message that waits for it
  Configure(kOn);
}

void BM_Dispatch_MonitorOff(benchmark::State& state) { Dispatch(state, kOff); }
void BM_Dispatch_MonitorOn(benchmark::State& state) { Dispatch(state, kOn); }

BENCHMARK(BM_PrinterLines_Standin)->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_PrinterLines_Jankprobe)->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_Dispatch_MonitorOff)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseRealTime();
BENCHMARK(BM_Dispatch_MonitorOn)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseRealTime();

}  // namespace
}  // namespace jp::testing

BENCHMARK_MAIN();
