// The one background thread all monitors share: deadlines ("this touch is still unfinished 500 ms after it
// arrived"), periodic checks ("look at the message queue head every 100 ms") and stack capture of the main
// thread while it is stuck. Callbacks run on this thread, one at a time. The plugin runs it only while at
// least one monitor is on (hook/plugin.cc): with every monitor off there is no thread at all.
//
// Design, and why:
// - Arm/Disarm are called from hot paths (PLT proxies around recvfrom/sendto on the main thread), so they
//   may not allocate and may not take any lock a callback could hold: deadlines live in a fixed table of
//   kMaxDeadlines slots, each guarded by an atomic state word (generation << 2 | free/claimed/armed/firing).
//   Arm claims a free slot with a CAS, fills it, publishes it armed; Disarm and the watchdog race for an
//   armed slot with a CAS, so exactly one of "disarmed" and "fired" happens. The generation makes a slot
//   that was disarmed and re-armed with another id fail a stale CAS (no ABA).
// - The thread sleeps on a futex (the word is a wake sequence) with an absolute CLOCK_MONOTONIC timeout at
//   the nearest deadline or periodic check, or with no timeout at all when nothing is pending, so it is
//   fully idle (zero wakeups) then (after a pass that did anything, once its rare-text sweep is made: Loop).
//   Arm bumps the sequence and issues FUTEX_WAKE only when the new deadline
//   is earlier than the one the thread sleeps towards (or it is between scans), so arming a deadline later
//   than the planned wake-up costs a few atomics and no syscall. A condition variable would need a mutex
//   that Arm would share with the watchdog: exactly the lock a hot path must not take.
// - Periodic checks are added from control paths (monitor start/stop) and live in a small fixed table too.
// - Stack capture is a function pointer (the JNI layer walks the main thread's Java stack; tests plug their
//   own). Arm(..., kCaptureStack) captures the stack on the watchdog thread just before the callback runs.
// - Start/Stop: Stop wakes the thread, joins it, and drops pending deadlines (counted), so no thread and no
//   callback outlives Stop. Callbacks may Arm/Disarm/AddPeriodic freely; Stop from a callback is refused.
#ifndef JANKPROBE_HOOK_WATCHDOG_H_
#define JANKPROBE_HOOK_WATCHDOG_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace jp::hook {

struct StackSample {
  bool ok = false;
  std::string text;   // the stack, as the capture hook wrote it
  std::string error;  // why there is none ("no stack capture hook installed", or the hook's reason)
  uint64_t captured_ns = 0;
};

// Writes the main thread's stack as text into buf (at most cap bytes) and returns the length, or returns a
// negative value after writing the reason into buf. Runs on the watchdog thread.
using StackCaptureFn = long (*)(void* ctx, char* buf, size_t cap);

struct DeadlineFired {
  uint64_t id = 0;
  uint64_t deadline_ns = 0;
  uint64_t fired_ns = 0;               // CLOCK_MONOTONIC when the callback was called
  const StackSample* stack = nullptr;  // set when armed with kCaptureStack
};

using DeadlineFn = void (*)(const DeadlineFired& fired, void* arg);
using PeriodicFn = void (*)(uint64_t now_ns, void* arg);

class Watchdog {
 public:
  static constexpr int kMaxDeadlines = 64;
  static constexpr int kMaxPeriodic = 16;
  static constexpr uint32_t kCaptureStack = 1;
  static constexpr size_t kMaxStackBytes = 16384;

  struct Stats {
    uint64_t loop_iterations = 0;   // passes of the thread's loop (each wakeup is one)
    uint64_t deadlines_fired = 0;
    uint64_t periodic_runs = 0;
    uint64_t arm_failures = 0;      // Arm with the table full
    uint64_t dropped_at_stop = 0;   // deadlines still armed when Stop ran
    uint64_t wake_syscalls = 0;     // FUTEX_WAKE calls made by Arm/AddPeriodic/Stop
    uint64_t rare_text_sweeps = 0;  // SweepRareText calls (hook/text_release.h): at most one a second
  };

