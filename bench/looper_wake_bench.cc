// What one wake of the app's main thread costs us when it comes back cold, with our code and data where an
// app has them, at a resolution of tens of nanoseconds.
//
// On a host whose wakes come back cold (a KVM vCPU that was descheduled, a phone core out of deep idle)
// every line and page of ours a wake touches is a miss: that is most of the in-situ figure, and hot loops
// never see it. Sleeping for real brings the hypervisor's idle and wake too, which move a wait's CPU time by
// tens of microseconds between runs (looper_poll_bench's ColdWake). Here no thread sleeps:
// bench/cold_caches.h empties the caches, the TLBs and the page-walk caches just before each timed wait.
//
// The poll source runs inside libjankprobe_twin.so: the shipped library linked a second time, the same way
// (cmake/shipped_link.cmake), plus three entry points (bench/library_twin.cc). Its text and data then lie
// where libjankprobe.so's do, so a wake touches the same pages. A benchmark linked with the static parts
// has them wherever its own link puts them: the poll source's words were on 4 data pages there, not 2.
//
// EvictedWait: one wait of the kind that ends every idle period (a wake pending, so it returns at once: the
// gap ends before the call, the next one starts after it), three sides in every iteration, the order
// reversed every other one:
// - unhooked: the libutils.so fixture's slot holds libc's epoll_wait;
// - floor: the same plus the least any hook that notes a wake must do, in a shared object of its own
//   (bench/floor_hook.cc): a call into a function that starts a text page of its own and one store to a
//   data page of its own. The object's address region is then as cold as our library's after a wake (a
//   hook linked into the executable would share the region of the benchmark's own loop, which every
//   cycle touches anyway);
// - main_thread: the poll source installed, this thread the main thread;
// - copy_b: the same in libjankprobe_twin_b.so, a second copy of the twin built from the same sources and
//   loaded beside it (its own text, data and physical pages). What two identical copies differ by is the
//   run's resolution for a layout or code change: where a copy's pages lie moved one copy's figure by up
//   to ~0.4 us against the other's in one run, so a change needs several invocations to be judged.
// Medians per side over the iterations; *_added_ns is a side's median minus unhooked's;
// copy_b_minus_a_ns the median of the per-iteration differences between the two copies. timed_check_arms
// counts sampling check chains started inside the timed waits, by either copy (0: the warm-up look before
// the eviction started it, as a look long before does in an app). The label says whether the loader put
// the twin's hot text page and .data's page in one 2 MiB region (no difference was seen between the two).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bench/cold_caches.h"
#include "tests/fixtures/libutils/native_looper.h"

namespace jp {
namespace {

using CreateFn = jpfx_looper* (*)();
using PollFn = int (*)(jpfx_looper*, int);
using WakeFn = void (*)(jpfx_looper*);
using StartFn = int (*)(const char*, uintptr_t, char*, size_t);
using StopFn = void (*)();
using ArmsFn = uint64_t (*)();

// One copy of the twin library's entry points (bench/library_twin.cc).
struct TwinCopy {
  StartFn start = nullptr;
  StopFn stop = nullptr;
  ArmsFn arms = nullptr;
  bool Load(void* lib) {
    start = reinterpret_cast<StartFn>(dlsym(lib, "jpb_poll_start"));
    stop = reinterpret_cast<StopFn>(dlsym(lib, "jpb_poll_stop"));
    arms = reinterpret_cast<ArmsFn>(dlsym(lib, "jpb_poll_check_arms"));
    return start && stop && arms;
  }
};

struct Twin {
  bool ok = false;
  std::string why;
  jpfx_looper* looper = nullptr;
  PollFn poll = nullptr;
  WakeFn wake = nullptr;
  TwinCopy copy[2];                   // libjankprobe_twin.so, libjankprobe_twin_b.so
  void (*floor)(uint64_t) = nullptr;  // bench/floor_hook.cc

