#include "hook/event_clock.h"

#include <errno.h>
#include <time.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace jp::hook {
namespace {

std::atomic<const EventClock::Options*> g_test_options{nullptr};
// The process clock is calibrated once; a test that changes the options asks for it again.
JP_CONSTINIT std::atomic<bool> g_process_clock_stale{true};
JP_CONSTINIT std::mutex g_process_clock_mu;  // one calibration at a time (two monitors may start concurrently)

#if JP_EVENT_CLOCK_HAS_COUNTER
uint64_t AbsDiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

#if defined(__x86_64__)
// A small text file, whole (sysfs and procfs files are read in one go; cpuinfo is tens of KiB). Plain
// read(2): std::ifstream / std::istringstream would link the C++ runtime's iostream and locale machinery
// into the library (~280 KiB more text, their static initialisers and relocations run at every load).
bool ReadSmallFile(const char* path, std::string* out) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  ssize_t n;
  out->clear();
  while ((n = read(fd, buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      close(fd);
      return false;
    }
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > (1u << 20)) break;  // a sane bound: the lines we want come first
  }
  close(fd);
  return true;
}

bool HasWord(std::string_view line, std::string_view word) {
  for (size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
    const bool starts = at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t' || line[at - 1] == ':';
    const size_t end = at + word.size();
    const bool ends = end == line.size() || line[end] == ' ' || line[end] == '\t';
    if (starts && ends) return true;
  }
  return false;
}

// The kernel's own verdict on the TSC: it switches the clocksource away from tsc when it finds the TSCs
// out of step across CPUs or unstable (its watchdog compares it with HPET/ACPI PM timer), so "tsc" there
// means CLOCK_MONOTONIC is this very counter, scaled. Android's SELinux policy may hide sysfs from apps:
// then the CPU's own promise (constant rate, not stopping in deep C-states) is what we have.
bool CounterTrusted(std::string* why) {
  std::string text;
  if (ReadSmallFile("/sys/devices/system/clocksource/clocksource0/current_clocksource", &text) &&
      !text.empty()) {
    const std::string source = text.substr(0, text.find('\n'));
    if (source == "tsc") return true;
    *why = "clocksource is " + source + ", not tsc: the kernel does not trust the TSC";
    return false;
  }
  if (ReadSmallFile("/proc/cpuinfo", &text)) {
    std::string_view all(text);
    for (size_t start = 0; start < all.size();) {
      const size_t end = std::min(all.find('\n', start), all.size());
      const std::string_view line = all.substr(start, end - start);
      start = end + 1;
      if (line.compare(0, 5, "flags") != 0) continue;
      const bool constant = HasWord(line, "constant_tsc");
      const bool nonstop = HasWord(line, "nonstop_tsc");
      if (constant && nonstop) return true;
      *why = std::string("clocksource unreadable and the TSC is not invariant (") +
             (constant ? "" : "no constant_tsc ") + (nonstop ? "" : "no nonstop_tsc") + ")";
      return false;
    }
  }
  *why = "clocksource and /proc/cpuinfo both unreadable: cannot tell whether the TSC is invariant";
  return false;
}

bool RateSane(double hz, std::string* why) {
  if (hz >= 1e8 && hz <= 2e10) return true;
  char buf[96];
  std::snprintf(buf, sizeof buf, "TSC rate %.1f MHz outside 100..20000 MHz", hz / 1e6);
  *why = buf;
  return false;
}
#elif defined(__aarch64__)
// The generic timer is architecturally required to count at a constant rate and in step across CPUs;
// EL0 reads of CNTVCT_EL0 are what bionic's vDSO does. CNTFRQ_EL0 is set by firmware, which has been
// known to get it wrong: the measured rate must agree with it.
bool CounterTrusted(std::string*) { return true; }

bool RateSane(double hz, std::string* why) {
  uint64_t frq;
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
  if (frq != 0 && hz > 0.99 * static_cast<double>(frq) && hz < 1.01 * static_cast<double>(frq)) return true;
  char buf[128];
  std::snprintf(buf, sizeof buf, "CNTVCT_EL0 measured at %.3f MHz, CNTFRQ_EL0 says %.3f MHz", hz / 1e6,
                static_cast<double>(frq) / 1e6);
  *why = buf;
  return false;
}
#endif

