// A statistics counter bumped on the hot path: the InFlightGate owner thread adds to its own word with a
// plain load + store (no locked instruction; nobody else writes that word), every other thread with a
// relaxed fetch_add on a second word. Readers add the two.
#ifndef JANKPROBE_HOOK_SPLIT_COUNTER_H_
#define JANKPROBE_HOOK_SPLIT_COUNTER_H_

#include <atomic>
#include <cstdint>

namespace jp::hook {

class SplitCounter {
 public:
  void Add(bool owner) noexcept {
    if (owner) {
      owner_.store(owner_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      shared_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  uint64_t Load() const noexcept {
    return owner_.load(std::memory_order_relaxed) + shared_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> owner_{0};
  std::atomic<uint64_t> shared_{0};
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_SPLIT_COUNTER_H_
