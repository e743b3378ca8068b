// The IdleHandler monitor's added cost on the main thread, per queueIdle() call, on the host JVM (HotSpot,
// no -Xcheck:jni), side by side in one run:
// - Call/plain: a trivial handler's queueIdle() called directly (what the app pays without jankprobe);
// - Call/timed: the same handler through TimingIdleHandlerList's wrapper with the idle monitor on (the
//   running-call mark, the native end call with its clock read and the idle.handler record).
// The difference of the two is the monitor's cost per handler call. Both loops run on the app's main
// looper thread, as MessageQueue.next() would call them (the native side's single-writer path is the main
// thread's); the time is what the loop took there (manual time), not the hand-over to it.
//
// This is the compiled steady state (C2). An app's idle handlers run ~100 times a second, so on HotSpot the
// wrapper spends a long time in the interpreter and in C1's profiling tier first; to measure those, the
// embedded JVM reads JAVA_TOOL_OPTIONS: e.g. JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=3 or =-Xint.
#include <benchmark/benchmark.h>

#include <string>

#include "tests/jvm/app_under_test.h"

namespace jp::testing {
namespace {

constexpr const char* kBench = "com.example.app.IdleBench";
constexpr int kBatch = 1000;
const char* kIdleOnly = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false}})";

jvalue Z(bool b) {
  jvalue v{};
  v.z = b ? JNI_TRUE : JNI_FALSE;
  return v;
}

void Calls(benchmark::State& state, bool wrapped) {
  const AppLaunch& launch = LaunchApp(kIdleOnly);
  if (!launch.ok || launch.start_rc != 0) return state.SkipWithError(("no JVM / plugin: " + launch.why).c_str());
  JvmHarness* jvm = Jvm();
  for (auto _ : state) {
    JavaResult r = jvm->CallStatic(kBench, "nanosOnMain", "(IZ)J", {I(kBatch), Z(wrapped)});
    if (!r.ok || r.value.j < 0) {
      return state.SkipWithError(("nanosOnMain: " + (r.ok ? std::to_string(r.value.j) : r.why)).c_str());
    }
    state.SetIterationTime(static_cast<double>(r.value.j) * 1e-9);
  }
  // Seconds per call of main-thread time (shown with an SI prefix: "95n" = 95 ns).
  state.counters["per_call"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_IdleCall_Plain(benchmark::State& state) { Calls(state, false); }
void BM_IdleCall_Timed(benchmark::State& state) { Calls(state, true); }

BENCHMARK(BM_IdleCall_Plain)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();
BENCHMARK(BM_IdleCall_Timed)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();

}  // namespace
}  // namespace jp::testing

BENCHMARK_MAIN();