void SleepNs(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / kNsPerSec), static_cast<long>(ns % kNsPerSec)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}
#endif

}  // namespace

bool EventClock::TakeSample(Sample* out) noexcept {
#if JP_EVENT_CLOCK_HAS_COUNTER
  const uint64_t c1 = ReadCounter();
  const uint64_t ns = MonotonicNs();
  const uint64_t c2 = ReadCounter();
  out->counter = c1 + (c2 - c1) / 2;
  out->ns = ns;
  // Backwards: the thread moved to a CPU whose counter is behind. Wide: it was interrupted in between,
  // and the pair could be off by the interruption.
  return c2 >= c1;
#else
  (void)out;
  return false;
#endif
}

void EventClock::SetOptionsForTest(const Options* options) noexcept {
  g_test_options.store(options, std::memory_order_release);
  g_process_clock_stale.store(true, std::memory_order_release);
  // Until it is calibrated again the process clock keeps its anchor: nobody uses it from here on, so the
  // next test's watchdog does not keep it fresh (no wakes of its own for it).
  internal::g_process_event_clock.used_.store(0, std::memory_order_relaxed);
  internal::g_process_event_clock.last_use_ns_.store(0, std::memory_order_relaxed);
}

// Control-path functions are cold: optimised for size and kept out of the hot text (NowNs/Slow stay -O2).
__attribute__((cold)) bool EventClock::Init() {
  const Options* test = g_test_options.load(std::memory_order_acquire);
  return Init(test ? *test : Options{});
}

__attribute__((cold)) bool EventClock::Init(const Options& options) {
  limit_ticks_.store(0, std::memory_order_seq_cst);  // NowNs: every read to Slow until the end of Init
  counter_.store(false, std::memory_order_seq_cst);
  reanchor_ns_ = options.reanchor_ns;
  note_[0] = '\0';
  std::string note;  // copied into note_ when Init fails
  // A failure: its reason kept for why(), the clock on clock_gettime.
  auto fail = [this, &note](Fallback why) {
    std::snprintf(note_, sizeof note_, "%s", note.c_str());
    FallBack(why, 0);
    return false;
  };
  reanchors_.store(0, std::memory_order_relaxed);
  refreshes_.store(0, std::memory_order_relaxed);
  used_.store(0, std::memory_order_relaxed);
  last_use_ns_.store(0, std::memory_order_relaxed);
  checked_.store(0, std::memory_order_relaxed);
  max_error_ns_.store(0, std::memory_order_relaxed);
  fallback_value_.store(0, std::memory_order_relaxed);
  if (options.force_fallback != nullptr) {
    note = options.force_fallback;
    return fail(Fallback::kForced);
  }
#if !JP_EVENT_CLOCK_HAS_COUNTER
  FallBack(Fallback::kNoCounter, 0);
  return false;
#else
  if (!CounterTrusted(&note)) return fail(Fallback::kNotTrusted);
  // Two pairs ~2 ms apart, each the tightest of a few tries; no sample may move either clock backwards.
  auto best_of = [&note](Sample* best, Sample* last) {
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 16; ++i) {
      const uint64_t c1 = ReadCounter();
      Sample s;
      const bool ok = TakeSample(&s);
      const uint64_t width = ReadCounter() - c1;
      // Never backwards; equal is fine (a 19.2 MHz phone counter ticks every 52 ns, slower than we sample).
      if (!ok || (last->ns != 0 && (s.counter < last->counter || s.ns < last->ns))) {
        note = "counter not monotonic at calibration";
        return false;
      }
      *last = s;
      if (width < best_width) {
        best_width = width;
        *best = s;
      }
    }
    return true;
  };
  Sample a{}, b{}, last{};
  if (!best_of(&a, &last)) return fail(Fallback::kCalibration);
  SleepNs(2 * kNsPerMs);
  if (!best_of(&b, &last) || b.counter <= a.counter || b.ns <= a.ns) {
    if (note.empty()) note = "counter not monotonic at calibration";
    return fail(Fallback::kCalibration);
  }
  const uint64_t dc = b.counter - a.counter, dns = b.ns - a.ns;
  const double hz = static_cast<double>(dc) * 1e9 / static_cast<double>(dns);
  if (!RateSane(hz, &note)) return fail(Fallback::kCalibration);
  uint64_t mult = static_cast<uint64_t>((static_cast<unsigned __int128>(dns) << kShift) / dc);
  if (options.skew_ppm != 0) {
    mult = static_cast<uint64_t>(static_cast<__int128>(mult) * (1000000 + options.skew_ppm) / 1000000);
  }
  // A re-anchor pair whose counter reads are more than 2 us apart was interrupted (they are ~50 ns apart
  // otherwise): its midpoint could be off by half that, and the rate measured from it by 2 us / 50 ms.
  max_sample_ticks_ = static_cast<uint64_t>(hz * 2e-6);
  const uint32_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  base_counter_.store(b.counter, std::memory_order_relaxed);
  base_ns_.store(b.ns, std::memory_order_relaxed);
  mult_.store(mult, std::memory_order_relaxed);
  limit_ticks_.store(static_cast<uint64_t>(hz * static_cast<double>(reanchor_ns_) / 1e9), std::memory_order_relaxed);
  seq_.store(s + 2, std::memory_order_release);
  fallback_.store(static_cast<uint32_t>(Fallback::kNone), std::memory_order_relaxed);
  counter_.store(true, std::memory_order_seq_cst);
  return true;
