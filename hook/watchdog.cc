#include "hook/watchdog.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <system_error>

#include "hook/clock.h"
#include "hook/event_clock.h"
#include "hook/jni/java_stack_release.h"
#include "hook/text_release.h"

namespace jp::hook {
namespace {

// Slot states (low two bits of the state word; the rest is the generation).
constexpr uint64_t kFree = 0;
constexpr uint64_t kClaimed = 1;
constexpr uint64_t kArmed = 2;   // deadline armed / periodic check active
constexpr uint64_t kFiring = 3;  // callback running on the watchdog thread
constexpr uint64_t kStateMask = 3;
constexpr uint64_t kNever = UINT64_MAX;

uint64_t NextGenerationFree(uint64_t state) { return ((state >> 2) + 1) << 2 | kFree; }
uint64_t WithState(uint64_t state, uint64_t st) { return (state & ~kStateMask) | st; }

uint32_t StartSlot(uint64_t id, int count) {
  id ^= id >> 33;
  id *= 0xFF51AFD7ED558CCDull;
  id ^= id >> 33;
  return static_cast<uint32_t>(id % static_cast<uint64_t>(count));
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout, uint32_t bitset) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word must be a plain u32");
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, bitset);
}

// Sleeps while *word == expected, until abs_ns on CLOCK_MONOTONIC (kNever: no timeout).
void FutexWaitUntil(std::atomic<uint32_t>* word, uint32_t expected, uint64_t abs_ns) {
  if (abs_ns == kNever) {
    Futex(word, FUTEX_WAIT_PRIVATE, expected, nullptr, 0);
    return;
  }
  timespec ts;
  ts.tv_sec = static_cast<time_t>(abs_ns / kNsPerSec);
  ts.tv_nsec = static_cast<long>(abs_ns % kNsPerSec);
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time: no drift from recomputing relative waits.
  Futex(word, FUTEX_WAIT_BITSET_PRIVATE, expected, &ts, FUTEX_BITSET_MATCH_ANY);
}

pid_t Gettid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

}  // namespace

Watchdog::~Watchdog() { Stop(); }

bool Watchdog::OnWatchdogThread() const { return tid_.load(std::memory_order_acquire) == Gettid(); }

bool Watchdog::Start(std::string* error) {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  if (thread_.joinable()) return true;
  stop_.store(false, std::memory_order_seq_cst);
  // The thread inherits the creator's mask: block everything so app signal handlers never run on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread([this] { Loop(); });
  } catch (const std::system_error& e) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (error) *error = std::string("cannot start the watchdog thread: ") + e.what();
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  // Wait for the thread to publish its tid, so thread_tid() and Stop-from-callback checks are exact.
  while (tid_.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  running_.store(true, std::memory_order_release);
  return true;
}

