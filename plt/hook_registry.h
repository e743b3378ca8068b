// Hook handles and the engine's state: which slots each hook patched, what each slot held before
// (per module), and the install / remove / refresh operations that change them under one mutex.
//
// Several modules with different previous targets: a proxy finds its previous target through a
// caller-address table (module address ranges sorted by start, each with the prev that module's slot
// held), published as an immutable array through an atomic pointer. When every module agrees (the usual
// case) the pointer is null and the lookup is one load and a branch. Old arrays are kept, never freed,
// because a proxy may be reading one; an identical array is reused rather than reallocated, so toggling a
// hook forever does not grow memory. We chose this over ByteHook's per-slot trampolines because it needs
// no run-time code generation and no executable memory on any of the four ABIs (W^X, different
// instruction sets, i-cache flushes); the price is the lookup, paid only when prevs actually differ.
// Its one blind spot: a caller that *tail-calls* through its PLT (jmp, not call) leaves its own caller's
// return address, so the lookup misses (or finds that module) and falls back to *prev. Trampolines
// would not have this problem; per-module prevs only differ when another tool hooked first, and even
// then the fallback target is a working chain, never a crash.
#ifndef JANKPROBE_PLT_HOOK_REGISTRY_H_
#define JANKPROBE_PLT_HOOK_REGISTRY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jankprobe/plt.h"
#include "plt/module_list.h"
#include "plt/status.h"

namespace jp::plt {

// Identifies one loaded module across dl_iterate_phdr calls (the same bias and program headers).
struct ModuleKey {
  uintptr_t load_bias = 0;
  const void* phdrs = nullptr;
  bool operator==(const ModuleKey& o) const { return load_bias == o.load_bias && phdrs == o.phdrs; }
  bool operator<(const ModuleKey& o) const {
    return load_bias != o.load_bias ? load_bias < o.load_bias : phdrs < o.phdrs;
  }
};

// One slot a hook patched.
struct SlotRecord {
  uintptr_t slot = 0;  // absolute address of the GOT (or data) slot
  ModuleKey module;
  uintptr_t module_start = 0;  // the module's mapped range, for the caller-address table
  uintptr_t module_end = 0;
  void* prev = nullptr;          // what the slot held before our proxy: the next link in the chain
  bool behind_foreign = false;   // remove found another tool's proxy in front of ours: we stay chained
};

struct PrevRange {
  uintptr_t start;
  uintptr_t end;
  void* prev;
  bool operator==(const PrevRange& o) const { return start == o.start && end == o.end && prev == o.prev; }
};

// Immutable once published.
struct PrevTable {
  std::vector<PrevRange> ranges;  // sorted by start, non-overlapping
};

}  // namespace jp::plt

// The public handle. Never freed: a proxy may be running with it at any time.
struct jp_plt_hook {
  jp_plt_hook(const char* caller_arg, std::string symbol_arg, std::string version_arg, void* proxy_arg,
              void** prev_arg)
      : caller(caller_arg), symbol(std::move(symbol_arg)), version(std::move(version_arg)), proxy(proxy_arg),
        prev(prev_arg) {}

  const jp::plt::CallerSpec caller;
  const std::string symbol;
  const std::string version;  // "" = any version
  void* const proxy;
  void** const prev;
  std::atomic<int> active{0};
  bool internal = false;  // the engine's own (dlopen monitor), set once at creation under the mutex
  std::atomic<size_t> slot_count{0};
  std::atomic<const jp::plt::PrevTable*> table{nullptr};  // null: every module's prev is *prev

  // Guarded by the engine mutex.
  std::vector<jp::plt::SlotRecord> records;
  std::vector<std::unique_ptr<jp::plt::PrevTable>> published_tables;  // kept forever, reused when equal
};

namespace jp::plt {

// Install (or re-activate, or extend to newly loaded modules) a hook. On success *out is the handle; a
// pending hook (caller not loaded yet) succeeds with zero slots. `internal` hooks (the dlopen monitor)
// succeed even with zero slots, so that modules loaded later still get them.
Status InstallHook(const char* caller, const char* symbol, void* proxy, void** prev, bool internal,
                   jp_plt_hook** out);

// Remove: JP_PLT_OK, JP_PLT_REMOVED_STILL_CHAINED, or an error Status.
Status RemoveHook(jp_plt_hook* hook, int* result);

// Active hooks installed through the public API (the engine's own dlopen monitor not counted).
size_t ActiveUserHookCount();

// Applies every active hook to modules loaded since the last look (called by the dlopen monitor after
// the real dlopen returned), and forgets slots of modules that were unloaded.
void RefreshAfterLoad();

// The previous target for a call from `return_address` (see PrevTable).
void* PrevFor(const jp_plt_hook* hook, const void* return_address);

// Whether `hook` is a handle this engine created (never dereferences an unknown pointer).
bool IsKnownHook(const jp_plt_hook* hook);

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_HOOK_REGISTRY_H_
