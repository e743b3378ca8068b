// The IdleHandler monitor's added cost on the main thread, per queueIdle() call, on the host JVM (HotSpot,
// no -Xcheck:jni), side by side in one run:
// - Call/plain: a trivial handler's queueIdle() called directly (what the app pays without jankprobe);
// - Call/timed: the same handler through TimingIdleHandlerList's wrapper with the idle monitor on: two JNI
//   calls, two clock reads, the running-call marks, the name read and interned, the idle.handler record.
// The difference of the two is the monitor's cost per handler call.
#include <benchmark/benchmark.h>

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
    JavaResult r = jvm->CallStatic(kBench, "calls", "(IZ)I", {I(kBatch), Z(wrapped)});
    if (!r.ok || r.value.i != kBatch) return state.SkipWithError(("calls: " + r.why).c_str());
  }
  // Seconds per call (shown with an SI prefix: "95n" = 95 ns).
  state.counters["per_call"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_IdleCall_Plain(benchmark::State& state) { Calls(state, false); }
void BM_IdleCall_Timed(benchmark::State& state) { Calls(state, true); }

BENCHMARK(BM_IdleCall_Plain)->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_IdleCall_Timed)->Unit(benchmark::kMicrosecond)->MinTime(1.0);

}  // namespace
}  // namespace jp::testing

BENCHMARK_MAIN();
