// This process's threads as the kernel shows them in /proc/self/task: the ground truth tests use about
// another thread (is it blocked, how often did it sleep, how long did it wait for a CPU, which threads
// carry our names), without asking the code under test. Header-only; Linux.
#ifndef JANKPROBE_TESTS_PROC_THREADS_H_
#define JANKPROBE_TESTS_PROC_THREADS_H_

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace jp::testing {

inline std::string TaskPath(pid_t tid, const char* file) {
  return "/proc/self/task/" + std::to_string(tid) + "/" + file;
}

// Whether the thread still exists (its /proc entry goes once it has exited and been joined or reaped).
inline bool TaskExists(pid_t tid) {
  struct stat st;
  return stat(("/proc/self/task/" + std::to_string(tid)).c_str(), &st) == 0;
}

// The kernel tids of this process's threads.
inline std::vector<pid_t> ThreadIds() {
  std::vector<pid_t> out;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10)));
    }
    closedir(d);
  }
  return out;
}

// The tids of the threads whose name (comm) is exactly `name`.
inline std::vector<pid_t> ThreadsNamed(const std::string& name) {
  std::vector<pid_t> out;
  for (pid_t tid : ThreadIds()) {
    std::ifstream comm(TaskPath(tid, "comm"));
    std::string line;
    if (std::getline(comm, line) && line == name) out.push_back(tid);
  }
  return out;
}

// The thread's state letter from stat ('R' running, 'S' blocked in the kernel, ...); 0 if unreadable.
inline char ThreadState(pid_t tid) {
  std::ifstream in(TaskPath(tid, "stat"));
  std::string line;
  std::getline(in, line);
  const size_t paren = line.rfind(')');  // the name in parentheses may hold anything, spaces included
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : 0;
}

// voluntary_ctxt_switches from status (one per sleep the thread went into); UINT64_MAX if unreadable.
inline uint64_t VoluntarySwitches(pid_t tid) {
  std::ifstream in(TaskPath(tid, "status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::strtoull(line.c_str() + 24, nullptr, 10);
  }
  return UINT64_MAX;
}

// How long the thread has waited on a run queue while runnable (schedstat's second field, ns): the
// lateness the host caused. 0 when the kernel does not keep the figure.
inline uint64_t RunDelayNs(pid_t tid) {
  std::ifstream in(TaskPath(tid, "schedstat"));
  uint64_t on_cpu = 0, waited = 0;
  if (!(in >> on_cpu >> waited)) return 0;
  return waited;
}

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_PROC_THREADS_H_
