#include "input/pending_events.h"

#include "input/hot_path.h"

namespace jp::input {

static_assert((PendingEvents::kOwnerSlots & (PendingEvents::kOwnerSlots - 1)) == 0, "owner part: a power of two");

JP_INPUT_HOT int PendingEvents::Claim(bool owner, int fd) noexcept {
  if (owner) {
    // Probing from the key's hash keeps Take's search short: the event is usually in the first slot.
    const uint32_t start = Hash(fd);
    for (int i = 0; i < kOwnerSlots; ++i) {
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

JP_INPUT_HOT int PendingEvents::TakeIf(bool plain, int index, uint32_t seen) noexcept {
  std::atomic<uint32_t>& w = slots_[index].word;
  const uint32_t taken = (seen & ~kStateMask) | kFinishing;
  if (plain) {
    w.store(taken, std::memory_order_relaxed);
    return index;
  }
  // The fields were checked under `seen`: take the slot only while it holds that same occupant.
  uint32_t cur = seen;
  return w.compare_exchange_strong(cur, taken, std::memory_order_acq_rel) ? index : -1;
}

JP_INPUT_HOT int PendingEvents::Take(bool owner, int fd, uint32_t seq) noexcept {
  const uint32_t start = Hash(fd);
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

JP_INPUT_HOT void PendingEvents::Free(int index) noexcept {
  std::atomic<uint32_t>& w = slots_[index].word;
  const uint32_t next_generation = GenerationOf(w.load(std::memory_order_relaxed)) + 1;
  w.store(next_generation << kGenerationShift | kFree, std::memory_order_release);
}

int PendingEvents::Occupied() const noexcept {
  int n = 0;
  for (const PendingEvent& s : slots_) n += StateOf(s.word.load(std::memory_order_acquire)) != kFree;
  return n;
}

}  // namespace jp::input
