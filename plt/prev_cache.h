// A PLT proxy's previous target, cached for one call site: what the input proxies and the looper's poll
// source call instead of asking the engine on every call.
//
// Why: JP_PLT_PREV asks the engine on every call (jp_plt_hook_prev_for: a call and a table walk), and a
// call before the original one makes a proxy keep all its arguments in saved registers across it. The
// engine's answer for one return address does not change while the hook stays installed (it is what the
// calling module's slot held before us), so the answer for the first call site that asks after an install
// is kept: the proxy's fast path is a load, a compare and a load (Holds, target()), and the rest goes
// through Lookup. One call site per proxy is what the users need (libinput.so's channel calls each socket
// function from one place; every Looper of a process waits from Looper::pollOnce's one epoll_wait); a
// second call site asks the engine every time.
//
// The rules (any number of threads; nothing on the fast path but the two loads):
// - Clear() runs before an install writes any slot, so that a call through a new slot misses and asks
//   the engine: the ordering JP_PLT_PREV relies on (the engine records a slot's previous target before it
//   writes the slot; while the handle is not published, prev_var holds it and nothing is cached). And
//   Clear() runs again once the install returned: a lookup that ran while the engine's table was still
//   the previous install's may have cached that answer (a call in flight across a stop, answered before
//   the install recorded what the slot holds now), and it goes too.
// - A fill stores the target before the address (release); a reader that finds its own return address
//   (acquire) finds the target that goes with it. The target word is written only by the one filler that
//   claimed an empty cache (the address word then holds Claiming(), which no call matches), and Clear waits
//   for a claim to end before it empties the cache, so two fills never mix their words.
// - A fill publishes only if no Clear came since it read the generation (before its lookup): a lookup that
//   started before an install never lands in the cache after it; it still returns its answer to its own
//   call, the target that was right for that call when it asked.
// What is left: a call that matched the address and is then held between its two loads for as long as a
// stop, an install and a fill from another module take reads the other module's target. Both are this
// hook's previous targets for the same symbol and differ only when another tool hooked one module's slot
// before us.
#ifndef JANKPROBE_PLT_PREV_CACHE_H_
#define JANKPROBE_PLT_PREV_CACHE_H_

#include <sched.h>

#include <atomic>
#include <cstdint>

#include "jankprobe/plt.h"

namespace jp::plt {

class PrevCache {
 public:
  // Hot path: whether target() is the target for a call whose return address is `ra` (a return address is
  // never null or Claiming(), so an empty cache never matches).
  bool Holds(const void* ra) const noexcept { return ra_.load(std::memory_order_acquire) == ra; }
  // After Holds(ra): the target to call.
  void* target() const noexcept { return target_.load(std::memory_order_relaxed); }

  // JP_PLT_PREV's answer for a call from `ra`: the engine's lookup through the hook's handle, or prev_var
  // while the handle is not published (`handle` and `prev_var` are the install's: read atomically here).
  static void* Ask(jp_plt_hook* const* handle, void* const* prev_var, const void* ra) noexcept {
    const jp_plt_hook* h = __atomic_load_n(handle, __ATOMIC_ACQUIRE);
    return h != nullptr ? jp_plt_hook_prev_for(h, ra) : __atomic_load_n(prev_var, __ATOMIC_ACQUIRE);
  }
  // Ask, and the answer cached for `ra` when the cache is empty and the handle was published (an answer
  // from prev_var is the first module's target, not necessarily this call site's). Out of line: the
  // proxies' slow halves call it.
  __attribute__((noinline)) void* Lookup(jp_plt_hook* const* handle, void* const* prev_var,
                                         const void* ra) noexcept {
    const uint32_t before = generation();  // before the lookup's loads
    const jp_plt_hook* h = __atomic_load_n(handle, __ATOMIC_ACQUIRE);
    if (h == nullptr) return __atomic_load_n(prev_var, __ATOMIC_ACQUIRE);
    void* const target = jp_plt_hook_prev_for(h, ra);
    Fill(before, ra, target);
    return target;
  }

  // Lookup's halves: the generation read before asking the engine, and the fill with its answer, which
  // takes an empty cache only and publishes only if no Clear came since `before`.
  uint32_t generation() const noexcept { return generation_.load(std::memory_order_seq_cst); }
  void Fill(uint32_t before, const void* ra, void* target) noexcept {
    const void* expected = nullptr;
    if (!ra_.compare_exchange_strong(expected, Claiming(), std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return;  // filled, or being filled
    }
    target_.store(target, std::memory_order_relaxed);
    // A Clear after our claim waits for the store below; one before it moved the generation (seq_cst: the
    // claim came after that Clear's increment).
    ra_.store(generation() == before ? ra : nullptr, std::memory_order_release);
  }

  // Install side (not a proxy, not a signal handler): empties the cache and makes every lookup that started
  // before it unable to fill it. Before the install writes any slot, and again once it returned.
  void Clear() noexcept {
    generation_.fetch_add(1, std::memory_order_seq_cst);
    const void* seen = ra_.load(std::memory_order_relaxed);
    for (;;) {
      if (seen == Claiming()) {  // a filler between its claim and its publish: a few instructions
        sched_yield();
        seen = ra_.load(std::memory_order_relaxed);
        continue;
      }
      if (ra_.compare_exchange_weak(seen, nullptr, std::memory_order_seq_cst, std::memory_order_relaxed)) return;
    }
  }

 private:
  // The address word of a cache being filled (no function starts at address 1). A function, not a
  // constant: reinterpret_cast is not allowed in one, and a variable would be initialised at load time.
  static const void* Claiming() noexcept { return reinterpret_cast<const void*>(uintptr_t{1}); }

  std::atomic<const void*> ra_{nullptr};
  std::atomic<void*> target_{nullptr};
  std::atomic<uint32_t> generation_{0};
};

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_PREV_CACHE_H_
