// The poll source's cost per main-thread gap, natively (no JVM noise): the libutils.so fixture's
// pollOnce(0) in a loop, i.e. one epoll_wait(0) through libutils.so's GOT per poll, which is one gap end +
// one gap start for the poll source. Side by side in one run (ns_per_gap: per poll):
// - PollOnce/unhooked: the slot holds libc's epoll_wait (the app without jankprobe);
// - PollOnce/other_thread: the poll source installed, this thread is not the looper's main thread, which
//   another thread is (it polled once, as an app's main thread has long before): what every other Looper
//   thread pays;
// - PollOnce/main_thread: this thread is the main thread: both edges timed, the gap pushed into the ring.
//   Its difference to "unhooked" is the added cost per message on the main thread. The label names the
//   clock the gaps were timed with (the process event clock: the CPU counter where validated).
// - PollWait/unhooked, PollWait/main_thread: a wait that may block (pollOnce(1000) after a wake, so it
//   returns at once with the eventfd ready and drains it): the main thread's path at the end of every idle
//   period (~120/s in the demo), where the gap ends before the call and the next starts after it, through
//   the proxies' out-of-line half. Its difference per wait is what each idle period adds.
// - ColdWake: waits that block 4 ms each with nothing to read, unhooked and on the main thread alternating
//   in blocks (ABBA), and per wait the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, the kernel's
//   account: user and kernel, cache and TLB misses included) from just before the call to just after it.
//   After a sleep the thread comes back cold (on a KVM guest here every line first touched cost ~140 ns and a new 2 MB
//   region ~1 us); the hot loops above never see that, and in situ it is most of what we cost (the wake's
//   first lines of ours, session 11). added_ns_per_wait is what each idle period's wake adds, cold: the
//   number the in-situ figure is made of, without the JVM's noise (though not without the host's: a 4 ms
//   wait itself cost 57-72 us of the thread's CPU time on the KVM guest of session 11).
// - DrainGaps: the watchdog's side, per gap: its looper.message record appended, the history updated.
// The plugin pieces are the real ones (timeline, watchdog, looper timing); only the JVM is absent.
//
// Instructions per gap (exact, unlike wall time on a shared host): `--polls=MODE` (unhooked, other,
// main) runs `--batches=N` batches of kBatch polls with the drain between them, no benchmark; under
// callgrind, counting only inside PollBatch (the drain excluded, as in the timed variants):
//   valgrind --tool=callgrind --toggle-collect='*PollBatch*' --callgrind-out-file=/tmp/cg.main
//       build/<dir>/bench/looper_poll_bench --polls=main --batches=200
//   callgrind_annotate /tmp/cg.main | head   (total Ir / (200 x 256) = instructions per poll)
// `--wait` makes the batches blocking waits (WaitBatch: count with --toggle-collect='*WaitBatch*'; the
// wake's write and the drain's read are in every mode alike). `--block-ms=N` makes them waits that block
// N ms each with nothing to read (BlockBatch, '*BlockBatch*'), as an app's main thread between vsyncs and
// touches: there the watchdog's sampling check periods (sample_after_ms) span many waits, and what the
// main thread does about the check chain shows (the calls of Watchdog::Arm from inside BlockBatch in
// callgrind's call counts; the run prints the watchdog's wakes and deadlines).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "bench/poll_world.h"
#include "hook/clock.h"
#include "hook/config.h"
#include "hook/event_clock.h"
#include "hook/monitor.h"
#include "hook/timeline.h"
#include "hook/watchdog.h"
#include "looper/dispatch_timing.h"
#include "tests/fixtures/libutils/native_looper.h"

