#include "input/pending_events.h"

namespace jp::input {

static_assert((PendingEvents::kOwnerSlots & (PendingEvents::kOwnerSlots - 1)) == 0, "owner part: a power of two");

int PendingEvents::ClaimSearch(bool owner, int first) noexcept {
  if (owner) {
    const uint32_t start = static_cast<uint32_t>(first);
    for (int i = 1; i < kOwnerSlots; ++i) {  // the first probe (i = 0) was Claim's
      const int index = static_cast<int>((start + static_cast<uint32_t>(i)) & (kOwnerSlots - 1));
      std::atomic<uint32_t>& w = slots_[index].word;
      const uint32_t cur = w.load(std::memory_order_acquire);  // pairs with Free's release
      if (StateOf(cur) != kFree) continue;
      w.store((cur & ~kStateMask) | kClaimed, std::memory_order_relaxed);
      return index;
    }
  }
  return ClaimShared();
}

int PendingEvents::ClaimShared() noexcept {
  for (int index = kOwnerSlots; index < kSlots; ++index) {
    std::atomic<uint32_t>& w = slots_[index].word;
    uint32_t cur = w.load(std::memory_order_relaxed);
    if (StateOf(cur) != kFree) continue;
    if (w.compare_exchange_strong(cur, (cur & ~kStateMask) | kClaimed, std::memory_order_acquire)) {
      return index;
    }
  }
  return -1;
}

int PendingEvents::TakeSearch(bool owner, int fd, uint32_t seq) noexcept {
  // All probes again, the first included: Take's first look may have lost a CAS race, and the slot's
  // occupant may have changed since.
  const uint32_t start = Hash(fd, seq);
  auto try_take = [&](bool plain, int index) {
    const PendingEvent& s = slots_[index];
    const uint32_t seen = s.word.load(std::memory_order_acquire);
    if (StateOf(seen) != kPending || s.fd != fd || s.seq != seq || s.fd_mode) return false;
    return TakeIf(plain, index, seen) >= 0;
  };
  for (int i = 0; i < kOwnerSlots; ++i) {
    const int index = static_cast<int>((start + static_cast<uint32_t>(i)) & (kOwnerSlots - 1));
    if (try_take(owner, index)) return index;
  }
  for (int index = kOwnerSlots; index < kSlots; ++index) {
    if (try_take(false, index)) return index;
  }
  return -1;
}

int PendingEvents::TakeFdMode(bool owner, int fd) noexcept {
  for (int index = 0; index < kSlots; ++index) {
    const PendingEvent& s = slots_[index];
    const uint32_t seen = s.word.load(std::memory_order_acquire);
    if (StateOf(seen) != kPending || !s.fd_mode || s.fd != fd) continue;
    if (TakeIf(owner && index < kOwnerSlots, index, seen) >= 0) return index;
  }
  return -1;
}

bool PendingEvents::HasFdMode(int fd) const noexcept {
  for (const PendingEvent& s : slots_) {
    if (StateOf(s.word.load(std::memory_order_acquire)) == kPending && s.fd_mode && s.fd == fd) return true;
  }
  return false;
}

int PendingEvents::Occupied() const noexcept {
  int n = 0;
  for (const PendingEvent& s : slots_) n += StateOf(s.word.load(std::memory_order_acquire)) != kFree;
  return n;
}

}  // namespace jp::input
