#include "hook/asymmetric_fence.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "hook/android_api.h"

namespace jp::hook {
namespace {

// Android runs apps under a seccomp filter that kills the process (SIGSYS) on a syscall outside its
// allowlist, and membarrier entered bionic's app allowlist only with Android 10 (API 29): on 8.x it is
// not there at all (libc/SECCOMP_WHITELIST.TXT of O). Probing it there would be the crash we must never
// cause, so older releases never make the call and use full fences.
// The device's API level when it is below 29 (membarrier outside the allowlist), else -1.
int ApiTooOldForMembarrier() {
#if defined(__ANDROID__)
  // The device's own level (ro.build.version.sdk), not the config's layout override: the filter is the
  // device's. Unknown (0) counts as too old.
  const int api = ResolveAndroidApi(0).level;
  if (api < 29) return api;
#endif
  return -1;
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
    const int api = ApiTooOldForMembarrier();
    const long cmds = api < 0 ? Membarrier(MEMBARRIER_CMD_QUERY) : -2;
    if (cmds == -2) {
      failure_api_ = api;
      failure_ = "membarrier not used below Android 10: outside the app seccomp allowlist";
    } else if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
      failure_errno_ = cmds < 0 ? errno : 0;
      failure_ = cmds < 0 ? "membarrier private expedited unavailable" :
                            "membarrier private expedited unavailable: not supported by this kernel";
    } else if (Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
      failure_errno_ = errno;
      failure_ = "membarrier registration refused";
    } else {
      // The hot side may drop its fence only once the rare side is sure to use membarrier: published
      // here, and a hot path that still reads false just pays a fence it did not need.
      expedited_.store(true, std::memory_order_seq_cst);
      return true;
    }
  }
  if (why) {
    if (failure_ == nullptr) {
      *why = "membarrier failed after registration; using full fences";
    } else {
      *why = failure_;
      if (failure_api_ >= 0) *why += " (API " + std::to_string(failure_api_) + ")";
      if (failure_errno_ != 0) *why += std::string(": ") + std::strerror(failure_errno_);
      *why += "; using full fences";
    }
  }
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