  Watchdog() = default;
  ~Watchdog();  // Stop()
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the thread (all signals blocked in it, so app handlers never run there).
  bool Start(std::string* error);
  // Joins the thread. Deadlines still armed are dropped without firing. Refused (false) on the watchdog
  // thread itself; true otherwise (also when not running).
  bool Stop();
  bool running() const { return running_.load(std::memory_order_acquire); }

  // Hot-path safe: no allocation, no lock, at most one futex syscall. Calls fn(fired, arg) on the watchdog
  // thread at deadline_ns (CLOCK_MONOTONIC) unless disarmed first. Returns false if the table is full.
  // Ids need not be unique; Disarm removes one armed entry with that id. Deadlines may be armed before Start.
  bool Arm(uint64_t id, uint64_t deadline_ns, DeadlineFn fn, void* arg, uint32_t flags = 0) noexcept;
  // Hot-path safe. True if an armed entry with this id was removed before firing. False if there was none:
  // never armed, already fired, or firing right now (then arg must stay valid until the callback returns).
  bool Disarm(uint64_t id) noexcept;

  // Control path. Calls fn every period_ns, the first time one period from now; a late run does not cause a
  // burst of catch-up runs. Returns a handle, or -1 if the table is full or period_ns is 0.
  int AddPeriodic(uint64_t period_ns, PeriodicFn fn, void* arg) noexcept;
  // After it returns, fn does not run again and is not running (unless called from fn itself).
  bool RemovePeriodic(int handle) noexcept;

  void SetStackCapture(StackCaptureFn fn, void* ctx);
  // Calls the capture hook now (meant for the watchdog thread, e.g. inside a periodic check).
  StackSample CaptureMainThreadStack();

  Stats stats() const;
  pid_t thread_tid() const { return tid_.load(std::memory_order_acquire); }  // 0 when not running

 private:
  struct alignas(64) DeadlineSlot {
    std::atomic<uint64_t> state{0};
    std::atomic<uint64_t> id{0};
    std::atomic<uint64_t> deadline_ns{0};
    std::atomic<DeadlineFn> fn{nullptr};
    std::atomic<void*> arg{nullptr};
    std::atomic<uint32_t> flags{0};
  };
  struct alignas(64) PeriodicSlot {
    std::atomic<uint64_t> state{0};
    std::atomic<uint64_t> period_ns{0};
    std::atomic<uint64_t> next_due_ns{0};
    std::atomic<PeriodicFn> fn{nullptr};
    std::atomic<void*> arg{nullptr};
    std::atomic<bool> remove_requested{false};  // RemovePeriodic from inside its own callback
  };

  void Loop();
  uint64_t FireDue(uint64_t now);     // returns the nearest remaining deadline
  uint64_t RunPeriodic(uint64_t now); // returns the nearest next run
  void Wake(uint64_t deadline_ns) noexcept;
  bool OnWatchdogThread() const;

  DeadlineSlot deadlines_[kMaxDeadlines];
  PeriodicSlot periodic_[kMaxPeriodic];

  // The futex word: bumped by anyone who needs the thread to rescan.
  std::atomic<uint32_t> wake_seq_{0};
  // What the thread sleeps towards: 0 while it scans (anyone arming must wake it), else a CLOCK_MONOTONIC
  // time, UINT64_MAX when it sleeps without a timeout.
  std::atomic<uint64_t> planned_wake_ns_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<pid_t> tid_{0};
  std::thread thread_;
  std::mutex lifecycle_mu_;  // Start/Stop only; never taken by the thread or by Arm/Disarm

  std::mutex capture_mu_;  // the hook pointer pair; taken on the watchdog thread and by SetStackCapture only
  StackCaptureFn capture_fn_ = nullptr;
  void* capture_ctx_ = nullptr;

  std::atomic<uint64_t> loop_iterations_{0};
  std::atomic<uint64_t> deadlines_fired_{0};
  std::atomic<uint64_t> periodic_runs_{0};
  std::atomic<uint64_t> arm_failures_{0};
  std::atomic<uint64_t> dropped_at_stop_{0};
  std::atomic<uint64_t> wake_syscalls_{0};
  std::atomic<uint64_t> rare_text_sweeps_{0};
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_WATCHDOG_H_
