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

}  // namespace jp::input
