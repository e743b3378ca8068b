// What a line of memory costs a thread right after it slept, on this host: the measure behind every
// in-situ figure of the demo (the main thread sleeps between touches and frames, and everything of ours it
// runs after a wake is a first touch since the sleep). Hot-loop benchmarks never see it; on a phone out
// of deep idle and on a virtual machine whose vCPU was descheduled it is most of a wake's cost.
//
// Per iteration: a thread touches a set of lines (warm), sleeps 5 ms in epoll_wait with nothing to
// read, then times one load (steady_clock, its own code warmed by a first read after the wake):
// - FirstRegion: a line in a 2 MB region not touched since the sleep (its page table page too: the
//   page walk's cost, nested under a hypervisor);
// - SameRegionOtherPage: another 4 KiB page of the region just walked (a TLB miss whose walk finds the
//   upper levels cached);
// - SamePageOtherLine: another line of the page just touched (a cache miss alone).
// Each case after the ones before it in the same wake, as a proxy's lines follow the app's. HotLine: the
// same timed load without the sleep (the clock pair's own cost). Session 11 (AMD EPYC KVM guest, no PMU;
// `build/<dir>/bench/host_wake_bench`, medians): 795 / 493 / 173 ns, hot 24 ns.
#include <benchmark/benchmark.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kSpan = 64 * kMiB;

struct Area {
  char* base = nullptr;
  int epfd = -1;
  Area() {
    void* p = mmap(nullptr, kSpan, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, kSpan, MADV_NOHUGEPAGE);  // 4 KiB pages, as a library's text and data
    base = static_cast<char*>(p);
    for (size_t i = 0; i < kSpan; i += 4096) base[i] = 1;
    epfd = epoll_create1(0);
  }
};

Area& Get() {
  static Area a;
  return a;
}

inline void Load(const char* p) { benchmark::DoNotOptimize(*reinterpret_cast<const volatile char*>(p)); }

// `which`: 0 FirstRegion, 1 SameRegionOtherPage, 2 SamePageOtherLine. The lines: A (the app's, touched
// first after the wake), B in a region 20 MiB away, C another page of B's region, D another line of B's page.
void TouchAfterSleep(benchmark::State& state, int which) {
  Area& a = Get();
  if (a.base == nullptr || a.epfd < 0) return state.SkipWithError("mmap or epoll_create1 failed");
  const char* A = a.base;
  const char* B = a.base + 20 * kMiB + 3 * 4096;
  const char* C = B + 5 * 4096;
  const char* D = B + 7 * 64;
  const char* timed = which == 0 ? B : which == 1 ? C : D;
  epoll_event ev{};
  for (auto _ : state) {
    Load(A), Load(B), Load(C), Load(D);
    epoll_wait(a.epfd, &ev, 1, 5);
    Load(A);  // the app's own first touch after the wake
    benchmark::DoNotOptimize(std::chrono::steady_clock::now());  // the clock's code and data, warm
    if (which >= 1) Load(B);
    const auto t0 = std::chrono::steady_clock::now();
    Load(timed);
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}

void BM_FirstRegion(benchmark::State& s) { TouchAfterSleep(s, 0); }
void BM_SameRegionOtherPage(benchmark::State& s) { TouchAfterSleep(s, 1); }
void BM_SamePageOtherLine(benchmark::State& s) { TouchAfterSleep(s, 2); }
void BM_HotLine(benchmark::State& state) {  // the reference: the same timed load without the sleep
  Area& a = Get();
  if (a.base == nullptr) return state.SkipWithError("mmap failed");
  const char* B = a.base + 20 * kMiB + 3 * 4096;
  for (auto _ : state) {
    Load(B);
    const auto t0 = std::chrono::steady_clock::now();
    Load(B);
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}

BENCHMARK(BM_FirstRegion)->UseManualTime()->Iterations(200)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_SameRegionOtherPage)->UseManualTime()->Iterations(200)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_SamePageOtherLine)->UseManualTime()->Iterations(200)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_HotLine)->UseManualTime()->Iterations(200)->Repetitions(3)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
