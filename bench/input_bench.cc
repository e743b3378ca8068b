// Cost the input monitor adds to an event's round trip on an InputChannel: the dispatcher sends a MOTION,
// the app reads it (recvfrom), sends FINISHED (sendto), the dispatcher reads that. The app's two calls are
// made by the host libinput.so and go through the proxies when the monitor is on; the dispatcher's two
// are plain libc calls, as system_server's are. Same run, same socket, hooks off then on.
#include <benchmark/benchmark.h>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hook/clock.h"
#include "hook/monitor.h"
#include "hook/event_clock.h"
#include "input/input_monitor.h"
#include "input/input_proxies.h"
#include "input/input_tracker.h"
#include "jankprobe/jankprobe.h"
#include "tests/fixtures/libinput/input_channel.h"

namespace {

constexpr int kApi = 33;

// One Android 13 MOTION (1 pointer) and its FINISHED, as the wire carries them; the benchmarks write the seq
// into both (header word at 4) before each use.
struct EventPackets {
  std::vector<uint8_t> motion;
  uint8_t finished[24] = {};
};

EventPackets MakeEventPackets() {
  EventPackets p;
  p.motion.assign(jpfx_motion_size(kApi, 1), 0);
  const uint32_t type_motion = 1, type_finished = 2, pointers = 1;
  std::memcpy(p.motion.data(), &type_motion, 4);
  std::memcpy(p.motion.data() + 12, &pointers, 4);
  const int64_t t = static_cast<int64_t>(jp::hook::MonotonicNs());
  std::memcpy(p.motion.data() + 16, &t, 8);
  std::memcpy(p.finished, &type_finished, 4);
  p.finished[8] = 1;
  std::memcpy(p.finished + 16, &t, 8);
  return p;
}

// Every benchmark here runs the input monitor alone (the others need a JVM), its deadlines far away so
// that no report or stack capture runs; kInputOff is the same plugin with the input monitor switched off.
constexpr const char* kInputOn = "{\"input\": {\"lag_ms\": 60000, \"anr_ms\": 600000, \"android_api\": 33},"
                                 " \"idle\": {\"enabled\": false}, \"barrier\": {\"enabled\": false},"
                                 " \"looper\": {\"enabled\": false}}";
constexpr const char* kInputOff = "{\"input\": {\"enabled\": false}, \"idle\": {\"enabled\": false},"
                                  " \"barrier\": {\"enabled\": false}, \"looper\": {\"enabled\": false}}";

void RegisterInputOnly() {
  jp::hook::RegisterMonitorFactory(jp::Monitor::kInput, jp::input::MakeInputMonitor);
  for (jp::Monitor m : {jp::Monitor::kIdle, jp::Monitor::kBarrier, jp::Monitor::kLooper}) {
    jp::hook::RegisterMonitorFactory(m, nullptr);
  }
}

// User-space cycles and instructions of this thread (perf_event_open, kernel excluded), read around the
// paired benchmark's batches: the monitor's work is all in user space, and its in-situ cycles (the
// syscalls' cache damage included) vary far less with the host's load than the wall time of a round trip
// dominated by four syscalls; instructions are exact. Not available (no PMU in the VM, perf_event_paranoid):
// ok() is false and the counters are left out. JP_BENCH_PMU=l1i_misses|l1d_misses|branch_misses|
// frontend_stalls counts that instead of instructions (counter added_u<name>): how the L1i misses of the
// hot path were found (input/hot_path.h).
class UserCounters {
 public:
  UserCounters() {
    const char* env = getenv("JP_BENCH_PMU");
    const std::string second = env ? env : "insns";
    constexpr uint64_t kReadMiss = (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
    cycles_fd_ = Open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1);
    if (cycles_fd_ < 0) return;
    if (second == "l1i_misses") {
      second_fd_ = Open(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1I | kReadMiss, cycles_fd_);
    } else if (second == "l1d_misses") {
      second_fd_ = Open(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | kReadMiss, cycles_fd_);
    } else if (second == "branch_misses") {
      second_fd_ = Open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, cycles_fd_);
    } else if (second == "frontend_stalls") {
      second_fd_ = Open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, cycles_fd_);
    } else {
      second_fd_ = Open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, cycles_fd_);
    }
    second_name_ = second_fd_ >= 0 && env ? second : "insns";
    if (ok()) ioctl(cycles_fd_, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  }
  ~UserCounters() {
    if (second_fd_ >= 0) close(second_fd_);
    if (cycles_fd_ >= 0) close(cycles_fd_);
  }
  UserCounters(const UserCounters&) = delete;
  UserCounters& operator=(const UserCounters&) = delete;
  bool ok() const { return cycles_fd_ >= 0 && second_fd_ >= 0; }
  const std::string& second_name() const { return second_name_; }
  // {cycles, second event} so far; zeros when !ok().
  std::pair<uint64_t, uint64_t> Read() const {
    struct {
      uint64_t nr, cycles, second;
    } v{};
    if (!ok() || read(cycles_fd_, &v, sizeof v) != static_cast<ssize_t>(sizeof v) || v.nr != 2) return {0, 0};
    return {v.cycles, v.second};
  }

 private:
  static int Open(uint32_t type, uint64_t config, int group) {
    perf_event_attr a{};
    a.type = type;
    a.size = sizeof a;
    a.config = config;
    a.disabled = group < 0;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.read_format = PERF_FORMAT_GROUP;
    return static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, group, 0));
  }
  int cycles_fd_ = -1;
  int second_fd_ = -1;
  std::string second_name_;
};