#endif
}

namespace internal {
// Constant-initialised: loading the library writes nothing here; the first calibration does.
// Starts a cache line: NowNs reads the flag, seq and anchor words (its first 40 bytes) twice per input
// event; straddling two lines they would be one more likely miss after each syscall.
alignas(64) JP_CONSTINIT EventClock g_process_event_clock;
}  // namespace internal

bool CalibrateProcessEventClock() {
  std::lock_guard<std::mutex> lock(g_process_clock_mu);
  EventClock& clock = ProcessEventClock();
  if (g_process_clock_stale.exchange(false, std::memory_order_acq_rel)) return clock.Init();
  return std::strcmp(clock.source(), "clock_gettime") != 0;
}

uint64_t EventClock::Slow() noexcept {
  static_assert(sizeof(EventClock) == 256, "the process clock in four lines (.data): see the members' comments");
  static_assert(offsetof(EventClock, max_error_ns_) + sizeof(max_error_ns_) <= 64,
                "a read's and a re-anchor's words stay in the clock's first line (event_clock.h)");
#if JP_EVENT_CLOCK_HAS_COUNTER
  if (!counter_.load(std::memory_order_relaxed)) return MonotonicNs();
  // One re-anchoring thread at a time; the others (and readers that saw it mid-write) just use
  // clock_gettime meanwhile.
  uint32_t s = seq_.load(std::memory_order_relaxed);
  if ((s & 1) != 0 || !seq_.compare_exchange_strong(s, s + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
    return MonotonicNs();
  }
  std::atomic_thread_fence(std::memory_order_release);
  Sample now;
  const uint64_t c1 = ReadCounter();
  const bool ok = TakeSample(&now) && ReadCounter() - c1 <= max_sample_ticks_;
  if (!ok) {  // interrupted or migrated: keep the old anchor, try again on the next read
    seq_.store(s + 2, std::memory_order_release);
    return now.ns;
  }
  const uint64_t base_c = base_counter_.load(std::memory_order_relaxed);
  const uint64_t base_ns = base_ns_.load(std::memory_order_relaxed);
  const uint64_t mult = mult_.load(std::memory_order_relaxed);
  const uint64_t limit = limit_ticks_.load(std::memory_order_relaxed);
  uint64_t new_mult = mult;
  if (now.counter > base_c && now.ns > base_ns && now.counter - base_c <= 2 * limit) {
    // The anchor was used up to here: how far off would it have been now?
    const uint64_t d = now.counter - base_c;
    const uint64_t extrapolated = base_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(d) * mult) >> kShift);
    const uint64_t err = AbsDiff(extrapolated, now.ns);
    checked_.store(checked_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // CAS holder only
    if (err > max_error_ns_.load(std::memory_order_relaxed)) max_error_ns_.store(err, std::memory_order_relaxed);
    if (err > kBoundNs) {
      FallBack(Fallback::kError, err);
      seq_.store(s + 2, std::memory_order_release);
      return now.ns;
    }
    // The rate over this interval follows NTP's current correction; too short an interval is noise.
    if (d >= limit / 5) {
      new_mult = static_cast<uint64_t>((static_cast<unsigned __int128>(now.ns - base_ns) << kShift) / d);
    }
  }
  base_counter_.store(now.counter, std::memory_order_relaxed);
  base_ns_.store(now.ns, std::memory_order_relaxed);
  mult_.store(new_mult, std::memory_order_relaxed);
  reanchors_.store(reanchors_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // CAS holder only
  used_.store(1, std::memory_order_relaxed);  // a reader's (the watchdog's refresh clears it after its own)
  seq_.store(s + 2, std::memory_order_release);
  return now.ns;
#else
  return MonotonicNs();
#endif
}

void EventClock::FallBack(Fallback why, uint64_t value) noexcept {
  fallback_value_.store(value, std::memory_order_relaxed);
  fallback_.store(static_cast<uint32_t>(why), std::memory_order_release);
  limit_ticks_.store(0, std::memory_order_release);  // NowNs goes to Slow from now on
  counter_.store(false, std::memory_order_release);
}

const char* EventClock::source() const noexcept {
  if (!counter_.load(std::memory_order_acquire)) return "clock_gettime";
#if defined(__x86_64__)
  return "tsc";
#else
  return "cntvct";
#endif
}

__attribute__((cold)) std::string EventClock::why() const {
  const uint64_t v = fallback_value_.load(std::memory_order_relaxed);
  switch (static_cast<Fallback>(fallback_.load(std::memory_order_acquire))) {
    case Fallback::kNone: return counter_.load() ? "" : "clock_gettime";
    case Fallback::kNotInitialised: return "not calibrated";
    case Fallback::kForced: return std::string(note_);
    case Fallback::kNoCounter: return "no validated CPU counter on this ABI: clock_gettime";
    case Fallback::kNotTrusted:
    case Fallback::kCalibration: return std::string(note_) + ": clock_gettime";
    case Fallback::kError:
      return "counter was " + std::to_string(v) + " ns off CLOCK_MONOTONIC at a re-anchor (bound " +
             std::to_string(kBoundNs) + " ns): clock_gettime from then on";
  }
  return "?";
}

EventClock::Stats EventClock::stats() const noexcept {
  Stats st;
  st.reanchors = reanchors_.load(std::memory_order_relaxed);
  st.refreshes = refreshes_.load(std::memory_order_relaxed);
  st.checked = checked_.load(std::memory_order_relaxed);
  st.max_error_ns = max_error_ns_.load(std::memory_order_relaxed);
  const uint64_t mult = mult_.load(std::memory_order_relaxed);
  st.counter_mhz = mult ? static_cast<double>(uint64_t{1} << kShift) / static_cast<double>(mult) * 1e3 : 0;
  return st;
}

__attribute__((cold)) std::string EventClock::StatusJson() const {
  std::string w = why();
  std::string quoted;
  for (char c : w) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  const Stats st = stats();
  char buf[160];
  std::snprintf(buf, sizeof buf, ",\"bound_ns\":%llu,\"reanchors\":%llu,\"max_error_ns\":%llu,\"counter_mhz\":%.3f}",
                static_cast<unsigned long long>(kBoundNs), static_cast<unsigned long long>(st.reanchors),
                static_cast<unsigned long long>(st.max_error_ns), st.counter_mhz);
  return std::string("{\"source\":\"") + source() + "\",\"why\":\"" + quoted + "\"" + buf;
}

}  // namespace jp::hook
