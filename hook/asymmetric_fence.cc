#include "hook/asymmetric_fence.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "hook/android_api.h"

namespace jp::hook {
namespace {

// Android runs apps under a seccomp filter that kills the process (SIGSYS) on a syscall outside its
// allowlist, and membarrier entered bionic's app allowlist only with Android 10 (API 29): on 8.x it is
// not there at all (libc/SECCOMP_WHITELIST.TXT of O). Probing it there would be the crash we must never
// cause, so older releases never make the call and use full fences.
bool MembarrierAllowed(std::string* why) {
#if defined(__ANDROID__)
  // The device's own level (ro.build.version.sdk), not the config's layout override: the filter is the
  // device's. Unknown (0) counts as too old.
  const int api = ResolveAndroidApi(0).level;
  if (api < 29) {
    *why = "membarrier not used below Android 10 (API " + std::to_string(api) +
           "): outside the app seccomp allowlist; using full fences";
    return false;
  }
#else
  (void)why;
#endif
  return true;
}

long Membarrier(int cmd) {
#if defined(SYS_membarrier)
  return syscall(SYS_membarrier, cmd, 0, 0);
#else
  (void)cmd;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

bool AsymmetricFence::Init(std::string* why) {
  if (expedited_.load(std::memory_order_acquire)) return true;
  if (!tried_.exchange(true)) {
    std::string not_allowed;
    const long cmds = MembarrierAllowed(&not_allowed) ? Membarrier(MEMBARRIER_CMD_QUERY) : -2;
    if (cmds == -2) {
      failure_ = not_allowed;
    } else if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
      failure_ = std::string("membarrier private expedited unavailable: ") +
                 (cmds < 0 ? std::strerror(errno) : "not supported by this kernel") + "; using full fences";
    } else if (Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
      failure_ = std::string("membarrier registration refused: ") + std::strerror(errno) + "; using full fences";
    } else {
      // The hot side may drop its fence only once the rare side is sure to use membarrier: published
      // here, and a hot path that still reads false just pays a fence it did not need.
      expedited_.store(true, std::memory_order_seq_cst);
      return true;
    }
  }
  if (why) *why = failure_.empty() ? "membarrier failed after registration; using full fences" : failure_;
  return false;
}

void AsymmetricFence::Heavy() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!expedited_.load(std::memory_order_relaxed)) return;
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // membarrier(2) lists no error for a registered process; should one come anyway, hot paths switch to
  // real fences from their next call on (the one in flight right now is the only one left unordered).
  expedited_.store(false, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace jp::hook