// The watchdog's drain of the finished ring between timed runs. By default on the caller's thread: the
// ring's slots then stay in its cache, as the shared timeline's lines did for the main thread's own
// appends before (the before/after comparison treats both alike). JP_BENCH_DRAIN=thread drains on a
// thread of its own, as in an app; Drain() hands it one drain and waits. Measured that way the figure is
// bimodal on this 2-vCPU VM: +139 user cycles per round trip (inline: +131..139) when the scheduler keeps
// the two threads on their cores, +690..810 when a handoff moves the benchmark thread (the cache refill
// after every 50 events, an artefact of draining 20000 times more often than an app does: every 150 ms).
class DrainThread {
 public:
  DrainThread() : inline_(!getenv("JP_BENCH_DRAIN") || std::string(getenv("JP_BENCH_DRAIN")) != "thread") {
    if (!inline_) thread_ = std::thread([this] { Loop(); });
  }
  ~DrainThread() {
    if (inline_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  DrainThread(const DrainThread&) = delete;
  DrainThread& operator=(const DrainThread&) = delete;
  void Drain() {
    if (inline_) {
      jp::input::InputTracker::Get().DrainFinished();
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    ++requested_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return done_ == requested_; });
  }
  const char* mode() const { return inline_ ? "inline" : "thread"; }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || done_ != requested_; });
      if (stop_) return;
      lock.unlock();
      jp::input::InputTracker::Get().DrainFinished();
      lock.lock();
      done_ = requested_;
      cv_.notify_all();
    }
  }
  const bool inline_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t requested_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// One event's round trip with sequence number seq. The dispatcher's side is system_server's on a phone:
// plain libc calls from here, not through the app's libinput.so, so only the app's read and FINISHED go
// through the proxies.
inline void OneRoundTrip(EventPackets& p, uint32_t seq, int app, int disp, std::vector<uint8_t>& in) {
  std::memcpy(p.motion.data() + 4, &seq, 4);
  std::memcpy(p.finished + 4, &seq, 4);
  benchmark::DoNotOptimize(::send(disp, p.motion.data(), p.motion.size(), MSG_DONTWAIT | MSG_NOSIGNAL));
  benchmark::DoNotOptimize(jpfx_recv_raw(JPFX_IO_OLD_BIONIC, app, in.data(), in.size()));
  jpfx_send_raw(JPFX_IO_OLD_BIONIC, app, p.finished, sizeof p.finished);
  benchmark::DoNotOptimize(::recv(disp, in.data(), in.size(), MSG_DONTWAIT));
}

