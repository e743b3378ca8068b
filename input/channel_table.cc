#include "input/channel_table.h"

namespace jp::input {

ChannelTable::Slot* ChannelTable::Find(int fd, bool create) noexcept {
  if (fd < 0) return nullptr;
  const uint32_t start = static_cast<uint32_t>(fd) & (kSlots - 1);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = slots_[(start + static_cast<uint32_t>(i)) & (kSlots - 1)];
    int32_t cur = s.fd.load(std::memory_order_acquire);
    if (cur == fd) return &s;
    if (cur == -1) {
      if (!create) return nullptr;  // slots are never emptied while running, so fd is not further on
      if (s.fd.compare_exchange_strong(cur, fd, std::memory_order_acq_rel)) return &s;
      if (cur == fd) return &s;  // another thread claimed it for the same fd
    }
  }
  return nullptr;  // full: such an fd is simply not tracked (never fd-timed)
}

const ChannelTable::Slot* ChannelTable::Find(int fd) const noexcept {
  return const_cast<ChannelTable*>(this)->Find(fd, false);
}

void ChannelTable::NoteValidSlow(int fd) noexcept {
  Slot* s = Find(fd, true);
  if (s == nullptr) return;
  // Valid, no failed reads, and (a layout that decodes after all) back to exact (fd, seq) matching.
  // Stores only on a change: on a channel that always validates (every event) the slot stays clean.
  uint32_t cur = s->state.load(std::memory_order_relaxed);
  while (cur != kValid) {
    if (s->state.compare_exchange_weak(cur, kValid, std::memory_order_relaxed)) {
      if (cur & kFdMode) fd_mode_count_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

bool ChannelTable::NoteInvalid(int fd) noexcept {
  Slot* s = Find(fd, true);
  if (s == nullptr) return false;
  uint32_t cur = s->state.load(std::memory_order_relaxed);
  for (;;) {
    if (cur & kFdMode) return true;
    if (cur & kValid) return false;  // a real channel with one bad packet
    uint32_t next = cur + kInvalidUnit;
    if (next / kInvalidUnit >= kInvalidBeforeFdMode) next |= kFdMode;
    if (s->state.compare_exchange_weak(cur, next, std::memory_order_relaxed)) {
      if (!(next & kFdMode)) return false;
      fd_mode_count_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
}

bool ChannelTable::IsFdMode(int fd) const noexcept {
  const Slot* s = Find(fd);
  return s != nullptr && (s->state.load(std::memory_order_relaxed) & kFdMode) != 0;
}

void ChannelTable::Clear() noexcept {
  for (Slot& s : slots_) {
    s.state.store(0, std::memory_order_relaxed);
    s.fd.store(-1, std::memory_order_release);
  }
  fd_mode_count_.store(0, std::memory_order_relaxed);
}

}  // namespace jp::input