bool Watchdog::Stop() {
  if (OnWatchdogThread()) return false;  // joining ourselves would deadlock
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    Futex(&wake_seq_, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, 0);
    thread_.join();
    running_.store(false, std::memory_order_release);
  }
  for (DeadlineSlot& slot : deadlines_) {
    uint64_t s = slot.state.load(std::memory_order_acquire);
    if ((s & kStateMask) == kArmed && slot.state.compare_exchange_strong(s, NextGenerationFree(s))) {
      dropped_at_stop_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  planned_wake_ns_.store(0, std::memory_order_seq_cst);
  return true;
}

void Watchdog::Wake(uint64_t due_ns) noexcept {
  // planned_wake_ns_ == 0: the thread is scanning and may have passed our slot; otherwise wake it only if
  // it would sleep past the new time. The seq_cst store of the slot (caller) and this seq_cst load pair
  // with the thread's seq_cst store of planned_wake_ns_ and its scan: one of the two sides sees the other.
  uint64_t planned = planned_wake_ns_.load(std::memory_order_seq_cst);
  if (planned != 0 && due_ns >= planned) return;
  wake_seq_.fetch_add(1, std::memory_order_seq_cst);
  wake_syscalls_.fetch_add(1, std::memory_order_relaxed);
  Futex(&wake_seq_, FUTEX_WAKE_PRIVATE, 1, nullptr, 0);
}

bool Watchdog::Arm(uint64_t id, uint64_t deadline_ns, DeadlineFn fn, void* arg, uint32_t flags) noexcept {
  if (fn == nullptr) return false;
  const uint32_t start = StartSlot(id, kMaxDeadlines);
  for (int i = 0; i < kMaxDeadlines; ++i) {
    DeadlineSlot& slot = deadlines_[(start + i) % kMaxDeadlines];
    uint64_t s = slot.state.load(std::memory_order_relaxed);
    if ((s & kStateMask) != kFree) continue;
    if (!slot.state.compare_exchange_strong(s, WithState(s, kClaimed), std::memory_order_acquire)) continue;
    slot.id.store(id, std::memory_order_relaxed);
    slot.deadline_ns.store(deadline_ns, std::memory_order_relaxed);
    slot.fn.store(fn, std::memory_order_relaxed);
    slot.arg.store(arg, std::memory_order_relaxed);
    slot.flags.store(flags, std::memory_order_relaxed);
    slot.state.store(WithState(s, kArmed), std::memory_order_seq_cst);
    Wake(deadline_ns);
    return true;
  }
  arm_failures_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool Watchdog::Disarm(uint64_t id) noexcept {
  const uint32_t start = StartSlot(id, kMaxDeadlines);
  for (int i = 0; i < kMaxDeadlines; ++i) {
    DeadlineSlot& slot = deadlines_[(start + i) % kMaxDeadlines];
    uint64_t s = slot.state.load(std::memory_order_acquire);
    if ((s & kStateMask) != kArmed || slot.id.load(std::memory_order_relaxed) != id) continue;
    // Fails if the watchdog took it for firing, or if the slot was recycled (generation changed).
    if (slot.state.compare_exchange_strong(s, NextGenerationFree(s), std::memory_order_acq_rel)) return true;
  }
  return false;
}

int Watchdog::AddPeriodic(uint64_t period_ns, PeriodicFn fn, void* arg) noexcept {
  if (fn == nullptr || period_ns == 0) return -1;
  for (int i = 0; i < kMaxPeriodic; ++i) {
    PeriodicSlot& slot = periodic_[i];
    uint64_t s = slot.state.load(std::memory_order_relaxed);
    if ((s & kStateMask) != kFree) continue;
    if (!slot.state.compare_exchange_strong(s, WithState(s, kClaimed), std::memory_order_acquire)) continue;
    const uint64_t due = MonotonicNs() + period_ns;
    slot.period_ns.store(period_ns, std::memory_order_relaxed);
    slot.next_due_ns.store(due, std::memory_order_relaxed);
    slot.fn.store(fn, std::memory_order_relaxed);
    slot.arg.store(arg, std::memory_order_relaxed);
    slot.remove_requested.store(false, std::memory_order_relaxed);
    slot.state.store(WithState(s, kArmed), std::memory_order_seq_cst);
    Wake(due);
    return i;
  }
  return -1;
}

bool Watchdog::RemovePeriodic(int handle) noexcept {
  if (handle < 0 || handle >= kMaxPeriodic) return false;
  PeriodicSlot& slot = periodic_[handle];
  for (;;) {
    uint64_t s = slot.state.load(std::memory_order_acquire);
    const uint64_t st = s & kStateMask;
    if (st == kFree || st == kClaimed) return false;
    if (st == kArmed) {
      if (slot.state.compare_exchange_strong(s, NextGenerationFree(s), std::memory_order_acq_rel)) return true;
      continue;
    }
    // Running now. From its own callback: let the watchdog free it afterwards. From elsewhere: wait for the
    // callback to return (a control path, and a periodic check is short), then remove it.
    if (OnWatchdogThread()) {
      slot.remove_requested.store(true, std::memory_order_release);
      return true;
    }
    std::this_thread::yield();
  }
}

void Watchdog::SetStackCapture(StackCaptureFn fn, void* ctx) {
  std::lock_guard<std::mutex> lock(capture_mu_);
  capture_fn_ = fn;
  capture_ctx_ = ctx;
}

StackSample Watchdog::CaptureMainThreadStack() {
  StackSample out;
  std::lock_guard<std::mutex> lock(capture_mu_);
  if (capture_fn_ == nullptr) {
    out.error = "no stack capture hook installed";
    return out;
  }
  std::string buf(kMaxStackBytes, '\0');
  long n = capture_fn_(capture_ctx_, &buf[0], buf.size());
  out.captured_ns = MonotonicNs();
  if (n < 0) {
    out.error = std::string(buf.c_str(), strnlen(buf.c_str(), buf.size()));
    if (out.error.empty()) out.error = "stack capture hook failed without a reason";
    return out;
  }
  buf.resize(static_cast<size_t>(n) < buf.size() ? static_cast<size_t>(n) : buf.size());
  out.text = std::move(buf);
  out.ok = true;
  return out;
}

uint64_t Watchdog::FireDue(uint64_t now) {
  uint64_t nearest = kNever;
  for (DeadlineSlot& slot : deadlines_) {
    uint64_t s = slot.state.load(std::memory_order_acquire);
    if ((s & kStateMask) != kArmed) continue;
    const uint64_t deadline = slot.deadline_ns.load(std::memory_order_relaxed);
    if (deadline > now) {
      if (deadline < nearest) nearest = deadline;
      continue;
    }
    if (!slot.state.compare_exchange_strong(s, WithState(s, kFiring), std::memory_order_acq_rel)) continue;
    DeadlineFired fired;
    fired.id = slot.id.load(std::memory_order_relaxed);
    fired.deadline_ns = deadline;
    StackSample stack;
    if (slot.flags.load(std::memory_order_relaxed) & kCaptureStack) {
      stack = CaptureMainThreadStack();
      fired.stack = &stack;
    }
    DeadlineFn fn = slot.fn.load(std::memory_order_relaxed);
    void* arg = slot.arg.load(std::memory_order_relaxed);
    fired.fired_ns = MonotonicNs();
    fn(fired, arg);
    deadlines_fired_.fetch_add(1, std::memory_order_relaxed);
    slot.state.store(NextGenerationFree(s), std::memory_order_release);
  }
  return nearest;
}

uint64_t Watchdog::RunPeriodic(uint64_t now) {
  uint64_t nearest = kNever;
  for (PeriodicSlot& slot : periodic_) {
    uint64_t s = slot.state.load(std::memory_order_acquire);
    if ((s & kStateMask) != kArmed) continue;
    const uint64_t due = slot.next_due_ns.load(std::memory_order_relaxed);
    if (due <= now) {
      if (!slot.state.compare_exchange_strong(s, WithState(s, kFiring), std::memory_order_acq_rel)) continue;
      slot.fn.load(std::memory_order_relaxed)(now, slot.arg.load(std::memory_order_relaxed));
      periodic_runs_.fetch_add(1, std::memory_order_relaxed);
      if (slot.remove_requested.load(std::memory_order_acquire)) {
        slot.state.store(NextGenerationFree(s), std::memory_order_release);
        continue;
      }
      // The next due time stays on the original grid; runs missed while we were late are skipped.
      const uint64_t period = slot.period_ns.load(std::memory_order_relaxed);
      const uint64_t after = MonotonicNs();
      uint64_t next = due + period;
      if (next <= after) next += ((after - next) / period + 1) * period;
      slot.next_due_ns.store(next, std::memory_order_relaxed);
      slot.state.store(WithState(s, kArmed), std::memory_order_release);
      if (next < nearest) nearest = next;
      continue;
    }
    if (due < nearest) nearest = due;
  }
  return nearest;
}

void Watchdog::Loop() {
  pthread_setname_np(pthread_self(), "jp-watchdog");
  tid_.store(Gettid(), std::memory_order_release);
  uint64_t next_sweep_ns = 0;  // RareTextSweepDue's: not on the first pass (start still runs its code)
  // A pass ran since the last sweep: this thread's callbacks, or whatever woke it (a hooked call's rare lag
  // path on the app's thread arms the report that wakes it), may have faulted rare text back in, possibly
  // after another thread's release. The thread then does not park past the sweep's time: one wake, then
  // parked for good. Without it a parked watchdog never swept, and a lag path's tail that ran after the
  // report's delivery (the app's thread in InputTracker::FinishLagged, preempted after arming the report)
  // kept its 64 KiB window resident (text_release_library_test, 2 of 48 runs on a loaded 2-core host).
  bool sweep_owed = false;
  for (;;) {
    planned_wake_ns_.store(0, std::memory_order_seq_cst);
    const uint32_t seq = wake_seq_.load(std::memory_order_seq_cst);
    if (stop_.load(std::memory_order_seq_cst)) break;
    loop_iterations_.fetch_add(1, std::memory_order_relaxed);
    const uint64_t now = MonotonicNs();
    const uint64_t deadline = FireDue(now);
    const uint64_t periodic = RunPeriodic(now);
    // Here, at the loop's shallowest point: the callbacks that ran Java frames (the attach, a lag's Java
    // stack, a barrier removal) have returned, and what HotSpot's stack banging left resident below them
    // goes back (hook/jni/java_stack_release.h).
    jni::ReleaseStackIfJavaRan();
    const uint64_t after = MonotonicNs();
    // The rare text a running app faulted in without a report goes back within a sweep period
    // (hook/text_release.h, SweepRareText: a pagemap read, a release only when a page is mapped).
    const bool first_pass = next_sweep_ns == 0;
    if (__builtin_expect(RareTextSweepDue(&next_sweep_ns, after), false)) {
      rare_text_sweeps_.fetch_add(1, std::memory_order_relaxed);
      SweepRareText();
      sweep_owed = false;
    } else if (!first_pass) {
      sweep_owed = true;
    }
    uint64_t nearest = deadline < periodic ? deadline : periodic;
    if (nearest != kNever && nearest <= after) continue;  // came due while callbacks ran
    if (sweep_owed && next_sweep_ns < nearest) nearest = next_sweep_ns;
    // The event clock's re-anchor, when it would be due before this thread is awake again, taken here
    // rather than by the first hot-path reader after the anchor ran out (usually the app's main thread);
    // while readers use the clock, a sleep past the anchor's end is cut short to take it (one wake per span
    // at most, none when this thread is awake near the end anyway; hook/event_clock.h).
    const uint64_t wake = ProcessEventClock().RefreshBeforeSleep(after, nearest);
    planned_wake_ns_.store(wake, std::memory_order_seq_cst);
    FutexWaitUntil(&wake_seq_, seq, wake);
  }
  tid_.store(0, std::memory_order_release);
}

Watchdog::Stats Watchdog::stats() const {
  Stats s;
  s.loop_iterations = loop_iterations_.load(std::memory_order_relaxed);
  s.deadlines_fired = deadlines_fired_.load(std::memory_order_relaxed);
  s.periodic_runs = periodic_runs_.load(std::memory_order_relaxed);
  s.arm_failures = arm_failures_.load(std::memory_order_relaxed);
  s.dropped_at_stop = dropped_at_stop_.load(std::memory_order_relaxed);
  s.wake_syscalls = wake_syscalls_.load(std::memory_order_relaxed);
  s.rare_text_sweeps = rare_text_sweeps_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace jp::hook
