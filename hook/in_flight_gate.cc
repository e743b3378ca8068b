#include "hook/in_flight_gate.h"

#include <time.h>

namespace jp::hook {

void InFlightGate::ProposeOwner(uint32_t tid) noexcept {
  uint32_t none = 0;
  if (tid != 0) owner_tid_.compare_exchange_strong(none, tid, std::memory_order_relaxed);
}

void InFlightGate::Drain() noexcept {
  fence_->Heavy();
  // Whoever got in before the flag fell is short (no blocking call inside the tracker).
  while (owner_depth_.load(std::memory_order_seq_cst) != 0 || shared_.load(std::memory_order_seq_cst) != 0) {
    timespec ts{0, 100000};
    nanosleep(&ts, nullptr);
  }
}

}  // namespace jp::hook