// range(0): 0 no hooks; 1 input monitor on; 2 proxies installed but the tracker off (what the PLT
// detour alone costs).
void RoundTrip(benchmark::State& state) {
  const bool hooked = state.range(0) != 0;
  const bool tracker_off = state.range(0) == 2;
  RegisterInputOnly();
  if (hooked && jankprobe_start(kInputOn) != JANKPROBE_OK) {
    state.SkipWithError(jankprobe_last_error());
    return;
  }
  if (hooked) state.SetLabel("fence: " + jp::input::InputTracker::Get().FenceMode());
  if (tracker_off) jp::input::InputTracker::Get().Disable();  // jankprobe_stop disables it again: harmless
  jpfx_channel* ch = jpfx_channel_open(kApi, JPFX_IO_OLD_BIONIC);
  const int app = jpfx_app_fd(ch), disp = jpfx_dispatcher_fd(ch);
  EventPackets p = MakeEventPackets();
  std::vector<uint8_t> in(jpfx_message_size(kApi));
  uint32_t seq = 0;
  const jp::hook::PluginContext* ctx = hooked ? jp::hook::CurrentPluginContext() : nullptr;
  const uint64_t wakes_before = ctx ? ctx->watchdog->stats().wake_syscalls : 0;
  for (auto _ : state) OneRoundTrip(p, ++seq, app, disp, in);
  state.counters["hooked"] = hooked;
  // Futex wakes of the watchdog per event: a syscall on the app's thread, the cost to watch for.
  if (ctx && !tracker_off) {
    state.counters["wakes_per_event"] = benchmark::Counter(
        static_cast<double>(ctx->watchdog->stats().wake_syscalls - wakes_before) / static_cast<double>(state.iterations()));
  }
  jpfx_channel_close(ch);
  if (hooked) jankprobe_stop();
}
BENCHMARK(RoundTrip)->Arg(0)->Arg(1)->Arg(2)->Arg(0)->Arg(1)->Arg(2);

