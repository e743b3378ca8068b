// Timeline hot-path cost (append with 1 and 2 producers, anonymous and file-backed), reader cost (snapshot
// of a full ring, and an export-sized read that also resolves every name), resident memory of the default
// configuration, and the watchdog's hot-path Arm/Disarm.
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "hook/clock.h"
#include "hook/timeline.h"
#include "hook/watchdog.h"

namespace jp::hook {
namespace {

std::unique_ptr<Timeline> MakeDefault() {
  std::string error;
  auto t = Timeline::Create(Timeline::Options(), &error);
  if (!t) fprintf(stderr, "timeline: %s\n", error.c_str());
  return t;
}

Event SampleEvent(uint16_t name, uint32_t tid) {
  Event e;
  e.ts_ns = 1000;
  e.dur_ns = 16000000;
  e.tid = tid;
  e.kind = EventKind::kInputMotion;
  e.name = name;
  e.args[0] = EventArg::Int(1, 42);
  e.args[1] = EventArg::Double(2, 0.5);
  return e;
}

// One timeline shared by the threads of a multi-threaded run (created once, never freed).
Timeline* Shared() {
  static Timeline* t = MakeDefault().release();
  return t;
}

void BM_Append(benchmark::State& state) {
  Timeline* t = Shared();
  Event e = SampleEvent(1, static_cast<uint32_t>(state.thread_index() + 1));
  for (auto _ : state) {
    e.ts_ns++;
    benchmark::DoNotOptimize(t->Append(e));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Append)->Threads(1)->Threads(2)->UseRealTime();

// Append including the timestamp a proxy would take (clock_gettime through the vDSO).
void BM_AppendWithClock(benchmark::State& state) {
  Timeline* t = Shared();
  Event e = SampleEvent(1, 1);
  for (auto _ : state) {
    e.ts_ns = MonotonicNs();
    benchmark::DoNotOptimize(t->Append(e));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AppendWithClock);

void BM_AppendFileBacked(benchmark::State& state) {
  std::string path = "/tmp/jp_timeline_bench_" + std::to_string(getpid());
  std::string error;
  auto t = Timeline::Open(path, Timeline::Options(), &error);
  if (!t) {
    state.SkipWithError(error.c_str());
    return;
  }
  Event e = SampleEvent(1, 1);
  for (auto _ : state) {
    e.ts_ns++;
    benchmark::DoNotOptimize(t->Append(e));
  }
  state.SetItemsProcessed(state.iterations());
  t.reset();
  unlink(path.c_str());
}
BENCHMARK(BM_AppendFileBacked);

std::unique_ptr<Timeline> FullDefaultRing() {
  auto t = MakeDefault();
  uint16_t names[64];
  for (int i = 0; i < 64; ++i) names[i] = t->Intern("com.example.feature.Handler$" + std::to_string(i));
  for (uint32_t i = 0; i < 2 * t->capacity(); ++i) t->Append(SampleEvent(names[i % 64], 1));
  return t;
}

void BM_SnapshotFullRing(benchmark::State& state) {
  auto t = FullDefaultRing();
  for (auto _ : state) {
    TimelineRead r = t->Snapshot();
    benchmark::DoNotOptimize(r.events.data());
  }
  state.SetItemsProcessed(state.iterations() * t->capacity());
}
BENCHMARK(BM_SnapshotFullRing)->Unit(benchmark::kMicrosecond);

// What an exporter does per export: snapshot, then resolve every record's name and argument keys.
void BM_ExportSizedRead(benchmark::State& state) {
  auto t = FullDefaultRing();
  for (auto _ : state) {
    TimelineRead r = t->Snapshot();
    size_t bytes = 0;
    for (const Event& e : r.events) {
      bytes += t->strings().Lookup(e.name).size() + strlen(EventKindName(e.kind));
      for (const EventArg& a : e.args) bytes += t->strings().Lookup(a.key).size();
    }
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * t->capacity());
}
BENCHMARK(BM_ExportSizedRead)->Unit(benchmark::kMicrosecond);

// Resident bytes of the default timeline's region (header, string table, ring) once the ring wrapped and
// 64 names were interned, counted page by page with mincore.
void BM_ResidentMemoryDefault(benchmark::State& state) {
  auto t = FullDefaultRing();
  const long page = sysconf(_SC_PAGESIZE);
  const size_t pages = (t->region_size() + page - 1) / page;
  std::vector<unsigned char> vec(pages);
  size_t resident = 0;
  for (auto _ : state) {
    mincore(const_cast<void*>(t->region()), t->region_size(), vec.data());
    resident = 0;
    for (unsigned char v : vec) resident += (v & 1) ? page : 0;
    benchmark::DoNotOptimize(resident);
  }
  state.counters["resident_KiB"] = static_cast<double>(resident) / 1024;
  state.counters["region_KiB"] = static_cast<double>(t->region_size()) / 1024;
  state.counters["records"] = t->capacity();
}
BENCHMARK(BM_ResidentMemoryDefault)->Iterations(1);

void IgnoreFire(const DeadlineFired&, void*) {}

// The hot-path pair a proxy does per event: arm a deadline when the event arrives, disarm when it ends
// (deadline later than the watchdog's planned wake-up, the common case: no syscall).
void BM_WatchdogArmDisarm(benchmark::State& state) {
  Watchdog w;
  w.Start(nullptr);
  w.Arm(~0ull, MonotonicNs() + 3600 * kNsPerSec, IgnoreFire, nullptr);  // the thread sleeps towards this
  usleep(10000);
  const uint64_t deadline = MonotonicNs() + 7200 * kNsPerSec;
  uint64_t id = 0;
  for (auto _ : state) {
    w.Arm(++id, deadline, IgnoreFire, nullptr);
    w.Disarm(id);
  }
  state.counters["wake_syscalls"] = static_cast<double>(w.stats().wake_syscalls);
  w.Stop();
}
BENCHMARK(BM_WatchdogArmDisarm);

void BM_InternExisting(benchmark::State& state) {
  auto t = MakeDefault();
  t->Intern("com.example.feature.Handler$Prefetch");
  for (auto _ : state) benchmark::DoNotOptimize(t->Intern("com.example.feature.Handler$Prefetch"));
}
BENCHMARK(BM_InternExisting);

}  // namespace
}  // namespace jp::hook

BENCHMARK_MAIN();
