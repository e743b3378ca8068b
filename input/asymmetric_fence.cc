#include "input/asymmetric_fence.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace jp::input {
namespace {

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
    const long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
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

}  // namespace jp::input