// The figure of record for the target, robust to this loop's noise: the difference of two medians of
// RoundTrip drifts by tens of ns between runs on a shared VM. Here one process alternates batches of
// round trips with the input monitor off and on (the remote flag: jankprobe_configure, outside the timed
// batches), in the order on, off, off, on, and takes the difference of each group's batches: a slow
// drift of the host cancels within a group, and the median over many groups ignores the groups a
// preemption hit. Counter added_ns: that median per event round trip; q1/q3 its quartiles.
void RoundTripPaired(benchmark::State& state) {
  constexpr int kBatch = 1000, kGroups = 150;
  RegisterInputOnly();
  if (jankprobe_start(kInputOn) != JANKPROBE_OK) return state.SkipWithError(jankprobe_last_error());
  jpfx_channel* ch = jpfx_channel_open(kApi, JPFX_IO_OLD_BIONIC);
  const int app = jpfx_app_fd(ch), disp = jpfx_dispatcher_fd(ch);
  EventPackets p = MakeEventPackets();
  std::vector<uint8_t> in(jpfx_message_size(kApi));
  uint32_t seq = 0;
  UserCounters counters;
  struct Sample {
    double ns, cycles, insns;
  };
  // A batch is timed in runs of kDrainEvery round trips with the watchdog's drain of the finished ring
  // between them (see DrainThread), clock and counters stopped: in an app the
  // watchdog appends the records within a drain period (~16 events at the demo's 109 touches/s and
  // lag_ms 150); a batch of 1000 events in a millisecond would otherwise overflow the ring and time the
  // main thread's fallback append. The drain's own cost (the watchdog's) is DrainFinished below. Off,
  // the ring is empty and the drain does nothing.
  constexpr int kDrainEvery = 50;
  static_assert(kBatch % kDrainEvery == 0, "whole runs");
  DrainThread drainer;
  auto batch = [&] {
    uint64_t ns = 0, cycles = 0, second = 0;
    for (int run = 0; run < kBatch / kDrainEvery; ++run) {
      const auto c0 = counters.Read();
      const uint64_t t0 = jp::hook::MonotonicNs();
      for (int i = 0; i < kDrainEvery; ++i) OneRoundTrip(p, ++seq, app, disp, in);
      const uint64_t t1 = jp::hook::MonotonicNs();
      const auto c1 = counters.Read();
      ns += t1 - t0;
      cycles += c1.first - c0.first;
      second += c1.second - c0.second;
      drainer.Drain();
    }
    return Sample{static_cast<double>(ns) / kBatch, static_cast<double>(cycles) / kBatch,
                  static_cast<double>(second) / kBatch};
  };
  bool on = true, failed = false;
  auto set = [&](bool want) {
    if (want != on && jankprobe_configure(want ? kInputOn : kInputOff) != JANKPROBE_OK) failed = true;
    on = want;
  };
  std::vector<double> diffs, cycle_diffs, second_diffs;
  double on_sum = 0, off_sum = 0;
  for (auto _ : state) {
    diffs.clear();
    cycle_diffs.clear();
    second_diffs.clear();
    on_sum = off_sum = 0;
    batch();  // warm-up with the monitor on
    for (int g = 0; g < kGroups && !failed; ++g) {
      double d = 0, dc = 0, di = 0;
      for (const bool want : {true, false, false, true}) {
        set(want);
        const Sample s = batch();
        const double sign = want ? 0.5 : -0.5;
        d += sign * s.ns;
        dc += sign * s.cycles;
        di += sign * s.insns;
        (want ? on_sum : off_sum) += s.ns / 2;
      }
      diffs.push_back(d);
      cycle_diffs.push_back(dc);
      second_diffs.push_back(di);
    }
  }
  jpfx_channel_close(ch);
  jankprobe_stop();
  if (failed || diffs.empty()) return state.SkipWithError("jankprobe_configure failed");
  state.SetLabel(std::string("drain: ") + drainer.mode());
  auto q = [](std::vector<double>& v, double f) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(f * static_cast<double>(v.size() - 1))];
  };
  state.counters["added_ns"] = q(diffs, 0.5);
  state.counters["added_q1"] = q(diffs, 0.25);
  state.counters["added_q3"] = q(diffs, 0.75);
  state.counters["off_ns"] = off_sum / static_cast<double>(diffs.size());
  state.counters["on_ns"] = on_sum / static_cast<double>(diffs.size());
  // The same median for user-space cycles and instructions per round trip (the app's side and the
  // dispatcher's together; the dispatcher's are the same on and off).
  if (counters.ok()) {
    state.counters["added_ucycles"] = q(cycle_diffs, 0.5);
    state.counters["added_u" + counters.second_name()] = q(second_diffs, 0.5);
  } else {
    state.SetLabel(std::string("drain: ") + drainer.mode() + "; no user-space PMU counters here");
  }
}
BENCHMARK(RoundTripPaired)->Iterations(1)->Unit(benchmark::kMillisecond);

// A proxy called from two call sites of one module (libinput.so's Send() inlined into the publisher and
// the consumer's finish, say): each call site has its own previous-target entry (plt/prev_cache.h), so
// the second one must not ask the engine on every call. The fixture's libinput.so sends from one place,
// so the second call site is here: SendFinishedElsewhere calls the installed sendto proxy itself (its
// return address is outside libinput.so, where the engine's answer is the same libc sendto). Monitor on
// in both variants, round trips as in RoundTrip (OLD_BIONIC: the FINISHED through sendto):
// range(0) 0: every FINISHED from libinput.so (one call site); 1: alternately from libinput.so and from
// SendFinishedElsewhere. Counter ns_per_event; twice the difference is what the second call site adds
// per FINISHED it sends (every other one). range(1): events in flight at once (1; 2: two published and
// read, then both finished in order, as the demo's frames do with two MOVEs). Exact instructions:
// `--sites=1|2 [--events=N] [--in-flight=K]` runs N round trips with drains (no benchmark); count with
//   valgrind --tool=callgrind --toggle-collect='*TwoSitesBatch*' build/<dir>/bench/input_bench --sites=2
using SendtoFn = ssize_t (*)(int, const void*, size_t, int, const struct sockaddr*, socklen_t);

