// Lets Disable() wait until no hot path is inside the tracker any more, without a locked instruction on the
// hot path of the thread that reads the channels.
//
// One thread is the owner: the app's main thread when the plugin knows it, else the first thread through a
// proxy; it stays the owner for the life of the process (changing it while a proxy may be half way into
// Enter would let two threads believe they own it). The owner marks itself busy with a plain store and
// checks `enabled` after the hot side of an AsymmetricFence; Drain() runs the heavy side after `enabled`
// fell, so it either sees the owner busy (and waits) or the owner sees `enabled` false. Any other thread
// (a second Looper with its own channel, the watchdog's callbacks) counts itself in with a seq_cst
// fetch_add, as before. The owner flag also tells the pending table and the counters that the caller may
// write its private parts without atomic read-modify-writes.
//
// Layout: the owner's side is one cache line (owner_depth_, the fence pointer, and, for a gate built
// without an outside fence, the fence itself and the gate's own `enabled` flag; two words for the
// caller's own per-event state), so that an owner entering
// after a wait (cold caches: the app's main thread wakes hundreds of times a second) misses once, not three
// times (depth, then the pointer's line, then the fence's flag through it: a dependent second miss).
#ifndef JANKPROBE_HOOK_IN_FLIGHT_GATE_H_
#define JANKPROBE_HOOK_IN_FLIGHT_GATE_H_

#include <time.h>

#include <atomic>
#include <cstdint>

#include "hook/asymmetric_fence.h"

namespace jp::hook {

class InFlightGate {
 public:
  struct Pass {
    bool owner;   // the caller is the owner thread (counted in owner_depth_)
    bool open;    // enabled was true after entering: the caller may touch the tracker's state
    bool nested;  // the owner was already inside (a signal handler interrupted it there)
    // The caller may use the owner's private, non-atomic read-modify-writes: only the outermost owner
    // entry, since a nested one could interrupt the outer one between its load and its store.
    bool exclusive() const noexcept { return owner && !nested; }
  };

  // Ordered by an outside fence (one the caller also uses for pairs of its own).
  explicit InFlightGate(AsymmetricFence* fence) : fence_(fence) {}
  // Ordered by the gate's own fence, in the owner's line (fence() to Init it). Constant-initialised.
  constexpr InFlightGate() : fence_(&own_fence_) {}
  InFlightGate(const InFlightGate&) = delete;
  InFlightGate& operator=(const InFlightGate&) = delete;

  AsymmetricFence& fence() noexcept { return *fence_; }

  // Words the owner's caller may keep its own per-event state in, in the owner's line: a caller that
  // reads its state right after entering then misses once, not once more for a line of its own (a line
  // next to this one was not reliably brought in with it: perf annotate, the poll source). The gate never
  // touches them; what they mean, who writes them and in which order is the caller's.
  static constexpr int kOwnerWords = 2;
  std::atomic<uint64_t>& owner_word(int i) noexcept { return owner_words_[i]; }

  // The gate's own `enabled` flag, in the owner's line: for a caller whose flag has no other reader on the
  // hot path (EnterOwner() without an argument reads it). Control path: Close(), then Drain().
  void Open() noexcept { own_enabled_.store(true, std::memory_order_seq_cst); }
  void Close() noexcept { own_enabled_.store(false, std::memory_order_seq_cst); }
  // The same flag for the gate's other entries (Enter, EnterShared take a flag) and the caller's readers,
  // so that a caller keeps one flag, not a copy beside it.
  constexpr const std::atomic<bool>& own_flag() const noexcept { return own_enabled_; }

  // Control path: proposes the owner (the app's main thread) if none is set yet.
  void ProposeOwner(uint32_t tid) noexcept;

