// Finished events on their way to the timeline: a single-producer ring the main thread pushes into at
// FINISHED (plain stores, no locked instruction, no checksum, no shared-timeline line), drained by the
// watchdog, which turns each item into its input.key / input.motion record and appends it.
//
// Why: the timeline is shared by every thread, so its append takes a locked instruction, packs and hashes
// an 80-byte record, and touches the ring's head and slot lines, which the two syscalls of a round trip
// have pushed out of the near caches; it was the largest part of a round trip's cost left on the app's
// thread (BENCHMARKS.md, "Input monitor"). The looper's poll source moved its records off the main thread
// the same way (looper/poll_timing.cc).
//
// Producer: one thread at a time, the InFlightGate's exclusive owner (the tracker guarantees it); every
// other thread appends its record itself. Push returns false when the ring is full: the caller then
// appends the record itself, so nothing is ever lost to a starved drain. The producer's words (the head
// and the tail it saw last) are not in the ring: the ring's user keeps them (FinishedRing::Producer)
// beside its own per-event words, so that a push touches only the slot's line besides (the input
// tracker's line A; a line of the ring's own for them was one more miss per FINISHED in situ), and every
// call that reads the head takes them.
// Consumers: Drain, serialised by the ring's own mutex (the watchdog's deadline callbacks, Disable, tests;
// never the producer), appends an item before the tail moves past it. Pending copies the items not drained
// yet, from any thread, without a lock and without stopping the producer: a reader that takes Pending
// first and then the timeline's snapshot finds every item in one of the two (hook::InFlightProvider).
#ifndef JANKPROBE_INPUT_FINISHED_RING_H_
#define JANKPROBE_INPUT_FINISHED_RING_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "input/pending_events.h"

namespace jp::input {

// What the record of a finished event is built from (InputTracker::RecordOf), as the finish side has it.
struct FinishedEvent {
  uint64_t read_ns = 0;
  uint64_t dur_ns = 0;
  int64_t event_time_ns = 0;
  int64_t consume_time_ns = 0;  // 0: the release sends none (or fd mode)
  EventIdentWords ident{};      // fd, seq, tid, type, fd_mode, action_index (IdentViewOf)
};

class FinishedRing {
 public:
  // 128 events: at a touch screen's 120-240 events/s a drain period (200 ms) fills 24-48 of them, under
  // half; one line per slot, 8 KB in all.
  static constexpr uint32_t kSlots = 128;

  // The producer's words, kept by the ring's user (one per ring, never shared with another ring).
  struct Producer {
    std::atomic<uint64_t> head{0};  // items pushed; written by the producer, read by any thread
    uint64_t cached_tail = 0;       // the tail the producer saw last (producer only)
  };

  // Producer only. False (nothing stored) when the ring is full.
  bool Push(Producer& p, const FinishedEvent& e) noexcept {
    if (!HasRoom(p)) return false;
    PushChecked(p, e);
    return true;
  }
  // Push in two steps, for a producer that builds the item from memory: the full check comes before the
  // item's loads. HasRoom: producer only; PushChecked only after HasRoom returned true.
  // The consumer's tail is read only when the ring looks full by the cached one (inline: an out-of-line
  // RefreshTail was one more function for the ordered text, lib/startup_order.ld, to name). Acquire:
  // pairs with the drain's release, so the drain is done reading the slots it freed.
  bool HasRoom(Producer& p) noexcept {
    const uint64_t head = p.head.load(std::memory_order_relaxed);
    if (__builtin_expect(head - p.cached_tail < kSlots, 1)) return true;
    p.cached_tail = tail_.load(std::memory_order_acquire);
    return head - p.cached_tail < kSlots;
  }
  inline void PushChecked(Producer& p, const FinishedEvent& e) noexcept;
  // The owner's push straight from the pending slot, for the input tracker's fast path: Head() once,
  // HasRoomAt(head) (HasRoom for a head already loaded), then PushFrom(head, ...), which copies the slot's
  // fields one load and one store at a time (a FinishedEvent built first would hold all six in registers
  // at once: the stores may alias the slot, so no load can move past one).
  static uint64_t Head(const Producer& p) noexcept { return p.head.load(std::memory_order_relaxed); }
  // The consumer's tail is read here too when the cached one says full, rather than by the caller's
  // general path: the cached tail falls a whole ring behind once per kSlots pushes, and that push taken
  // the general way (its cold code and lines) showed in situ as Finish, Sent and SentOwnerGeneral on the
  // demo's main thread (BENCHMARKS.md, session 9 input9). One line more (the tail's) once per kSlots.
  bool HasRoomAt(Producer& p, uint64_t head) noexcept {
    if (__builtin_expect(head - p.cached_tail < kSlots, 1)) return true;
    p.cached_tail = tail_.load(std::memory_order_acquire);
    return head - p.cached_tail < kSlots;
  }
  // finish_ns: the FINISHED's time; the item's duration is finish_ns - e.read_ns, 0 if the clock read
  // went backwards (computed by Load, off the app's thread).
  inline void PushFrom(Producer& p, uint64_t head, const PendingEvent& e, uint64_t finish_ns,
                       int64_t consume_time_ns) noexcept;