// Kept out of line and not a tail call: its call of the proxy is a call site of its own.
__attribute__((noinline)) long SendFinishedElsewhere(SendtoFn proxy, int fd, const void* buf, size_t len) {
  const long n = proxy(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, nullptr, 0);
  benchmark::DoNotOptimize(n);
  return n;
}

// kTwoSitesRun round trips with seqs from *seq on, in_flight at a time (published and read, then finished
// in order); every other FINISHED from the second call site when `second` is set.
constexpr int kTwoSitesRun = 50;
__attribute__((noinline)) void TwoSitesBatch(EventPackets& p, uint32_t* seq, int app, int disp, std::vector<uint8_t>& in,
                                             SendtoFn second, int in_flight) {
  for (int i = 0; i < kTwoSitesRun; i += in_flight) {
    const int k = std::min(in_flight, kTwoSitesRun - i);
    const uint32_t first = *seq + 1;
    for (int j = 0; j < k; ++j) {
      const uint32_t s = ++*seq;
      std::memcpy(p.motion.data() + 4, &s, 4);
      benchmark::DoNotOptimize(::send(disp, p.motion.data(), p.motion.size(), MSG_DONTWAIT | MSG_NOSIGNAL));
    }
    for (int j = 0; j < k; ++j) {
      benchmark::DoNotOptimize(jpfx_recv_raw(JPFX_IO_OLD_BIONIC, app, in.data(), in.size()));
    }
    for (int j = 0; j < k; ++j) {
      const uint32_t s = first + static_cast<uint32_t>(j);
      std::memcpy(p.finished + 4, &s, 4);
      if (second != nullptr && (s & 1) != 0) {
        SendFinishedElsewhere(second, app, p.finished, sizeof p.finished);
      } else {
        jpfx_send_raw(JPFX_IO_OLD_BIONIC, app, p.finished, sizeof p.finished);
      }
    }
    for (int j = 0; j < k; ++j) benchmark::DoNotOptimize(::recv(disp, in.data(), in.size(), MSG_DONTWAIT));
  }
}

// The world of the two-site runs: the monitor on, a channel, the installed sendto proxy (null: setup
// failed, *why says why).
struct TwoSites {
  jpfx_channel* ch = nullptr;
  int app = -1, disp = -1;
  EventPackets p = MakeEventPackets();
  std::vector<uint8_t> in;
  SendtoFn proxy = nullptr;
  uint32_t seq = 0;
  uint64_t finished_before = 0;

  bool Start(std::string* why) {
    RegisterInputOnly();
    if (jankprobe_start(kInputOn) != JANKPROBE_OK) {
      *why = jankprobe_last_error();
      return false;
    }
    ch = jpfx_channel_open(kApi, JPFX_IO_OLD_BIONIC);
    if (ch == nullptr) {
      *why = "jpfx_channel_open failed";
      return false;
    }
    app = jpfx_app_fd(ch);
    disp = jpfx_dispatcher_fd(ch);
    in.assign(jpfx_message_size(kApi), 0);
    const jp::input::ProxySpec& sendto_spec = jp::input::Proxies()[1];
    if (__atomic_load_n(sendto_spec.handle, __ATOMIC_ACQUIRE) == nullptr) {
      *why = "the sendto proxy is not installed";
      return false;
    }
    proxy = reinterpret_cast<SendtoFn>(sendto_spec.proxy);
    finished_before = jp::input::InputTracker::Get().counters().events_finished;
    return true;
  }
  // Every event finished (from either call site): the proxy's second call site reached the tracker.
  bool AllFinished() const {
    return jp::input::InputTracker::Get().counters().events_finished - finished_before == seq;
  }
  void Stop() {
    if (ch) jpfx_channel_close(ch);
    jankprobe_stop();
  }
};

