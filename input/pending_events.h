// Events the app has read and not finished yet, keyed by (fd, seq): a fixed table written from the hooked
// recv/send paths and read by the watchdog thread, with no lock and no allocation.
//
// Each slot has one state word: generation << 8 | flags | state. Slot life: kFree -> kClaimed (the reader
// fills it) -> kPending -> kFinishing (the FINISHED send took it) -> freed right away when it was quick, or
// kFinished until the watchdog thread has reported it. The fields below the word are written only by the
// slot's holder before it publishes the next state (release) and stay constant until the slot is freed;
// the generation moves on at every free, so a CAS or an id taken for an earlier occupant fails or is
// recognised as stale.
//
// Who writes the word, and why most writes need no read-modify-write:
// - claim: the owner thread (InFlightGate) claims in the first kOwnerSlots with plain stores, since no one
//   else ever claims there; other threads (and the owner when its part is full) claim in the rest by CAS;
// - take: a CAS from kPending, because the watchdog may at the same moment CAS a flag onto the slot (it
//   saw it overdue) and exactly one of the two must win: the finisher then sees the flag or the watchdog
//   sees the slot gone;
// - publish, mark finished, free: plain release stores by the holder (nobody else writes a slot that is
//   claimed, finishing or finished).
// The watchdog only reads slots it does not hold, seqlock-style: fields copied, then the word re-checked
// (or CASed), and a copy whose word changed meanwhile is thrown away.
#ifndef JANKPROBE_INPUT_PENDING_EVENTS_H_
#define JANKPROBE_INPUT_PENDING_EVENTS_H_

#include <atomic>
#include <cstdint>

#include "input/input_message.h"

namespace jp::input {

enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kPending = 2, kFinishing = 3, kFinished = 4 };
// Set by the watchdog on a kPending slot (CAS), read by whoever takes it.
enum SlotFlags : uint32_t { kLagFired = 1u << 4, kAnrReported = 2u << 4, kStackCaptured = 4u << 4 };
constexpr uint32_t kStateMask = 0xFu;
constexpr uint32_t kFlagMask = 0xF0u;
constexpr int kGenerationShift = 8;

inline SlotState StateOf(uint32_t word) { return static_cast<SlotState>(word & kStateMask); }
inline uint32_t GenerationOf(uint32_t word) { return word >> kGenerationShift; }

struct alignas(64) PendingEvent {
  std::atomic<uint32_t> word{kFree};
  // Reader-side fields (constant while the slot is taken).
  int32_t fd = -1;
  uint32_t seq = 0;
  uint32_t tid = 0;
  int32_t action = 0;
  uint32_t pointer_count = 0;
  EventType type = EventType::kKey;
  bool fd_mode = false;
  int8_t action_index = -1;
  int64_t event_time_ns = 0;
  uint64_t read_ns = 0;
  // Finisher-side fields (written before kFinished is published).
  int64_t consume_time_ns = 0;
  bool handled = false;
  uint64_t finish_ns = 0;
};

class PendingEvents {
 public:
  static constexpr int kSlots = 128;
  static constexpr int kOwnerSlots = 64;  // claimed by the owner thread only

  // Takes a free slot (state kClaimed) for a new event, or -1 when the table is full. owner: the caller
  // is the InFlightGate owner.
  int Claim(bool owner, int fd, uint32_t seq) noexcept;
  void Publish(int index) noexcept { SetState(index, kPending); }
  // Takes the pending event (fd, seq) for finishing (kPending -> kFinishing), or -1 if there is none.
  // *flags: what the watchdog had marked on it.
  int Take(int fd, uint32_t seq, uint32_t* flags) noexcept;
  // fd-mode: the pending fd-timed read of fd, taken for finishing; or -1.
  int TakeFdMode(int fd, uint32_t* flags) noexcept;
  // True if fd already has an fd-timed read pending.
  bool HasFdMode(int fd) const noexcept;
  void MarkFinished(int index) noexcept { SetState(index, kFinished); }
  // Frees a slot its holder holds (the generation moves on).
  void Free(int index) noexcept;
  // Watchdog: adds flags to a slot still exactly in state `word` (same generation, kPending).
  bool AddFlags(int index, uint32_t word, uint32_t flags) noexcept;

  PendingEvent& at(int index) noexcept { return slots_[index]; }
  const PendingEvent& at(int index) const noexcept { return slots_[index]; }
  uint32_t Word(int index) const noexcept { return slots_[index].word.load(std::memory_order_acquire); }
  int Occupied() const noexcept;

 private:
  static uint32_t Hash(int fd, uint32_t seq) noexcept {
    return static_cast<uint32_t>(fd) * 0x9E3779B1u ^ seq * 0x85EBCA77u;
  }
  void SetState(int index, SlotState st) noexcept {
    std::atomic<uint32_t>& w = slots_[index].word;
    w.store((w.load(std::memory_order_relaxed) & ~kStateMask) | st, std::memory_order_release);
  }
  int ClaimShared() noexcept;
  int TakeIf(int index, uint32_t seen, uint32_t* flags) noexcept;

  PendingEvent slots_[kSlots];
};

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_PENDING_EVENTS_H_
