// What we know per socket fd of libinput.so: whether a packet of the configured layout ever validated on
// it, and whether it has been switched to per-fd timing because reads of InputMessage size keep failing
// validation there (an OEM or future layout we do not know: time it, never guess its fields).
// Fixed table, lock-free, written from the hooked paths.
#ifndef JANKPROBE_INPUT_CHANNEL_TABLE_H_
#define JANKPROBE_INPUT_CHANNEL_TABLE_H_

#include <atomic>
#include <cstdint>

namespace jp::input {

class ChannelTable {
 public:
  static constexpr int kSlots = 64;
  // Reads of InputMessage size that fail validation, with no valid packet ever, before an fd is fd-timed.
  static constexpr uint32_t kInvalidBeforeFdMode = 4;

  // A packet validated on fd. Inline first look: on a channel that always validates (every event) its
  // slot is usually the first probed and already says so (one word: valid, nothing else); anything else
  // is NoteValidSlow.
  void NoteValid(int fd) noexcept {
    if (__builtin_expect(!IsCleanValid(fd), 0)) NoteValidSlow(fd);
  }
  // True when NoteValid(fd) has nothing to do (that first look; false may still be a no-op).
  bool IsCleanValid(int fd) const noexcept {
    if (fd < 0) return false;
    const Slot& s = slots_[static_cast<uint32_t>(fd) & (kSlots - 1)];
    return s.fd.load(std::memory_order_acquire) == fd && s.state.load(std::memory_order_relaxed) == kValid;
  }
  // A read of InputMessage size failed validation on fd. True when fd is (now) fd-timed.
  bool NoteInvalid(int fd) noexcept;
  bool IsFdMode(int fd) const noexcept;
  // Any fd in fd mode (lets the hot path skip the lookup in the usual case).
  bool AnyFdMode() const noexcept { return fd_mode_count_.load(std::memory_order_relaxed) != 0; }
  int FdModeCount() const noexcept { return static_cast<int>(fd_mode_count_.load(std::memory_order_relaxed)); }
  void Clear() noexcept;

 private:
  // A slot's state in one word, so that the hot path's check is one load: kValid (a packet validated),
  // kFdMode, and the count of failed reads since the last valid one (kInvalidUnit each).
  static constexpr uint32_t kValid = 1, kFdMode = 2, kInvalidUnit = 1u << 8;
  struct Slot {
    std::atomic<int32_t> fd{-1};
    std::atomic<uint32_t> state{0};
  };
  void NoteValidSlow(int fd) noexcept;
  Slot* Find(int fd, bool create) noexcept;
  const Slot* Find(int fd) const noexcept;

  Slot slots_[kSlots];
  std::atomic<uint32_t> fd_mode_count_{0};
};

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_CHANNEL_TABLE_H_