void RoundTripTwoSites(benchmark::State& state) {
  const bool two = state.range(0) != 0;
  const int in_flight = static_cast<int>(state.range(1));
  TwoSites w;
  std::string why;
  if (!w.Start(&why)) {
    w.Stop();
    return state.SkipWithError(why.c_str());
  }
  for (auto _ : state) {
    TwoSitesBatch(w.p, &w.seq, w.app, w.disp, w.in, two ? w.proxy : nullptr, in_flight);
    state.PauseTiming();
    jp::input::InputTracker::Get().DrainFinished();  // the watchdog's work in an app, as in RoundTripPaired
    state.ResumeTiming();
  }
  const bool all = w.AllFinished();
  w.Stop();
  if (!all) return state.SkipWithError("not every event was finished");
  state.SetLabel(std::string(two ? "two call sites" : "one call site") + (in_flight > 1 ? ", 2 in flight" : ""));
  state.counters["ns_per_event"] = benchmark::Counter(static_cast<double>(state.iterations()) * kTwoSitesRun,
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(RoundTripTwoSites)->Args({0, 1})->Args({1, 1})->Args({0, 2})->Repetitions(5);

// --sites=1|2 [--events=N] [--in-flight=K]: the instruction-counting run of RoundTripTwoSites (see above).
int CountTwoSites(int sites, int events, int in_flight) {
  TwoSites w;
  std::string why;
  if (sites < 1 || sites > 2 || in_flight < 1 || in_flight > 8 || !w.Start(&why)) {
    std::fprintf(stderr, "--sites=1|2 --in-flight=1..8: %s\n", why.empty() ? "out of range" : why.c_str());
    w.Stop();
    return 1;
  }
  for (int done = 0; done < events; done += kTwoSitesRun) {
    TwoSitesBatch(w.p, &w.seq, w.app, w.disp, w.in, sites == 2 ? w.proxy : nullptr, in_flight);
    jp::input::InputTracker::Get().DrainFinished();
  }
  const bool all = w.AllFinished();
  const uint32_t n = w.seq;
  w.Stop();
  const jp::input::InputTracker::Counters c = jp::input::InputTracker::Get().counters();
  std::printf("sites %d, %d in flight: %u round trips, %s; owner's general path: %llu reads, %llu sends\n", sites,
              in_flight, n, all ? "all finished" : "NOT all finished",
              static_cast<unsigned long long>(c.owner_general_reads),
              static_cast<unsigned long long>(c.owner_general_sends));
  return all ? 0 : 1;
}

// The monitor's own work per event without the sockets: what the two proxies hand to the tracker after
// the original call returned (decode, clock, pending slot, the finished ring's push). The round trip above
// is the figure of record; this one has no syscall noise around it, so it shows changes of a few ns. One
// iteration is kRun events; the drain of the finished ring between iterations (the watchdog's work in an
// app) is outside the clock and the counters. Counters: ns_per_event, ucycles / uinsns per event.
void TrackerOnly(benchmark::State& state) {
  constexpr int kRun = 50;
  RegisterInputOnly();
  if (jankprobe_start(kInputOn) != JANKPROBE_OK) {
    state.SkipWithError(jankprobe_last_error());
    return;
  }
  EventPackets p = MakeEventPackets();
  std::vector<uint8_t>& motion = p.motion;
  uint8_t* finished = p.finished;
  const size_t capacity = jpfx_message_size(kApi);
  jp::input::InputTracker& tracker = jp::input::InputTracker::Get();
  const int fd = 1000;  // never read: the tracker only keys on it
  uint32_t seq = 0;
  const uint64_t finished_before = tracker.counters().events_finished;
  UserCounters counters;
  uint64_t cycles = 0, second = 0, ns = 0;
  for (auto _ : state) {
    const auto c0 = counters.Read();
    const uint64_t t0 = jp::hook::MonotonicNs();
    for (int i = 0; i < kRun; ++i) {
      ++seq;
      std::memcpy(motion.data() + 4, &seq, 4);
      std::memcpy(finished + 4, &seq, 4);
      tracker.OnReceived(fd, motion.data(), static_cast<ssize_t>(motion.size()), capacity);
      tracker.OnSent(fd, finished, sizeof p.finished);
    }
    const uint64_t t1 = jp::hook::MonotonicNs();
    const auto c1 = counters.Read();
    ns += t1 - t0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    cycles += c1.first - c0.first;
    second += c1.second - c0.second;
    tracker.DrainFinished();
  }
  const double events = static_cast<double>(state.iterations()) * kRun;
  state.counters["ns_per_event"] = static_cast<double>(ns) / events;
  if (counters.ok()) {
    state.counters["ucycles"] = static_cast<double>(cycles) / events;
    state.counters["u" + counters.second_name()] = static_cast<double>(second) / events;
  }
  const jp::input::InputTracker::Counters c = tracker.counters();
  if (c.events_finished - finished_before != static_cast<uint64_t>(events)) {
    state.SkipWithError("not every event was matched and finished");
  }
  state.counters["ring_full"] = static_cast<double>(c.records_ring_full);
  jankprobe_stop();
}
BENCHMARK(TrackerOnly)->UseManualTime();

// The watchdog's side of a finished event, off the app's thread: building its record and appending it to
// the timeline, per record, in drains of kRun records (the ring filled by TrackerOnly's loop, outside the
// clock).
void DrainFinished(benchmark::State& state) {
  constexpr int kRun = 50;
  RegisterInputOnly();
  if (jankprobe_start(kInputOn) != JANKPROBE_OK) return state.SkipWithError(jankprobe_last_error());
  EventPackets p = MakeEventPackets();
  const size_t capacity = jpfx_message_size(kApi);
  jp::input::InputTracker& tracker = jp::input::InputTracker::Get();
  uint32_t seq = 0;
  const uint64_t drained_before = tracker.counters().records_drained;
  uint64_t ns = 0;
  for (auto _ : state) {
    for (int i = 0; i < kRun; ++i) {
      ++seq;
      std::memcpy(p.motion.data() + 4, &seq, 4);
      std::memcpy(p.finished + 4, &seq, 4);
      tracker.OnReceived(1000, p.motion.data(), static_cast<ssize_t>(p.motion.size()), capacity);
      tracker.OnSent(1000, p.finished, sizeof p.finished);
    }
    const uint64_t t0 = jp::hook::MonotonicNs();
    tracker.DrainFinished();
    const uint64_t t1 = jp::hook::MonotonicNs();
    ns += t1 - t0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
  }
  // The watchdog's own drain deadline may have taken some of them: every record is counted either way.
  const uint64_t drained = tracker.counters().records_drained - drained_before;
  if (drained != static_cast<uint64_t>(state.iterations()) * kRun) state.SkipWithError("records went missing");
  state.counters["ns_per_record"] = static_cast<double>(ns) / (static_cast<double>(state.iterations()) * kRun);
  jankprobe_stop();
}
BENCHMARK(DrainFinished)->UseManualTime();

// The clock the proxies read twice per event: on a VM without a fast vDSO clock it dominates.
void MonotonicClock(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(jp::hook::MonotonicNs());
}
BENCHMARK(MonotonicClock);

// What the proxies read instead (hook/event_clock.h): the CPU counter scaled to CLOCK_MONOTONIC ns, or
// clock_gettime where the counter is not validated (the label says which).
void EventClockNow(benchmark::State& state) {
  jp::hook::EventClock clock;
  clock.Init();
  state.SetLabel(clock.source());
  for (auto _ : state) benchmark::DoNotOptimize(clock.NowNs());
}
BENCHMARK(EventClockNow);

// An app's process always has more than one thread (RenderThread, binder threads, the runtime's
// daemons). The kernel takes a cheaper path for fd lookups (fdget without a file refcount) while a
// process has a single thread; jankprobe_start adds the watchdog thread, so without this the hooked
// runs would pay the multi-threaded fd lookups on all four syscalls and the baseline would not: ~50 ns
// per round trip that is not the monitor's (perf: fdget/fput). A parked thread makes the baseline an
// app's.
class ParkedThread {
 public:
  ParkedThread() : thread_([this] {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }) {}
  ~ParkedThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  ParkedThread app_thread;
  int sites = 0, events = 20000, in_flight = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--sites=", 0) == 0) sites = std::atoi(a.c_str() + 8);
    if (a.rfind("--events=", 0) == 0) events = std::atoi(a.c_str() + 9);
    if (a.rfind("--in-flight=", 0) == 0) in_flight = std::atoi(a.c_str() + 12);
  }
  if (sites != 0) return CountTwoSites(sites, events > 0 ? events : 1, in_flight);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
