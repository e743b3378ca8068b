// A store-load fence split unevenly between two sides: the hot side (the app's thread inside a proxy, per
// event) pays only a compiler barrier, the rare side (Disable, a watchdog callback that found the table
// empty) pays a membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) syscall, which runs a full memory barrier on
// every CPU currently running a thread of this process. Together they order "hot side stores X, then loads
// Y" against "rare side stores Y, then loads X" exactly like a full fence on both sides would (Dekker), so
// at least one side sees the other's store.
//
// Why: a full fence (or a locked instruction) costs ~8 ns on the hot path per use, and the hot path would
// need it twice per event; the rare side runs a few times per second at most.
//
// Where membarrier is missing (kernels before 4.14, a seccomp policy that denies it, registration refused)
// both sides fall back to std::atomic_thread_fence(seq_cst): correct, just dearer on the hot side.
#ifndef JANKPROBE_HOOK_ASYMMETRIC_FENCE_H_
#define JANKPROBE_HOOK_ASYMMETRIC_FENCE_H_

#include <atomic>
#include <string>

namespace jp::hook {

class AsymmetricFence {
 public:
  // Control path, before any Light()/Heavy() that must pair: registers the process for expedited
  // membarrier once. False (and *why) when it is unavailable; the fence then works in fallback mode.
  bool Init(std::string* why);

  // Hot side: between the store and the load that must not be reordered.
  void Light() const noexcept {
    if (expedited_.load(std::memory_order_relaxed)) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }
  // Rare side: between its store and its load. Never fails: a membarrier error falls back to a fence
  // (and switches the hot side to fences from then on).
  void Heavy() noexcept;

  bool expedited() const noexcept { return expedited_.load(std::memory_order_relaxed); }

  constexpr AsymmetricFence() = default;

 private:
  // Small and constant-initialised (no std::string): an owner can keep its fence in the cache line of the
  // words it orders (InFlightGate's owner line), so the hot side's mode test is no miss of its own.
  std::atomic<bool> expedited_{false};
  std::atomic<bool> tried_{false};
  // Why Init failed (control path only): the reason's fixed text, the errno beside it (0: none) and, for
  // the Android release check, the API level. The message is built when asked for.
  int failure_errno_ = 0;
  int failure_api_ = -1;
  const char* failure_ = nullptr;
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_ASYMMETRIC_FENCE_H_
