// A PLT proxy's previous targets, cached for a few call sites: what the input proxies and the looper's
// poll source call instead of asking the engine on every call.
//
// Why: JP_PLT_PREV asks the engine on every call (jp_plt_hook_prev_for: a call and a table walk), and a
// call before the original one makes a proxy keep all its arguments in saved registers across it. The
// engine's answer for one return address does not change while the hook stays installed (it is what the
// calling module's slot held before us), so the answers for the first call sites that ask after an
// install are kept, one entry {return address, target} each: the proxy's fast path is FindFirst (the
// first entry: a load, a compare and a load), its out-of-line half Get (every entry, then Lookup). Several
// entries, because a module can call one function from more than one place: a libinput.so whose Send() is
// inlined into the publisher and the consumer's FINISHED sends from two (the demo's fixture keeps Send()
// out of line: one), and a call site that misses pays the engine's lookup on every call. kEntries call
// sites per proxy; a call site beyond them asks the engine every time (Fill then only reads: no locked
// instruction on a full cache).
//
// The rules (any number of threads; nothing on the fast path but FindFirst's / Find's loads):
// - Clear() runs before an install writes any slot, so that a call through a new slot misses and asks
//   the engine: the ordering JP_PLT_PREV relies on (the engine records a slot's previous target before it
//   writes the slot; while the handle is not published, prev_var holds it and nothing is cached). And
//   Clear() runs again once the install returned: a lookup that ran while the engine's table was still
//   the previous install's may have cached that answer (a call in flight across a stop, answered before
//   the install recorded what the slot holds now), and it goes too. Clear empties every entry.
// - A fill takes the first entry it finds empty (a plain load first: taken entries are skipped without a
//   locked instruction). It stores the target before the address (release); a reader that finds its own
//   return address in an entry (acquire) finds the target that goes with it. An entry's target word is
//   written only by the one filler that claimed it empty (its address word then holds Claiming(), which no
//   call matches), and Clear waits for a claim to end before it empties the entry, so two fills never mix
//   their words. Two threads that miss on the same call site at once may each fill an entry for it: both
//   hold the same answer, and it only takes an entry.
// - A fill publishes only if no Clear came since it read the generation (before its lookup): a lookup that
//   started before an install never lands in the cache after it; it still returns its answer to its own
//   call, the target that was right for that call when it asked.
// - A target is never null in a filled entry (an engine answer of null is not cached), so Find's null
//   means "not cached" and a caller tests one word.
// What is left: a call that matched an entry's address and is then held between its two loads for as long
// as a stop, an install and a fill of that entry from another module take reads the other module's target.
// Both are this hook's previous targets for the same symbol and differ only when another tool hooked one
// module's slot before us.
#ifndef JANKPROBE_PLT_PREV_CACHE_H_
#define JANKPROBE_PLT_PREV_CACHE_H_

#include <sched.h>

#include <atomic>
#include <cstdint>

#include "jankprobe/plt.h"

namespace jp::plt {

class PrevCache {
 public:
  // Call sites kept per proxy. Each miss walks all of them, so a few: enough for a library that calls one
  // socket function from a handful of inlined places.
  static constexpr int kEntries = 4;

  // The target for a call whose return address is `ra`, or null when no entry holds it (a return address
  // is never null or Claiming(), so an empty or claimed entry never matches). Entries in fill order: the
  // first call site to ask after an install is found first. For the proxies' out-of-line halves (Get);
  // their inline paths use FindFirst.
  void* Find(const void* ra) const noexcept {
    if (void* const first = FindFirst(ra)) return first;
    // The others unrolled: each a load, a compare and a branch (a loop over the array cost two
    // instructions before the first compare and a jump after it, x86_64 GCC 12).
#pragma GCC unroll 3
    for (int i = 1; i < kEntries; ++i) {
      if (entries_[i].ra.load(std::memory_order_acquire) == ra) return TargetOf(entries_[i]);
    }
    return nullptr;
  }
  // The first entry only (the expected hit: most proxies have one call site), for a proxy whose inline
  // path must stay one load, compare and load, and whose out-of-line half looks further (Get): the other
  // entries' checks inline made GCC keep the arguments in other registers across the whole proxy (+2
  // instructions per call in the input proxies, callgrind).
  void* FindFirst(const void* ra) const noexcept {
    if (__builtin_expect(entries_[0].ra.load(std::memory_order_acquire) == ra, 1)) return TargetOf(entries_[0]);
    return nullptr;
  }