namespace jp {
namespace {

using CreateFn = jpfx_looper* (*)();
using PollFn = int (*)(jpfx_looper*, int);
using WakeFn = void (*)(jpfx_looper*);

struct World {
  bool ok = false;
  std::string why;
  bench::PollWorld plugin;
  jpfx_looper* looper = nullptr;
  PollFn poll = nullptr;
  WakeFn wake = nullptr;
};

World* Get() {
  static World* w = [] {
    auto* w = new World;
    void* lib = dlopen(JP_LIBUTILS_PATH, RTLD_NOW);
    if (!lib) {
      w->why = dlerror();
      return w;
    }
    auto create = reinterpret_cast<CreateFn>(dlsym(lib, "jpfx_looper_create"));
    w->poll = reinterpret_cast<PollFn>(dlsym(lib, "jpfx_looper_poll_once"));
    w->wake = reinterpret_cast<WakeFn>(dlsym(lib, "jpfx_looper_wake"));
    w->looper = create ? create() : nullptr;
    if (!w->looper || !w->poll || !w->wake) {
      w->why = "the libutils.so fixture lacks its looper functions";
      return w;
    }
    w->ok = w->plugin.Start(&w->why);
    return w;
  }();
  return w;
}

constexpr int kBatch = 256;  // gaps per iteration (half the ring)

// One batch of polls, out of line so that callgrind can count exactly its instructions.
__attribute__((noinline)) void PollBatch(World* w) {
  for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(w->poll(w->looper, 0));
}

// One batch of waits that may block (timeout 1000 ms) and return at once: a wake is pending before each
// (the eventfd readable), as when a message is posted to an idle thread. One gap per wait on the main
// thread (from the return of one wait to the next call). Out of line for callgrind, as PollBatch.
__attribute__((noinline)) void WaitBatch(World* w) {
  for (int i = 0; i < kBatch; ++i) {
    w->wake(w->looper);
    benchmark::DoNotOptimize(w->poll(w->looper, 1000));
  }
}

// One batch of waits that block `ms` each (nothing to read), one short gap between them.
__attribute__((noinline)) void BlockBatch(World* w, int ms) {
  for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(w->poll(w->looper, ms));
}

// The looper's main thread of mode 1: another thread, which polls once after each start (so that the
// source knows it, as in an app, where the main thread waits in the Looper long before anything else) and
// otherwise waits.
struct OtherMain {
  std::mutex mu;
  std::condition_variable cv;
  int wanted = 0, done = 0;  // polls asked for / made
  pthread_t thread{};
};

bool StartMode(World* w, int mode, std::string* why) {
  if (mode == 0) return true;
  if (mode == 2) return looper::StartPollSource("libutils.so", static_cast<uintptr_t>(pthread_self()), w->plugin.ctx.main_tid, why);
  static OtherMain* other = [w] {
    auto* o = new OtherMain;
    std::thread t([o, w] {
      std::unique_lock<std::mutex> lock(o->mu);
      o->thread = pthread_self();
      o->cv.notify_all();
      for (;;) {
        o->cv.wait(lock, [o] { return o->wanted > o->done; });
        lock.unlock();
        w->poll(w->looper, 0);
        lock.lock();
        o->done = o->wanted;
        o->cv.notify_all();
      }
    });
    t.detach();
    std::unique_lock<std::mutex> lock(o->mu);
    o->cv.wait(lock, [o] { return o->thread != pthread_t{}; });
    return o;
  }();
  if (!looper::StartPollSource("libutils.so", static_cast<uintptr_t>(other->thread), 0, why)) return false;
  std::unique_lock<std::mutex> lock(other->mu);
  ++other->wanted;
  other->cv.notify_all();
  other->cv.wait(lock, [] { return other->done == other->wanted; });
  return true;
}

void PollOnce(benchmark::State& state, int mode, bool wait = false) {
  World* w = Get();
  if (!w->ok) return state.SkipWithError(("setup: " + w->why).c_str());
  std::string why;
  if (!StartMode(w, mode, &why)) return state.SkipWithError(("StartPollSource: " + why).c_str());
  // Batches of kBatch polls, then the watchdog's drain with the clock stopped (in the app it runs every
  // 200 ms on the watchdog thread, ~80 gaps at a time: without it the ring fills and the main thread
  // falls back to appending records itself). The same pause in every mode keeps them comparable.
  for (auto _ : state) {
    if (wait) {
      WaitBatch(w);
    } else {
      PollBatch(w);
    }
    state.PauseTiming();
    if (mode == 2) looper::DrainPollSource();
    state.ResumeTiming();
  }
  if (mode > 0) looper::StopPollSource();
  // The clock the gaps were timed with (hook/event_clock.h): "tsc"/"cntvct", or "clock_gettime".
  if (mode == 2) state.SetLabel(std::string("clock: ") + hook::ProcessEventClock().source());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kBatch);
  state.counters["ns_per_gap"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Cold wakes (see the top): 4 ms blocking waits timed on the thread's CPU clock, the poll source
// alternately out and in, in blocks of kColdBlock waits ordered out, in, in, out (ABBA: a linear drift of
// the host cancels; between blocks the hooks go in or out with the clock stopped). One iteration is one
// wait of each side (manual time: the two together). The drain after every kBatch waits of the hooked side,
// off the clock, as in the other modes.
constexpr int kColdBlock = 25;
constexpr int kBlockMs = 4;

double ThreadCpuNs() { return static_cast<double>(hook::ClockNs(CLOCK_THREAD_CPUTIME_ID)); }

void BM_ColdWake(benchmark::State& state) {
  World* w = Get();
  if (!w->ok) return state.SkipWithError(("setup: " + w->why).c_str());
  double ns[2] = {0, 0};  // [0] unhooked, [1] main thread, summed over the run
  int64_t waits[2] = {0, 0};
  int since_drain = 0;
  int64_t block = 0;
  std::string why;
  for (auto _ : state) {
    double both = 0;
    for (int k = 0; k < 2; ++k) {
      // Block b's side: ABBA over b % 4. At a block's start the hooks go in or out, off the clock.
      const int64_t b = block + k;
      const int side = (b % 4 == 1 || b % 4 == 2) ? 1 : 0;
      state.PauseTiming();
      if (side == 1 && !StartMode(w, 2, &why)) return state.SkipWithError(("StartPollSource: " + why).c_str());
      w->poll(w->looper, 0);  // the call site into the proxies' cache (as long before in an app), both sides alike
      state.ResumeTiming();
      double sum = 0;
      for (int i = 0; i < kColdBlock; ++i) {
        const double a = ThreadCpuNs();
        benchmark::DoNotOptimize(w->poll(w->looper, kBlockMs));
        sum += ThreadCpuNs() - a;
        if (side == 1 && ++since_drain == kBatch) {
          looper::DrainPollSource();
          since_drain = 0;
        }
      }
      state.PauseTiming();
      if (side == 1) looper::StopPollSource();
      state.ResumeTiming();
      ns[side] += sum;
      waits[side] += kColdBlock;
      both += sum;
    }
    block += 2;
    state.SetIterationTime(both * 1e-9);
  }
  if (waits[0] == 0 || waits[1] == 0) return;
  const double off = ns[0] / static_cast<double>(waits[0]), on = ns[1] / static_cast<double>(waits[1]);
  state.counters["unhooked_ns_per_wait"] = off;
  state.counters["main_thread_ns_per_wait"] = on;
  state.counters["added_ns_per_wait"] = on - off;
}

// The watchdog's side: draining kBatch finished gaps (their looper.message records appended to the
// timeline, the history window updated). Off the main thread in the app.
void BM_DrainGaps(benchmark::State& state) {
  World* w = Get();
  if (!w->ok) return state.SkipWithError(("setup: " + w->why).c_str());
  std::string why;
  if (!looper::StartPollSource("libutils.so", static_cast<uintptr_t>(pthread_self()), w->plugin.ctx.main_tid, &why)) {
    return state.SkipWithError(("StartPollSource: " + why).c_str());
  }
  for (auto _ : state) {
    state.PauseTiming();
    for (int i = 0; i < kBatch; ++i) w->poll(w->looper, 0);
    state.ResumeTiming();
    looper::DrainPollSource();
  }
  looper::StopPollSource();
  state.counters["ns_per_gap"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_PollOnce_Unhooked(benchmark::State& state) { PollOnce(state, 0); }
void BM_PollOnce_OtherThread(benchmark::State& state) { PollOnce(state, 1); }
void BM_PollOnce_MainThread(benchmark::State& state) { PollOnce(state, 2); }
void BM_PollWait_Unhooked(benchmark::State& state) { PollOnce(state, 0, true); }
void BM_PollWait_MainThread(benchmark::State& state) { PollOnce(state, 2, true); }

BENCHMARK(BM_PollOnce_Unhooked)->Repetitions(10);
BENCHMARK(BM_PollOnce_OtherThread)->Repetitions(10);
BENCHMARK(BM_PollOnce_MainThread)->Repetitions(10);
BENCHMARK(BM_PollWait_Unhooked)->Repetitions(10);
BENCHMARK(BM_PollWait_MainThread)->Repetitions(10);
BENCHMARK(BM_DrainGaps)->Repetitions(3);
// 40 iterations: 80 blocks of 25 waits of 4 ms, ~8 s per repetition.
BENCHMARK(BM_ColdWake)->UseManualTime()->Iterations(40)->Repetitions(5);

// --polls=MODE [--batches=N]: the instruction-counting run (see the top of the file).
int CountPolls(const std::string& mode_name, int batches, bool wait, int block_ms) {
  const int mode = mode_name == "unhooked" ? 0 : mode_name == "other" ? 1 : mode_name == "main" ? 2 : -1;
  if (mode < 0) {
    std::fprintf(stderr, "--polls: unhooked, other or main, not %s\n", mode_name.c_str());
    return 2;
  }
  World* w = Get();
  std::string why;
  if (!w->ok || !StartMode(w, mode, &why)) {
    std::fprintf(stderr, "setup: %s\n", (w->ok ? why : w->why).c_str());
    return 1;
  }
  const hook::Watchdog::Stats w0 = w->plugin.watchdog.stats();
  const uint64_t t0 = hook::MonotonicNs();
  for (int b = 0; b < batches; ++b) {
    if (block_ms > 0) {
      BlockBatch(w, block_ms);
    } else if (wait) {
      WaitBatch(w);
    } else {
      PollBatch(w);
    }
    if (mode == 2) looper::DrainPollSource();
  }
  const double secs = static_cast<double>(hook::MonotonicNs() - t0) / 1e9;
  const hook::Watchdog::Stats w1 = w->plugin.watchdog.stats();
  if (mode > 0) looper::StopPollSource();
  std::printf("%s: %d %s in %.2f s; watchdog: %llu wakes, %llu deadlines fired\n", mode_name.c_str(),
              batches * kBatch, block_ms > 0 ? "blocking waits" : wait ? "waits" : "polls", secs,
              static_cast<unsigned long long>(w1.loop_iterations - w0.loop_iterations),
              static_cast<unsigned long long>(w1.deadlines_fired - w0.deadlines_fired));
  return 0;
}

}  // namespace
}  // namespace jp

int main(int argc, char** argv) {
  std::string polls;
  int batches = 200;
  bool wait = false;
  int block_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--wait") wait = true;
    if (a.rfind("--block-ms=", 0) == 0) block_ms = std::atoi(a.c_str() + 11);
    if (a.rfind("--polls=", 0) == 0) polls = a.substr(8);
    if (a.rfind("--batches=", 0) == 0) batches = std::atoi(a.c_str() + 10);
  }
  if (!polls.empty()) return jp::CountPolls(polls, batches > 0 ? batches : 1, wait, block_ms);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