  // Hot path. Leave(pass) must follow every Enter, open or not.
  Pass Enter(uint32_t tid, const std::atomic<bool>& enabled) noexcept {
    uint32_t owner = owner_tid_.load(std::memory_order_relaxed);
    if (owner == 0 && owner_tid_.compare_exchange_strong(owner, tid, std::memory_order_relaxed)) owner = tid;
    if (owner == tid) {
      // Owner-only word: a plain increment. A nested entry (a signal handler on the owner thread that
      // reads a channel) restores the value before the outer entry resumes, so nothing is lost.
      const uint32_t depth = owner_depth_.load(std::memory_order_relaxed);
      owner_depth_.store(depth + 1, std::memory_order_relaxed);
      fence_->Light();
      return {true, enabled.load(std::memory_order_acquire), depth != 0};
    }
    return EnterShared(enabled);
  }
  // Hot path for a caller that is the only thread ever to enter this gate this way and knows it without
  // asking (the looper's poll source admits only the main thread, by its thread pointer, before it gets
  // here): the owner's side without the owner lookup and the caller's tid. Returns whether `enabled` was
  // true after entering (the caller may touch the guarded state). LeaveOwner must follow, open or not.
  bool EnterOwner(const std::atomic<bool>& enabled) noexcept {
    owner_depth_.store(owner_depth_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    fence_->Light();
    return enabled.load(std::memory_order_acquire);
  }
  // EnterOwner on the gate's own flag (Open/Close): the depth, the fence and the flag in one line.
  bool EnterOwner() noexcept { return EnterOwner(own_enabled_); }
  // Hot path for the owner that knows it is the owner (as for EnterOwner) but not whether it is already
  // inside (a signal handler on it): -1 when it is (nothing done: enter through Enter for a nested pass),
  // else enters as EnterOwner does and returns 1 when `enabled` was true, 0 when not. LeaveOwner must
  // follow 0 and 1. A handler that comes between the load and the store has left (depth back to 0) before
  // the store.
  int EnterOwnerOutermost(const std::atomic<bool>& enabled) noexcept {
    if (owner_depth_.load(std::memory_order_relaxed) != 0) return -1;
    owner_depth_.store(1, std::memory_order_relaxed);
    fence_->Light();
    return enabled.load(std::memory_order_acquire) ? 1 : 0;
  }
  // EnterOwnerOutermost on the gate's own flag (Open/Close).
  int EnterOwnerOutermost() noexcept { return EnterOwnerOutermost(own_enabled_); }
  void LeaveOwner() noexcept {
    owner_depth_.store(owner_depth_.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  }
  // For threads that must never become the owner (the watchdog's callbacks).
  Pass EnterShared(const std::atomic<bool>& enabled) noexcept {
    shared_.fetch_add(1, std::memory_order_seq_cst);
    return {false, enabled.load(std::memory_order_seq_cst), false};
  }
  void Leave(Pass pass) noexcept {
    if (pass.owner) {
      LeaveOwner();
    } else {
      shared_.fetch_sub(1, std::memory_order_release);
    }
  }

  // Control path, after `enabled` was stored false (seq_cst): returns once nobody who may have seen it
  // true is inside.
  void Drain() noexcept;

 private:
  // Read by every thread's Enter; written once.
  std::atomic<uint32_t> owner_tid_{0};
  // Other threads' count: its own line, so that their locked adds never take the owner's line away.
  alignas(64) std::atomic<int64_t> shared_{0};
  // The owner's line, last: a user may put its own per-event words in the line right after it.
  alignas(64) std::atomic<uint32_t> owner_depth_{0};  // written by the owner only
  std::atomic<bool> own_enabled_{false};
  AsymmetricFence* fence_;
  AsymmetricFence own_fence_;  // unused when an outside fence was given
  std::atomic<uint64_t> owner_words_[kOwnerWords] = {};
};
static_assert(sizeof(InFlightGate) == 3 * 64, "the owner's words, fence and flag fit in the owner's line");

// The owner's side of InFlightGate alone, for a caller that only ever enters as the owner and knows it
// without asking (the looper's poll source: only the main thread, admitted by its thread pointer before it
// gets here), with its own fence and flag: no owner tid, no other threads' count, the fence held in place
// (no pointer to load). So the whole gate is one line, and the caller's per-event words (OwnerWords, up to
// 32 bytes, constant-initialisable) end it: an owner entering after a wait misses once for the gate and its
// state together. The protocol is InFlightGate's: EnterOwner stores the depth, runs the fence's light side,
// then reads the flag; Close() stores the flag (seq_cst) and Drain() runs the heavy side, then waits for
// the depth to fall to 0. Constant-initialised, with no pointer (no relocation written at load).
template <typename OwnerWords>
class alignas(64) OwnerOnlyGate {
 public:
  constexpr OwnerOnlyGate() = default;
  OwnerOnlyGate(const OwnerOnlyGate&) = delete;
  OwnerOnlyGate& operator=(const OwnerOnlyGate&) = delete;

  AsymmetricFence& fence() noexcept { return fence_; }
  OwnerWords& owner_words() noexcept { return owner_words_; }
  // Control path: the flag; Close(), then Drain().
  void Open() noexcept { enabled_.store(true, std::memory_order_seq_cst); }
  void Close() noexcept { enabled_.store(false, std::memory_order_seq_cst); }
  constexpr const std::atomic<bool>& own_flag() const noexcept { return enabled_; }

  // Hot path, the owner thread only: returns whether the flag was up after entering (the caller may touch
  // the guarded state). LeaveOwner must follow, open or not. A nested entry (a signal handler on the owner
  // that enters too) restores the depth before the outer one goes on.
  bool EnterOwner() noexcept {
    owner_depth_.store(owner_depth_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    fence_.Light();
    return enabled_.load(std::memory_order_acquire);
  }
  void LeaveOwner() noexcept {
    owner_depth_.store(owner_depth_.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  }

  // Control path, after Close(): returns once the owner, if it may have seen the flag up, has left.
  void Drain() noexcept {
    fence_.Heavy();
    while (owner_depth_.load(std::memory_order_seq_cst) != 0) {  // whoever got in is short: no blocking inside
      timespec ts{0, 100000};
      nanosleep(&ts, nullptr);
    }
  }

 private:
  std::atomic<uint32_t> owner_depth_{0};  // written by the owner only
  std::atomic<bool> enabled_{false};
  AsymmetricFence fence_;
  OwnerWords owner_words_{};

  static_assert(sizeof(OwnerWords) <= 32 && alignof(OwnerWords) <= 8, "the owner's words end the gate's one line");
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_IN_FLIGHT_GATE_H_
