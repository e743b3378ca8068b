// PLT hook engine benchmarks. Every call goes through a fixture library's GOT slot (full_call_identity
// calls jp_target_identity through libjp_hook_full.so's PLT), so neither inlining nor constant folding
// can remove the hooked path. Compare BM_Call/unhooked with BM_Call/hooked_* from the same run.
#include <benchmark/benchmark.h>

#include <link.h>

#include <cstdio>
#include <cstdlib>

#include "jankprobe/plt.h"
#include "tests/fixtures/hook/callers.h"

namespace {

using IdentityFn = int (*)(int);

void* g_prev = nullptr;
jp_plt_hook* g_handle = nullptr;

// The lightest useful proxy: one acquire load of the prev variable and the call.
int PassThroughProxy(int x) { return reinterpret_cast<IdentityFn>(__atomic_load_n(&g_prev, __ATOMIC_ACQUIRE))(x); }

// The proxy written as plt.h recommends, through JP_PLT_PREV (per-module prev lookup).
int PrevForProxy(int x) { return reinterpret_cast<IdentityFn>(JP_PLT_PREV(g_handle, g_prev))(x); }

jp_plt_hook* MustInstall(const char* caller, void* proxy) {
  jp_plt_hook* hook = jp_plt_hook_install(caller, "jp_target_identity", proxy, &g_prev);
  if (hook == nullptr) {
    std::fprintf(stderr, "install failed: %s\n", jp_plt_last_error());
    std::abort();
  }
  return hook;
}

void MustRemove(jp_plt_hook* hook) {
  int rc = jp_plt_hook_remove(hook);
  if (rc != JP_PLT_OK) {
    std::fprintf(stderr, "remove failed (%d): %s\n", rc, jp_plt_last_error());
    std::abort();
  }
}

void RunCalls(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) {
    x = full_call_identity(x + 1);
    benchmark::DoNotOptimize(x);
  }
}

void BM_CallUnhooked(benchmark::State& state) { RunCalls(state); }

void BM_CallHookedPassThrough(benchmark::State& state) {
  g_handle = MustInstall("libjp_hook_full.so", reinterpret_cast<void*>(&PassThroughProxy));
  RunCalls(state);
  MustRemove(g_handle);
}

void BM_CallHookedPrevFor(benchmark::State& state) {
  g_handle = MustInstall("libjp_hook_full.so", reinterpret_cast<void*>(&PrevForProxy));
  RunCalls(state);
  MustRemove(g_handle);
}

void BM_InstallOneModule(benchmark::State& state) {
  for (auto _ : state) {
    jp_plt_hook* hook = MustInstall("libjp_hook_full.so", reinterpret_cast<void*>(&PassThroughProxy));
    state.PauseTiming();
    MustRemove(hook);
    state.ResumeTiming();
  }
}

void BM_RemoveOneModule(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    jp_plt_hook* hook = MustInstall("libjp_hook_full.so", reinterpret_cast<void*>(&PassThroughProxy));
    state.ResumeTiming();
    MustRemove(hook);
  }
}

int CountModules() {
  int count = 0;
  dl_iterate_phdr([](dl_phdr_info*, size_t, void* n) { return ++*static_cast<int*>(n), 0; }, &count);
  return count;
}

void BM_InstallAllModules(benchmark::State& state) {
  size_t slots = 0;
  for (auto _ : state) {
    jp_plt_hook* hook = MustInstall(nullptr, reinterpret_cast<void*>(&PassThroughProxy));
    state.PauseTiming();
    slots = jp_plt_hook_slot_count(hook);
    MustRemove(hook);
    state.ResumeTiming();
  }
  state.counters["loaded_modules"] = CountModules();
  state.counters["slots"] = static_cast<double>(slots);
}

void BM_RemoveAllModules(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    jp_plt_hook* hook = MustInstall(nullptr, reinterpret_cast<void*>(&PassThroughProxy));
    state.ResumeTiming();
    MustRemove(hook);
  }
  state.counters["loaded_modules"] = CountModules();
}

// Install + remove back to back, no timer pauses (whose own cost is ~0.1-0.5 us).
void BM_InstallRemoveOneModule(benchmark::State& state) {
  for (auto _ : state) MustRemove(MustInstall("libjp_hook_full.so", reinterpret_cast<void*>(&PassThroughProxy)));
}

// The first install also installs the dlopen monitor; do it once before anything is timed.
struct WarmUp {
  WarmUp() { MustRemove(MustInstall("libjp_hook_full.so", reinterpret_cast<void*>(&PassThroughProxy))); }
} warm_up;

}  // namespace

BENCHMARK(BM_CallUnhooked);
BENCHMARK(BM_CallHookedPassThrough);
BENCHMARK(BM_CallHookedPrevFor);
BENCHMARK(BM_InstallOneModule)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RemoveOneModule)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InstallRemoveOneModule)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InstallAllModules)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RemoveAllModules)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
