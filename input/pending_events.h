// Events the app has read and not finished yet, keyed by (fd, seq): a fixed table written from the hooked
// recv/send paths and read by the watchdog thread, with no lock and no allocation.
//
// Slot life: kFree -> kClaimed (reader fills it) -> kPending -> kFinishing (the FINISHED send took it) ->
// freed right away when it was quick, or kFinished until the watchdog thread has reported it. Fields
// below the state words are written only by the slot's owner before it publishes the next state (release)
// and stay constant until the slot is freed; the generation changes at every free so that a deadline id
// taken for an earlier occupant is recognised as stale.
#ifndef JANKPROBE_INPUT_PENDING_EVENTS_H_
#define JANKPROBE_INPUT_PENDING_EVENTS_H_

#include <atomic>
#include <cstdint>

#include "input/input_message.h"

namespace jp::input {

enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kPending = 2, kFinishing = 3, kFinished = 4 };
enum SlotFlags : uint32_t { kLagFired = 1, kAnrReported = 2, kStackCaptured = 4 };

struct alignas(64) PendingEvent {
  std::atomic<uint32_t> state{kFree};
  std::atomic<uint32_t> generation{0};
  std::atomic<uint32_t> flags{0};
  std::atomic<uint64_t> finish_ns{0};
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
  // Finisher-side fields (written before kFinishing is left).
  int64_t consume_time_ns = 0;
  bool handled = false;
};

class PendingEvents {
 public:
  static constexpr int kSlots = 128;

  // Takes a free slot (state kClaimed) for a new event, or -1 when the table is full.
  int Claim(int fd, uint32_t seq) noexcept;
  void Publish(int index) noexcept { slots_[index].state.store(kPending, std::memory_order_release); }
  // Takes the pending event (fd, seq) for finishing (kPending -> kFinishing), or -1 if there is none.
  int Take(int fd, uint32_t seq) noexcept;
  // fd-mode: the pending fd-timed read of fd, taken for finishing; or -1.
  int TakeFdMode(int fd) noexcept;
  // True if fd already has an fd-timed read pending.
  bool HasFdMode(int fd) const noexcept;
  void MarkFinished(int index) noexcept { slots_[index].state.store(kFinished, std::memory_order_release); }
  // Frees a slot its owner holds (the generation moves on first).
  void Free(int index) noexcept;

  PendingEvent& at(int index) noexcept { return slots_[index]; }
  const PendingEvent& at(int index) const noexcept { return slots_[index]; }
  int Occupied() const noexcept;

 private:
  static uint32_t Start(int fd, uint32_t seq) noexcept {
    return (static_cast<uint32_t>(fd) * 0x9E3779B1u ^ seq * 0x85EBCA77u) & (kSlots - 1);
  }
  PendingEvent slots_[kSlots];
};

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_PENDING_EVENTS_H_