  // Calls sink(const FinishedEvent&) for every item pushed and not drained yet, oldest first, and then
  // frees their slots. sink must not push (it runs under the drain mutex). Returns how many it drained.
  template <typename Sink>
  uint64_t Drain(const Producer& p, Sink&& sink);

  // Copies of the items not drained yet, appended to *out, oldest first. Any thread; never blocks. An item
  // a concurrent drain takes meanwhile may be left out: it was appended to the timeline before it left
  // the ring. Inline: its caller (InputTracker::LendFinished) has its place in the ordered text; an
  // out-of-line copy under a new signature would land outside it.
  inline void Pending(const Producer& p, std::vector<FinishedEvent>* out) const;

  static uint64_t pushed(const Producer& p) noexcept { return p.head.load(std::memory_order_acquire); }
  uint64_t drained() const noexcept { return tail_.load(std::memory_order_acquire); }

 private:
  // One line per slot: the producer's stores for one event fill one line. The finish time rather than
  // the duration: the owner's path stores what it has (Load takes the difference).
  struct alignas(64) Slot {
    uint64_t read_ns, finish_ns;
    int64_t event_time_ns, consume_time_ns;
    uint64_t ident[2];
  };
  static FinishedEvent Load(const Slot& s) noexcept;

  // The consumer's line (the producer reads it only in RefreshTail).
  alignas(64) std::atomic<uint64_t> tail_{0};
  std::mutex drain_mu_;
  Slot slots_[kSlots];
};

inline void FinishedRing::PushChecked(Producer& p, const FinishedEvent& e) noexcept {
  const uint64_t head = p.head.load(std::memory_order_relaxed);
  // Relaxed atomic stores (plain stores in the machine code): Pending may copy a slot while it is being
  // rewritten, and throws such a copy away by the tail it reads afterwards.
  Slot& s = slots_[head % kSlots];
  __atomic_store_n(&s.read_ns, e.read_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s.finish_ns, e.read_ns + e.dur_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s.event_time_ns, e.event_time_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s.consume_time_ns, e.consume_time_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s.ident[0], e.ident.w[0], __ATOMIC_RELAXED);
  __atomic_store_n(&s.ident[1], e.ident.w[1], __ATOMIC_RELAXED);
  p.head.store(head + 1, std::memory_order_release);
}

inline void FinishedRing::PushFrom(Producer& p, uint64_t head, const PendingEvent& e, uint64_t finish_ns,
                                   int64_t consume_time_ns) noexcept {
  Slot& s = slots_[head % kSlots];
  __atomic_store_n(&s.read_ns, e.read_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s.finish_ns, finish_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s.event_time_ns, e.event_time_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&s.consume_time_ns, consume_time_ns, __ATOMIC_RELAXED);
  const EventIdentWords ident = IdentWordsOf(e);
  __atomic_store_n(&s.ident[0], ident.w[0], __ATOMIC_RELAXED);
  __atomic_store_n(&s.ident[1], ident.w[1], __ATOMIC_RELAXED);
  p.head.store(head + 1, std::memory_order_release);
}

inline void FinishedRing::Pending(const Producer& p, std::vector<FinishedEvent>* out) const {
  // The producer rewrites slot i only for item i + kSlots, once the tail has passed i. So a slot copied
  // while the tail (read again after the copies) is still at or below its index was not being rewritten;
  // one below it was drained, its record appended before the tail moved (the caller's later timeline
  // snapshot has it).
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  const uint64_t head = p.head.load(std::memory_order_acquire);
  if (head <= tail) return;
  const uint64_t n = head - tail < kSlots ? head - tail : kSlots;
  std::vector<FinishedEvent> copy(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) copy[static_cast<size_t>(i)] = Load(slots_[(tail + i) % kSlots]);
  std::atomic_thread_fence(std::memory_order_acquire);  // the copies before the second tail read
  const uint64_t tail_after = tail_.load(std::memory_order_relaxed);
  for (uint64_t i = tail_after > tail ? tail_after - tail : 0; i < n; ++i) out->push_back(copy[static_cast<size_t>(i)]);
}

template <typename Sink>
uint64_t FinishedRing::Drain(const Producer& p, Sink&& sink) {
  std::lock_guard<std::mutex> lock(drain_mu_);
  uint64_t tail = tail_.load(std::memory_order_relaxed);
  const uint64_t head = p.head.load(std::memory_order_acquire);
  const uint64_t n = head - tail;
  for (; tail != head; ++tail) sink(Load(slots_[tail % kSlots]));
  // After every sink call: a reader that finds an item gone from the ring finds it in the timeline.
  tail_.store(tail, std::memory_order_release);
  return n;
}

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_FINISHED_RING_H_