  // JP_PLT_PREV's answer for a call from `ra`: the engine's lookup through the hook's handle, or prev_var
  // while the handle is not published (`handle` and `prev_var` are the install's: read atomically here).
  static void* Ask(jp_plt_hook* const* handle, void* const* prev_var, const void* ra) noexcept {
    const jp_plt_hook* h = __atomic_load_n(handle, __ATOMIC_ACQUIRE);
    return h != nullptr ? jp_plt_hook_prev_for(h, ra) : __atomic_load_n(prev_var, __ATOMIC_ACQUIRE);
  }
  // After a miss: Ask, and the answer cached for `ra` in an empty entry when the handle was published (an
  // answer from prev_var is the first module's target, not necessarily this call site's). Out of line:
  // the proxies' slow halves call it.
  __attribute__((noinline)) void* Lookup(jp_plt_hook* const* handle, void* const* prev_var,
                                         const void* ra) noexcept {
    const uint32_t before = generation();  // before the lookup's loads
    const jp_plt_hook* h = __atomic_load_n(handle, __ATOMIC_ACQUIRE);
    if (h == nullptr) return __atomic_load_n(prev_var, __ATOMIC_ACQUIRE);
    void* const target = jp_plt_hook_prev_for(h, ra);
    Fill(before, ra, target);
    return target;
  }
  // Find, else Lookup: for a path that is already out of line (a proxy's slow half, a blocking wait) and
  // must not ask the engine when the call site is cached.
  void* Get(jp_plt_hook* const* handle, void* const* prev_var, const void* ra) noexcept {
    void* const target = Find(ra);
    return target != nullptr ? target : Lookup(handle, prev_var, ra);
  }

  // Lookup's halves: the generation read before asking the engine, and the fill with its answer, which
  // takes an empty entry only and publishes only if no Clear came since `before`.
  uint32_t generation() const noexcept { return generation_.load(std::memory_order_seq_cst); }
  void Fill(uint32_t before, const void* ra, void* target) noexcept {
    if (target == nullptr) return;  // Find's null means "not cached"
    for (Entry& e : entries_) {
      const void* seen = e.ra.load(std::memory_order_relaxed);
      if (seen == ra) return;         // another thread filled it meanwhile
      if (seen != nullptr) continue;  // taken, or being filled: no locked instruction
      if (!e.ra.compare_exchange_strong(seen, Claiming(), std::memory_order_seq_cst, std::memory_order_relaxed)) {
        if (seen == ra) return;
        continue;  // another filler claimed it first
      }
      e.target.store(target, std::memory_order_relaxed);
      // A Clear after our claim waits for the store below; one before it moved the generation (seq_cst:
      // the claim came after that Clear's increment, and the Clear reaches this entry only after it).
      e.ra.store(generation() == before ? ra : nullptr, std::memory_order_release);
      return;
    }
    // Every entry taken: this call site asks the engine on every call.
  }

  // Install side (not a proxy, not a signal handler): empties every entry and makes every lookup that
  // started before it unable to fill one. Before the install writes any slot, and again once it returned.
  void Clear() noexcept {
    generation_.fetch_add(1, std::memory_order_seq_cst);
    for (Entry& e : entries_) {
      const void* seen = e.ra.load(std::memory_order_relaxed);
      for (;;) {
        if (seen == Claiming()) {  // a filler between its claim and its publish: a few instructions
          sched_yield();
          seen = e.ra.load(std::memory_order_relaxed);
          continue;
        }
        // Always the exchange, also on an entry seen empty: the relaxed load may be older than a claim.
        if (e.ra.compare_exchange_weak(seen, nullptr, std::memory_order_seq_cst, std::memory_order_relaxed)) break;
      }
    }
  }

 private:
  // The address word of an entry being filled (no function starts at address 1). A function, not a
  // constant: reinterpret_cast is not allowed in one, and a variable would be initialised at load time.
  static const void* Claiming() noexcept { return reinterpret_cast<const void*>(uintptr_t{1}); }

  struct Entry {
    std::atomic<const void*> ra{nullptr};
    std::atomic<void*> target{nullptr};
  };
  // An entry's target once its address matched (acquire): stored before the address, never null.
  static void* TargetOf(const Entry& e) noexcept {
    void* const target = e.target.load(std::memory_order_relaxed);
    if (target == nullptr) __builtin_unreachable();  // Fill never publishes a null target
    return target;
  }
  Entry entries_[kEntries];
  std::atomic<uint32_t> generation_{0};
};

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_PREV_CACHE_H_
