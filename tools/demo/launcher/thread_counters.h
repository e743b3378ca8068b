// The calling thread's own cost counters, for the demo's in-process A/B benchmark (jankprobe-demo --ab):
// CPU time (CLOCK_THREAD_CPUTIME_ID) plus, where the kernel lets us count, the hardware instructions and
// cycles retired by this thread alone (perf_event_open on pid 0 = the calling thread, no inherit).
//
// Why counters and not only CPU time: on a shared 2-core host the main thread's CPU time for a second of the
// same work moves by milliseconds from run to run (other processes evict its caches, preemption costs),
// which buries a cost of microseconds per second. Retired instructions do not depend on what else runs,
// and cycles depend on it far less than wall-clock CPU time.
#ifndef JANKPROBE_TOOLS_DEMO_LAUNCHER_THREAD_COUNTERS_H_
#define JANKPROBE_TOOLS_DEMO_LAUNCHER_THREAD_COUNTERS_H_

#include <cstdint>
#include <string>

namespace jp::demo {

struct ThreadCounterValues {
  int64_t cpu_ns = 0;
  int64_t instructions = -1;  // -1: not counted (see ThreadCounters::why); user+kernel where allowed
  int64_t cycles = -1;
  // User mode only, counted beside the above: the kernel's share of a thread's instructions (timer and
  // device interrupts taken on it, page faults, scheduler work) moves by hundreds of thousands per second
  // between seconds of the same work, while a monitor's own code runs in user mode; a syscall a monitor
  // adds shows as the difference of the two.
  int64_t user_instructions = -1;
  int64_t user_cycles = -1;
};

// Owned by one thread: open, read and close it on the thread it measures.
class ThreadCounters {
 public:
  ThreadCounters() = default;
  ~ThreadCounters();
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  // Opens the hardware counters for the calling thread. Kernel-mode work (syscalls) is counted when the
  // kernel allows it, else user mode only; `scope()` says which. False (CPU time still works) with the
  // reason in `why()` when the kernel or the machine offers no hardware counters.
  bool Open();
  ThreadCounterValues Read() const;
  const std::string& why() const { return why_; }
  const char* scope() const { return scope_; }

 private:
  int group_fd_ = -1;
  int cycles_fd_ = -1;
  int user_group_fd_ = -1;  // the user-mode pair; the same as group_fd_'s scope when that is "user"
  int user_cycles_fd_ = -1;
  const char* scope_ = "none";
  std::string why_;
};

}  // namespace jp::demo

#endif  // JANKPROBE_TOOLS_DEMO_LAUNCHER_THREAD_COUNTERS_H_
