// The IdleHandler monitor's added cost on the main thread, per queueIdle() call, on the host JVM (HotSpot,
// no -Xcheck:jni), side by side in one run:
// - Call/plain: a trivial handler's queueIdle() called directly (what the app pays without jankprobe);
// - Call/timed: the same handler through TimingIdleHandlerList's wrapper with the idle monitor on, as an
//   app's short handlers run without the looper's poll source: the running-call mark, the start and end
//   clock reads in Java and the call folded into its class's figures (shorter than idle.record_min_us: no
//   native call, no record);
// - Call/plain_pass, Call/timed_pass: the same two with a poll source gap word written before every call
//   (IdleBench's NEW_PASS_EACH_CALL: each call is the first of a new idle pass, so the wrapper takes the
//   gap as its start and reads the clock once, at its end; the store is in both loops). Their difference
//   is the cost per call with the looper monitor's default source on, as in the demo app;
// - Call/timed_chained: one gap word for the whole loop (ONE_PASS: the 2nd..nth handlers of a pass start
//   at the previous one's end), against Call/plain;
// - Call/timed_recorded: the same with idle.record_min_us 0, so every call still goes through the native
//   end and gets its idle.handler record (what every call cost before calls were folded, plus the Java
//   end clock read).
// The difference to Call/plain is the monitor's cost per handler call. Both loops run on the app's main
// looper thread, as MessageQueue.next() would call them (the native side's single-writer path is the main
// thread's); the time is what the loop took there (manual time), not the hand-over to it.
//
// This is the compiled steady state (C2). An app's idle handlers run ~100 times a second, so on HotSpot the
// wrapper spends a long time in the interpreter and in C1's profiling tier first (in the demo's first ~50 s
// Timed.queueIdle never leaves tier 3); to measure those, the embedded JVM reads
// JAVA_TOOL_OPTIONS: JAVA_TOOL_OPTIONS="-XX:TieredStopAtLevel=3 -XX:C1InlineStackLimit=5" or =-Xint. The
// second flag keeps C1's inlining as in the demo's tiered JVM: capping the tiers at 3 raises its default
// from 5 to 10 (JDK 17), and C1 then inlines callees (DirectIntBufferU.get, the buffers' ix) it does not
// inline in an app. idle_bench runs jankprobe-hotspot.jar, whose GapWord reads the gap word with an
// inlined Unsafe load; idle_buffer_bench, the same benchmarks on the portable jankprobe.jar an app gets, whose
// GapWord reads the direct buffer's view (ART's path, two real calls in tier 3).
#include <benchmark/benchmark.h>

#include <string>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

constexpr const char* kBench = "com.example.app.IdleBench";
constexpr int kBatch = 1000;
const char* kIdleOnly = R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false}})";

// The idle settings each variant runs with (a change of record_min_us alone retunes the running monitor).
std::string IdleOnly(int record_min_us) {
  return R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},)"
         R"("idle":{"lag_ms":200,"record_min_us":)" + std::to_string(record_min_us) + "}}";
}

// A counter of the idle monitor's status ("calls", "folded"), -1 when absent.
double IdleStatus(const char* key) {
  const MonitorStatus s = StatusOf("idle");
  return s.Has(key) ? static_cast<double>(s.Uint(key)) : -1;
}

// IdleBench's gap modes.
constexpr int kNoGap = 0, kNewPassEachCall = 1, kOnePass = 2;

void Calls(benchmark::State& state, bool wrapped, int record_min_us = 1000, int gap_mode = kNoGap) {
  const AppLaunch& launch = LaunchApp(kIdleOnly);
  if (!launch.ok || launch.start_rc != 0) return state.SkipWithError(("no JVM / plugin: " + launch.why).c_str());
  if (Configure(IdleOnly(record_min_us)) != 0) {
    return state.SkipWithError("JankProbe.configure refused the idle settings");
  }
  JvmHarness* jvm = Jvm();
  const double calls0 = IdleStatus("calls"), folded0 = IdleStatus("folded");
  for (auto _ : state) {
    JavaResult r = jvm->CallStatic(kBench, "nanosOnMain", "(IZI)J", {I(kBatch), Z(wrapped), I(gap_mode)});
    if (!r.ok || r.value.j < 0) {
      return state.SkipWithError(("nanosOnMain: " + (r.ok ? std::to_string(r.value.j) : r.why)).c_str());
    }
    state.SetIterationTime(static_cast<double>(r.value.j) * 1e-9);
  }
  // Seconds per call of main-thread time (shown with an SI prefix: "95n" = 95 ns).
  // The share of timed calls that ended in Java (folded): ~1 for Call/timed, 0 for Call/timed_recorded.
  const double calls = IdleStatus("calls") - calls0;
  if (wrapped && calls > 0) state.counters["folded"] = (IdleStatus("folded") - folded0) / calls;
  state.counters["per_call"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_IdleCall_Plain(benchmark::State& state) { Calls(state, false); }
void BM_IdleCall_Timed(benchmark::State& state) { Calls(state, true); }
void BM_IdleCall_TimedRecorded(benchmark::State& state) { Calls(state, true, 0); }
void BM_IdleCall_PlainPass(benchmark::State& state) { Calls(state, false, 1000, kNewPassEachCall); }
void BM_IdleCall_TimedPass(benchmark::State& state) { Calls(state, true, 1000, kNewPassEachCall); }
void BM_IdleCall_TimedChained(benchmark::State& state) { Calls(state, true, 1000, kOnePass); }

BENCHMARK(BM_IdleCall_Plain)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();
BENCHMARK(BM_IdleCall_Timed)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();
BENCHMARK(BM_IdleCall_TimedRecorded)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();
BENCHMARK(BM_IdleCall_PlainPass)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();
BENCHMARK(BM_IdleCall_TimedPass)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();
BENCHMARK(BM_IdleCall_TimedChained)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseManualTime();

}  // namespace
}  // namespace jp::testing

BENCHMARK_MAIN();