  bool Start(int c) {
    char buf[512] = {};
    if (copy[c].start("libutils.so", static_cast<uintptr_t>(pthread_self()), buf, sizeof buf) == 0) return true;
    why = std::string("jpb_poll_start: ") + buf;
    return false;
  }
};

Twin* Get() {
  static Twin* t = [] {
    auto* t = new Twin;
    void* utils = dlopen(JP_LIBUTILS_PATH, RTLD_NOW);
    void* twin = utils ? dlopen(JP_TWIN_PATH, RTLD_NOW) : nullptr;
    void* twin_b = twin ? dlopen(JP_TWIN_B_PATH, RTLD_NOW) : nullptr;
    void* floor = twin_b ? dlopen(JP_FLOOR_PATH, RTLD_NOW) : nullptr;
    if (!floor) {
      t->why = dlerror();
      return t;
    }
    auto create = reinterpret_cast<CreateFn>(dlsym(utils, "jpfx_looper_create"));
    t->poll = reinterpret_cast<PollFn>(dlsym(utils, "jpfx_looper_poll_once"));
    t->wake = reinterpret_cast<WakeFn>(dlsym(utils, "jpfx_looper_wake"));
    t->floor = reinterpret_cast<void (*)(uint64_t)>(dlsym(floor, "jp_floor_hook"));
    t->looper = create ? create() : nullptr;
    if (!t->looper || !t->poll || !t->wake || !t->floor || !t->copy[0].Load(twin) || !t->copy[1].Load(twin_b)) {
      t->why = "a fixture or twin entry point is missing";
      return t;
    }
    // The first start builds each copy's plugin side on this thread (the main thread); then out again.
    for (int c = 0; c < 2; ++c) {
      if (!t->Start(c)) return t;
      t->copy[c].stop();
    }
    t->ok = true;
    return t;
  }();
  return t;
}

// Whether the twin's first text page (.init, .plt, the hot group) and .data's page fall in one 2 MiB
// region of the address space (one page-table page, one walk's upper levels): 0x10000 and 0xb0000 in the
// file, so it depends on where the loader put it (64 KiB-aligned: one region in ~72 % of loads).
struct Placement {
  uintptr_t text = 0, data = 0;
};
int FindTwin(dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name == nullptr || strstr(info->dlpi_name, "libjankprobe_twin.so") == nullptr) return 0;
  auto* p = static_cast<Placement*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_flags & PF_X) p->text = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_flags & PF_W) p->data = info->dlpi_addr + ph.p_vaddr + ph.p_filesz - 1;  // .data's last byte
  }
  return 1;
}
std::string PlacementLabel() {
  Placement p;
  dl_iterate_phdr(FindTwin, &p);
  if (p.text == 0 || p.data == 0) return "twin placement unknown";
  const bool one = (p.text >> 21) == (p.data >> 21);
  return one ? "twin text+data: one 2 MiB region" : "twin text+data: two 2 MiB regions";
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void BM_EvictedWait(benchmark::State& state) {
  Twin* t = Get();
  if (!t->ok) return state.SkipWithError(("setup: " + t->why).c_str());
  static bench::ColdCaches* cold = new bench::ColdCaches;
  if (!cold->ok()) return state.SkipWithError(cold->why().c_str());
  enum { kUnhooked, kFloor, kMain, kMainB, kSides };
  std::vector<double> ns[kSides];
  int64_t n = 0;
  uint64_t timed_arms = 0;
  for (auto _ : state) {
    double all = 0;
    for (int k = 0; k < kSides; ++k) {
      const int side = (n % 2 == 0) ? k : kSides - 1 - k;  // 0 1 2, 2 1 0, ...: a drift cancels
      state.PauseTiming();
      TwinCopy* const copy = side >= kMain ? &t->copy[side - kMain] : nullptr;
      if (copy && !t->Start(side - kMain)) return state.SkipWithError(t->why.c_str());
      t->poll(t->looper, 0);  // the call site into the proxies' cache (as long before in an app); a gap runs
      t->wake(t->looper);     // the wait below returns at once
      const uint64_t arms = copy ? copy->arms() : 0;  // before the eviction: it reads our data
      cold->Evict();
      state.ResumeTiming();
      const auto t0 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(t->poll(t->looper, 1000));
      if (side == kFloor) t->floor(static_cast<uint64_t>(n));
      const auto t1 = std::chrono::steady_clock::now();
      const double d = std::chrono::duration<double, std::nano>(t1 - t0).count();
      state.PauseTiming();
      if (copy) {
        timed_arms += copy->arms() - arms;
        copy->stop();
      }
      state.ResumeTiming();
      ns[side].push_back(d);
      all += d;
    }
    ++n;
    state.SetIterationTime(all * 1e-9);
  }
  if (n == 0) return;
  const double off = Median(ns[kUnhooked]);
  state.counters["unhooked_ns"] = off;
  state.counters["floor_added_ns"] = Median(ns[kFloor]) - off;
  state.counters["main_thread_added_ns"] = Median(ns[kMain]) - off;
  state.counters["copy_b_added_ns"] = Median(ns[kMainB]) - off;
  std::vector<double> diff;
  for (size_t i = 0; i < ns[kMain].size() && i < ns[kMainB].size(); ++i) diff.push_back(ns[kMainB][i] - ns[kMain][i]);
  state.counters["copy_b_minus_a_ns"] = Median(diff);
  state.counters["timed_check_arms"] = static_cast<double>(timed_arms);
  std::string label = PlacementLabel();
  if (!cold->evicts_code()) label += "; " + cold->why();
  state.SetLabel(label);
}

// 200 iterations of four evictions (~30 ms each on the 2-vCPU guest): ~25 s per repetition.
BENCHMARK(BM_EvictedWait)->UseManualTime()->Iterations(200)->Repetitions(5);

}  // namespace
}  // namespace jp

BENCHMARK_MAIN();
