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
  // Stores only on a change: on a channel that always validates (every event) the slot stays clean.
  if (s->valid.load(std::memory_order_relaxed) == 0) s->valid.store(1, std::memory_order_relaxed);
  if (s->invalid.load(std::memory_order_relaxed) != 0) s->invalid.store(0, std::memory_order_relaxed);
  uint32_t was = 1;
  // A layout that decodes after all: the fd goes back to exact (fd, seq) matching.
  if (s->fd_mode.load(std::memory_order_relaxed) && s->fd_mode.compare_exchange_strong(was, 0)) {
    fd_mode_count_.fetch_sub(1, std::memory_order_relaxed);
  }
}

bool ChannelTable::NoteInvalid(int fd) noexcept {
  Slot* s = Find(fd, true);
  if (s == nullptr) return false;
  if (s->fd_mode.load(std::memory_order_relaxed)) return true;
  if (s->valid.load(std::memory_order_relaxed)) return false;  // a real channel with one bad packet
  if (s->invalid.fetch_add(1, std::memory_order_relaxed) + 1 < kInvalidBeforeFdMode) return false;
  uint32_t was = 0;
  if (s->fd_mode.compare_exchange_strong(was, 1)) fd_mode_count_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool ChannelTable::IsFdMode(int fd) const noexcept {
  const Slot* s = Find(fd);
  return s != nullptr && s->fd_mode.load(std::memory_order_relaxed) != 0;
}

void ChannelTable::Clear() noexcept {
  for (Slot& s : slots_) {
    s.valid.store(0, std::memory_order_relaxed);
    s.invalid.store(0, std::memory_order_relaxed);
    s.fd_mode.store(0, std::memory_order_relaxed);
    s.fd.store(-1, std::memory_order_release);
  }
  fd_mode_count_.store(0, std::memory_order_relaxed);
}

}  // namespace jp::input
