#include "input/finished_ring.h"

namespace jp::input {

static_assert((FinishedRing::kSlots & (FinishedRing::kSlots - 1)) == 0, "slot index by mask");

FinishedEvent FinishedRing::Load(const Slot& s) noexcept {
  FinishedEvent e;
  e.read_ns = __atomic_load_n(&s.read_ns, __ATOMIC_RELAXED);
  const uint64_t finish = __atomic_load_n(&s.finish_ns, __ATOMIC_RELAXED);
  e.dur_ns = finish > e.read_ns ? finish - e.read_ns : 0;
  e.event_time_ns = __atomic_load_n(&s.event_time_ns, __ATOMIC_RELAXED);
  e.consume_time_ns = __atomic_load_n(&s.consume_time_ns, __ATOMIC_RELAXED);
  e.ident.w[0] = __atomic_load_n(&s.ident[0], __ATOMIC_RELAXED);
  e.ident.w[1] = __atomic_load_n(&s.ident[1], __ATOMIC_RELAXED);
  return e;
}

bool FinishedRing::RefreshTail(Producer& p, uint64_t head) const noexcept {
  // Acquire: pairs with the drain's release, so the drain is done reading the slots it freed.
  p.cached_tail = tail_.load(std::memory_order_acquire);
  return head - p.cached_tail < kSlots;
}

void FinishedRing::Pending(const Producer& p, std::vector<FinishedEvent>* out) const {
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

}  // namespace jp::input
