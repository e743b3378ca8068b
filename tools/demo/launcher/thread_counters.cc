#include "tools/demo/launcher/thread_counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace jp::demo {
namespace {

int OpenCounter(uint64_t config, bool user_only, int group_fd) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = config;
  attr.exclude_kernel = user_only ? 1 : 0;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP;
  // pid 0, cpu -1: this thread on whichever CPU it runs; threads it starts are not counted.
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, 0));
}

}  // namespace

ThreadCounters::~ThreadCounters() {
  if (cycles_fd_ >= 0) close(cycles_fd_);
  if (group_fd_ >= 0) close(group_fd_);
}

bool ThreadCounters::Open() {
  if (group_fd_ >= 0) return true;
  // Kernel mode too when allowed (perf_event_paranoid <= 1 or CAP_PERFMON): a syscall a monitor adds
  // per message is part of its cost. Else user mode only, and the figures say so.
  for (const bool user_only : {false, true}) {
    const int leader = OpenCounter(PERF_COUNT_HW_INSTRUCTIONS, user_only, -1);
    if (leader < 0) {
      why_ = std::string("perf_event_open(instructions): ") + std::strerror(errno);
      continue;
    }
    const int cycles = OpenCounter(PERF_COUNT_HW_CPU_CYCLES, user_only, leader);
    if (cycles < 0) {
      why_ = std::string("perf_event_open(cycles): ") + std::strerror(errno);
      close(leader);
      continue;
    }
    group_fd_ = leader;
    cycles_fd_ = cycles;
    scope_ = user_only ? "user" : "user+kernel";
    why_.clear();
    return true;
  }
  return false;
}

ThreadCounterValues ThreadCounters::Read() const {
  ThreadCounterValues v;
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  v.cpu_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
  if (group_fd_ < 0) return v;
  // PERF_FORMAT_GROUP: {nr, value[nr]} in the order the events joined the group.
  uint64_t buf[3] = {};
  if (read(group_fd_, buf, sizeof buf) == static_cast<ssize_t>(sizeof buf) && buf[0] == 2) {
    v.instructions = static_cast<int64_t>(buf[1]);
    v.cycles = static_cast<int64_t>(buf[2]);
  }
  return v;
}

}  // namespace jp::demo
