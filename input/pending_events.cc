#include "input/pending_events.h"

namespace jp::input {

int PendingEvents::Claim(int fd, uint32_t seq) noexcept {
  const uint32_t start = Start(fd, seq);
  for (int i = 0; i < kSlots; ++i) {
    const int index = static_cast<int>((start + static_cast<uint32_t>(i)) & (kSlots - 1));
    PendingEvent& s = slots_[index];
    uint32_t expected = kFree;
    if (s.state.load(std::memory_order_relaxed) != kFree) continue;
    if (s.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
      s.flags.store(0, std::memory_order_relaxed);
      s.finish_ns.store(0, std::memory_order_relaxed);
      return index;
    }
  }
  return -1;
}

int PendingEvents::Take(int fd, uint32_t seq) noexcept {
  const uint32_t start = Start(fd, seq);
  for (int i = 0; i < kSlots; ++i) {
    const int index = static_cast<int>((start + static_cast<uint32_t>(i)) & (kSlots - 1));
    PendingEvent& s = slots_[index];
    uint32_t st = s.state.load(std::memory_order_acquire);
    if (st != kPending || s.fd != fd || s.seq != seq || s.fd_mode) continue;
    if (s.state.compare_exchange_strong(st, kFinishing, std::memory_order_acq_rel)) return index;
  }
  return -1;
}

int PendingEvents::TakeFdMode(int fd) noexcept {
  for (int index = 0; index < kSlots; ++index) {
    PendingEvent& s = slots_[index];
    uint32_t st = s.state.load(std::memory_order_acquire);
    if (st != kPending || !s.fd_mode || s.fd != fd) continue;
    if (s.state.compare_exchange_strong(st, kFinishing, std::memory_order_acq_rel)) return index;
  }
  return -1;
}

bool PendingEvents::HasFdMode(int fd) const noexcept {
  for (const PendingEvent& s : slots_) {
    if (s.state.load(std::memory_order_acquire) == kPending && s.fd_mode && s.fd == fd) return true;
  }
  return false;
}

void PendingEvents::Free(int index) noexcept {
  PendingEvent& s = slots_[index];
  s.generation.fetch_add(1, std::memory_order_relaxed);
  s.state.store(kFree, std::memory_order_release);
}

int PendingEvents::Occupied() const noexcept {
  int n = 0;
  for (const PendingEvent& s : slots_) n += s.state.load(std::memory_order_acquire) != kFree;
  return n;
}

}  // namespace jp::input
