#include "tools/demo/launcher/thread_counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>

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

// A group of {instructions, cycles} for the calling thread; false with the reason in *why.
bool OpenPair(bool user_only, int* leader_fd, int* cycles_fd, std::string* why) {
  const int leader = OpenCounter(PERF_COUNT_HW_INSTRUCTIONS, user_only, -1);
  if (leader < 0) {
    *why = std::string("perf_event_open(instructions): ") + std::strerror(errno);
    return false;
  }
  const int cycles = OpenCounter(PERF_COUNT_HW_CPU_CYCLES, user_only, leader);
  if (cycles < 0) {
    *why = std::string("perf_event_open(cycles): ") + std::strerror(errno);
    close(leader);
    return false;
  }
  *leader_fd = leader;
  *cycles_fd = cycles;
  return true;
}

// PERF_FORMAT_GROUP: {nr, value[nr]} in the order the events joined the group.
bool ReadPair(int leader_fd, int64_t* instructions, int64_t* cycles) {
  uint64_t buf[3] = {};
  if (leader_fd < 0 || read(leader_fd, buf, sizeof buf) != static_cast<ssize_t>(sizeof buf) || buf[0] != 2) {
    return false;
  }
  *instructions = static_cast<int64_t>(buf[1]);
  *cycles = static_cast<int64_t>(buf[2]);
  return true;
}

}  // namespace

ThreadCounters::~ThreadCounters() {
  for (int fd : {cycles_fd_, group_fd_, user_cycles_fd_, user_group_fd_}) {
    if (fd >= 0) close(fd);
  }
}

bool ThreadCounters::Open() {
  if (group_fd_ >= 0) return true;
  // Kernel mode too when allowed (perf_event_paranoid <= 1 or CAP_PERFMON): a syscall a monitor adds
  // per message is part of its cost. Else user mode only, and the figures say so.
  // The user-mode pair is opened in any case (see ThreadCounterValues::user_instructions).
  for (const bool user_only : {false, true}) {
    if (!OpenPair(user_only, &group_fd_, &cycles_fd_, &why_)) continue;
    scope_ = user_only ? "user" : "user+kernel";
    why_.clear();
    if (!user_only && !OpenPair(true, &user_group_fd_, &user_cycles_fd_, &why_)) {
      why_ = "user-mode counters: " + why_;  // the user+kernel pair still counts
    }
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
  if (!ReadPair(group_fd_, &v.instructions, &v.cycles)) {
    v.instructions = v.cycles = -1;
    return v;
  }
  if (std::strcmp(scope_, "user") == 0) {
    v.user_instructions = v.instructions;
    v.user_cycles = v.cycles;
  } else if (!ReadPair(user_group_fd_, &v.user_instructions, &v.user_cycles)) {
    v.user_instructions = v.user_cycles = -1;
  }
  return v;
}

}  // namespace jp::demo
