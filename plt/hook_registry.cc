#include "plt/hook_registry.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "plt/elf_image.h"
#include "plt/got_patcher.h"

namespace jp::plt {
namespace {

// One mutex for install, remove and refresh. It is never held while the real dlopen runs, nor while
// dlsym runs: a library constructor runs under the loader's lock and may call install, so holding this
// mutex while waiting for the loader's lock could deadlock against it. It is held around
// dl_iterate_phdr. On glibc that takes a different lock than the one dlopen holds while constructors
// run, so there is no cycle. On bionic it is the same lock (g_dl_mutex): a constructor that installs a
// hook while another thread is in the middle of an install can deadlock. This is a known limitation
// that every PLT hooker shares. Install hooks from JNI_OnLoad or later, never from a constructor.
std::mutex& EngineMutex() {
  static std::mutex* mutex = new std::mutex;  // leaked on purpose: proxies may run during exit
  return *mutex;
}

std::vector<jp_plt_hook*>& AllHooks() {
  static auto* hooks = new std::vector<jp_plt_hook*>;
  return *hooks;
}

// Modules every active hook has already been applied to; RefreshAfterLoad only looks at the others.
std::set<ModuleKey>& SeenModules() {
  static auto* seen = new std::set<ModuleKey>;
  return *seen;
}

ModuleKey KeyOf(const LoadedModule& module) { return ModuleKey{module.load_bias, module.phdrs}; }

// Resolved targets of lazily bound imports, keyed by symbol version ("" = unversioned).
using ResolvedMap = std::map<std::string, void*>;

void ResolveLazyTargets(const std::string& symbol, const std::set<std::string>& versions, ResolvedMap* resolved) {
  for (const std::string& version : versions) {
    void* target = nullptr;
#if defined(__GLIBC__)
    if (!version.empty()) target = dlvsym(RTLD_DEFAULT, symbol.c_str(), version.c_str());
#endif
    if (target == nullptr) target = dlsym(RTLD_DEFAULT, symbol.c_str());
    (*resolved)[version] = target;  // may be null: reported when the slot is met again
  }
}

// What one install pass over the loaded modules found.
struct PassResult {
  bool matched_module = false;       // some loaded module matched the caller
  std::set<std::string> need_lazy;   // versions whose lazy target must be resolved (outside the lock)
  Status first_error;                // the first reason a matching module was not hooked
  std::vector<std::string> no_import;  // matching modules that do not import the symbol
};

void NoteError(PassResult* result, Status status) {
  if (result->first_error.ok()) result->first_error = std::move(status);
}

// The caller-address table for the hook's records, or null when all modules share one prev.
void Publish(jp_plt_hook* hook) {
  if (hook->records.empty()) return;  // keep the last table: late callers of a removed hook still use it
  void* first = hook->records.front().prev;
  bool uniform = std::all_of(hook->records.begin(), hook->records.end(),
                             [first](const SlotRecord& r) { return r.prev == first; });
  if (uniform) {
    __atomic_store_n(hook->prev, first, __ATOMIC_RELEASE);
    hook->table.store(nullptr, std::memory_order_release);
    return;
  }
  std::vector<PrevRange> ranges;
  for (const SlotRecord& r : hook->records) {
    bool known = std::any_of(ranges.begin(), ranges.end(), [&](const PrevRange& p) { return p.start == r.module_start; });
    if (!known) ranges.push_back(PrevRange{r.module_start, r.module_end, r.prev});
  }
  std::sort(ranges.begin(), ranges.end(), [](const PrevRange& a, const PrevRange& b) { return a.start < b.start; });
  const PrevTable* table = nullptr;
  for (const auto& old : hook->published_tables) {
    if (old->ranges == ranges) table = old.get();
  }
  if (table == nullptr) {
    hook->published_tables.push_back(std::make_unique<PrevTable>(PrevTable{std::move(ranges)}));
    table = hook->published_tables.back().get();
  }
  hook->table.store(table, std::memory_order_release);
  __atomic_store_n(hook->prev, first, __ATOMIC_RELEASE);
}

void UpdateSlotCount(jp_plt_hook* hook) {
  hook->slot_count.store(hook->active.load() ? hook->records.size() : 0, std::memory_order_relaxed);
}

bool HasRecord(const jp_plt_hook* hook, uintptr_t slot) {
  return std::any_of(hook->records.begin(), hook->records.end(), [slot](const SlotRecord& r) { return r.slot == slot; });
}

// Whether a JUMP_SLOT value is still the module's own PLT stub (glibc lazy binding): it points into the
// module but not at the module's own definition of the symbol.
bool IsUnresolvedLazySlot(const ImportSlot& slot, void* value, const LoadedModule& module, const ElfImage& image) {
  if (slot.kind != SlotKind::kJumpSlot || !module.Contains(reinterpret_cast<uintptr_t>(value))) return false;
  uint64_t own = 0;
  return !(image.LookupExport(slot.symbol, &own) && module.load_bias + own == reinterpret_cast<uintptr_t>(value));
}

// Patches one module's slots for `hook`. Runs inside the dl_iterate_phdr callback (see module_list.h).
void InstallIntoModule(jp_plt_hook* hook, const LoadedModule& module, const ResolvedMap& resolved,
                       PassResult* result) {
  std::unique_ptr<ElfImage> image;
  Status status = ElfImage::FromLoaded(module.load_bias, module.phdrs, module.phnum, &image);
  if (!status.ok()) {
    NoteError(result, Status(status.code(), std::string("cannot read ") + module.name + ": " + status.message()));
    return;
  }
  std::vector<ImportSlot> slots;
  status = image->FindImportSlots(hook->symbol, hook->version, &slots);
  if (!status.ok()) {
    NoteError(result, Status(status.code(), std::string("cannot read the relocations of ") + module.name + ": " +
                                                status.message()));
    return;
  }
  if (slots.empty()) {
    result->no_import.push_back(*module.name != '\0' ? module.name : "the main executable");
    return;
  }
  // Decide every slot's prev first, publish, and only then write: a thread that calls through a
  // freshly written slot must find *prev (or the table) already set.
  std::vector<SlotRecord> fresh;
  for (const ImportSlot& import : slots) {
    uintptr_t address = module.load_bias + import.got_vaddr;
    if (import.kind == SlotKind::kAbsolute && import.addend != 0) continue;  // not a plain function address
    if (HasRecord(hook, address)) continue;  // ours already, or we are still chained behind another tool
    void* value = ReadSlot(address);
    if (value == hook->proxy) continue;
    if (value == nullptr) {
      NoteError(result, Status::NotFound(hook->symbol + " is an unresolved weak import in " + module.name));
      continue;
    }
    if (IsUnresolvedLazySlot(import, value, module, *image)) {
      // Never chain to the PLT stub: it would resolve the symbol and jump... into our proxy again.
      // One race remains that no hooker can close on glibc: a thread already inside _dl_fixup for this
      // slot writes the resolved address after us and replaces our proxy. Android binds everything at
      // load time, so it does not arise there; on a lazy glibc module a re-install puts the proxy back.
      auto it = resolved.find(std::string(import.version));
      if (it == resolved.end()) {
        result->need_lazy.insert(std::string(import.version));
        return;  // the whole module waits for the next pass, after dlsym ran outside the loader lock
      }
      if (it->second == nullptr) {
        NoteError(result, Status::NotFound("cannot resolve lazily bound " + hook->symbol + " imported by " +
                                           module.name + " (dlsym found no definition)"));
        return;
      }
      value = it->second;
    }
    SlotRecord record;
    record.slot = address;
    record.module = KeyOf(module);
    record.module_start = module.start;
    record.module_end = module.end;
    record.prev = value;
    fresh.push_back(record);
  }
  if (fresh.empty()) return;
  size_t old_size = hook->records.size();
  hook->records.insert(hook->records.end(), fresh.begin(), fresh.end());
  Publish(hook);
  std::vector<uintptr_t> failed;
  for (const SlotRecord& record : fresh) {
    Status written = WriteSlot(record.slot, hook->proxy, SlotPageProtection(*image, record.slot), module.name,
                               hook->symbol.c_str());
    if (!written.ok()) {
      NoteError(result, written);
      failed.push_back(record.slot);
    }
  }
  if (!failed.empty()) {
    hook->records.erase(std::remove_if(hook->records.begin() + old_size, hook->records.end(),
                                       [&](const SlotRecord& r) {
                                         return std::find(failed.begin(), failed.end(), r.slot) != failed.end();
                                       }),
                        hook->records.end());
    Publish(hook);
  }
}

// One pass over the loaded modules (optionally only those not in `skip`). Catches everything: an
// exception must never unwind through the loader's frames, which hold its lock.
PassResult InstallPass(jp_plt_hook* hook, const ResolvedMap& resolved, const std::set<ModuleKey>* skip) {
  PassResult result;
  ForEachLoadedModule([&](const LoadedModule& module) {
    try {
      if (!hook->caller.Matches(module)) return true;
      result.matched_module = true;
      if (skip != nullptr && skip->count(KeyOf(module)) != 0) return true;
      InstallIntoModule(hook, module, resolved, &result);
    } catch (const std::bad_alloc&) {
      NoteError(&result, Status(JP_PLT_ERR_NO_MEMORY, "out of memory while hooking " + hook->symbol));
    }
    return true;
  });
  return result;
}

// Runs install passes, resolving lazy targets between them with the engine mutex released.
PassResult InstallWithLazyResolution(jp_plt_hook* hook, const std::set<ModuleKey>* skip,
                                     std::unique_lock<std::mutex>* lock) {
  ResolvedMap resolved;
  PassResult result;
  for (int attempt = 0; attempt < 4; ++attempt) {
    result = InstallPass(hook, resolved, skip);
    if (result.need_lazy.empty()) break;
    lock->unlock();
    ResolveLazyTargets(hook->symbol, result.need_lazy, &resolved);
    lock->lock();
  }
  UpdateSlotCount(hook);
  return result;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < 3; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > 3) out += " and " + std::to_string(items.size() - 3) + " more";
  return out;
}

bool SplitSymbol(const char* text, std::string* name, std::string* version) {
  const char* at = std::strchr(text, '@');
  if (at == nullptr) {
    *name = text;
    return !name->empty();
  }
  name->assign(text, at - text);
  const char* v = at + 1;
  if (*v == '@') ++v;  // "name@@VERSION" (the default-version spelling) means the same here
  *version = v;
  return !name->empty() && !version->empty() && std::strchr(v, '@') == nullptr;
}

jp_plt_hook* FindHandle(const CallerSpec& caller, const std::string& symbol, const std::string& version,
                        void* proxy, void** prev) {
  for (jp_plt_hook* h : AllHooks()) {
    if (h->caller == caller && h->symbol == symbol && h->version == version && h->proxy == proxy && h->prev == prev) {
      return h;
    }
  }
  return nullptr;
}

// Removal of one record whose slot no longer holds our proxy: if another jankprobe hook sits in front
// of us (its record for this slot has prev == our proxy), splice us out by giving it our prev.
bool SpliceOut(jp_plt_hook* hook, const SlotRecord& record, std::set<jp_plt_hook*>* changed) {
  for (jp_plt_hook* other : AllHooks()) {
    if (other == hook) continue;
    for (SlotRecord& r : other->records) {
      if (r.slot == record.slot && r.module == record.module && r.prev == hook->proxy) {
        r.prev = record.prev;
        changed->insert(other);
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Status InstallHook(const char* caller, const char* symbol, void* proxy, void** prev, bool internal,
                   jp_plt_hook** out) {
  *out = nullptr;
  if (symbol == nullptr || proxy == nullptr || prev == nullptr) {
    return Status::Invalid(std::string("jp_plt_hook_install: ") +
                           (symbol == nullptr ? "symbol" : proxy == nullptr ? "proxy" : "prev") + " is NULL");
  }
  if (caller != nullptr && *caller == '\0') return Status::Invalid("jp_plt_hook_install: caller is empty");
  std::string name, version;
  if (!SplitSymbol(symbol, &name, &version)) {
    return Status::Invalid(std::string("jp_plt_hook_install: malformed symbol \"") + symbol + "\"");
  }
  CallerSpec spec(caller);
  std::unique_lock<std::mutex> lock(EngineMutex());
  jp_plt_hook* hook = FindHandle(spec, name, version, proxy, prev);
  if (hook == nullptr) {
    AllHooks().reserve(AllHooks().size() + 1);  // so that push_back below cannot throw after new
    hook = new jp_plt_hook(caller, name, version, proxy, prev);
    hook->internal = internal;
    AllHooks().push_back(hook);
  }
  hook->active.store(1);
  PassResult result = InstallWithLazyResolution(hook, nullptr, &lock);
  if (!hook->records.empty() || internal) {
    *out = hook;
    return Status::Ok();
  }
  // Zero slots: pending if the caller names a library that is not loaded (yet), an error otherwise.
  bool pending = spec.CanBePending() && !result.matched_module;
  if (pending && spec.kind() == CallerSpec::Kind::kPath && access(caller, F_OK) != 0) {
    hook->active.store(0);
    return Status::NotFound(std::string("no loaded module matches ") + caller + " and the file does not exist");
  }
  if (pending) {
    *out = hook;
    return Status::Ok();
  }
  hook->active.store(0);  // the handle stays registered (never freed) and is reused by a retry
  UpdateSlotCount(hook);
  if (!result.first_error.ok()) return result.first_error;
  if (!result.no_import.empty()) {
    return Status::NotFound(Join(result.no_import) + (result.no_import.size() == 1 ? " does" : " do") +
                            " not import " + symbol);
  }
  return Status::NotFound("no loaded module matches " + spec.Describe() + " (hooking " + symbol + ")");
}

size_t ActiveUserHookCount() {
  std::lock_guard<std::mutex> lock(EngineMutex());
  size_t n = 0;
  for (const jp_plt_hook* h : AllHooks()) n += !h->internal && h->active.load() != 0;
  return n;
}

Status RemoveHook(jp_plt_hook* hook, int* out) {
  *out = JP_PLT_OK;
  if (hook == nullptr) return Status::Invalid("jp_plt_hook_remove: hook is NULL");
  std::unique_lock<std::mutex> lock(EngineMutex());
  if (std::find(AllHooks().begin(), AllHooks().end(), hook) == AllHooks().end()) {
    return Status(JP_PLT_ERR_UNKNOWN_HOOK, "jp_plt_hook_remove: not a handle returned by jp_plt_hook_install");
  }
  if (!hook->active.load() && hook->records.empty()) {
    return Status(JP_PLT_ERR_UNKNOWN_HOOK, "jp_plt_hook_remove: the hook on " + hook->symbol + " is not installed");
  }
  // Inactive first: from here on the proxy passes calls straight through, wherever it still sits.
  hook->active.store(0);
  std::vector<SlotRecord> kept;  // records we could not take out (another tool is in front of us)
  std::set<jp_plt_hook*> changed;
  Status error;
  ForEachLoadedModule([&](const LoadedModule& module) {
    try {
      ModuleKey key = KeyOf(module);
      bool mine = std::any_of(hook->records.begin(), hook->records.end(),
                              [&](const SlotRecord& r) { return r.module == key; });
      if (!mine) return true;
      std::unique_ptr<ElfImage> image;
      Status parsed = ElfImage::FromLoaded(module.load_bias, module.phdrs, module.phnum, &image);
      for (const SlotRecord& record : hook->records) {
        if (!(record.module == key)) continue;
        if (ReadSlot(record.slot) == hook->proxy) {
          Status written = parsed.ok() ? WriteSlot(record.slot, record.prev, SlotPageProtection(*image, record.slot),
                                                   module.name, hook->symbol.c_str())
                                       : parsed;
          if (written.ok()) continue;
          if (error.ok()) error = written;
          kept.push_back(record);
        } else if (!SpliceOut(hook, record, &changed)) {
          SlotRecord chained = record;
          chained.behind_foreign = true;
          kept.push_back(chained);
        }
      }
    } catch (const std::bad_alloc&) {
      if (error.ok()) error = Status(JP_PLT_ERR_NO_MEMORY, "out of memory while removing " + hook->symbol);
    }
    return true;
  });
  // Records of modules that are gone (dlclose'd) are dropped with the rest.
  hook->records = std::move(kept);
  UpdateSlotCount(hook);
  for (jp_plt_hook* other : changed) Publish(other);
  if (!error.ok()) return error;
  bool chained = std::any_of(hook->records.begin(), hook->records.end(), [](const SlotRecord& r) { return r.behind_foreign; });
  *out = chained ? JP_PLT_REMOVED_STILL_CHAINED : JP_PLT_OK;
  return Status::Ok();
}

void RefreshAfterLoad() {
  std::unique_lock<std::mutex> lock(EngineMutex());
  std::set<ModuleKey> loaded;
  std::set<ModuleKey> seen = SeenModules();
  ForEachLoadedModule([&](const LoadedModule& module) {
    try {
      ModuleKey key = KeyOf(module);
      loaded.insert(key);
      // A library that was dlclose'd and loaded again may come back at the same address with the same
      // program headers, so its key alone cannot tell it from the old one. Its slots can: a record whose
      // slot holds the original target again (or the module's own PLT stub) no longer has our proxy in
      // its chain. Such records are dropped and the module is looked at again below.
      for (jp_plt_hook* hook : AllHooks()) {
        size_t before = hook->records.size();
        hook->records.erase(std::remove_if(hook->records.begin(), hook->records.end(),
                                           [&](const SlotRecord& r) {
                                             if (!(r.module == key)) return false;
                                             void* value = ReadSlot(r.slot);
                                             return value != hook->proxy &&
                                                    (value == r.prev || module.Contains(reinterpret_cast<uintptr_t>(value)));
                                           }),
                            hook->records.end());
        if (hook->records.size() != before) seen.erase(key);
      }
    } catch (const std::bad_alloc&) {
    }
    return true;
  });
  // Forget slots of unloaded modules: their memory is gone, and the address may be reused.
  for (jp_plt_hook* hook : AllHooks()) {
    hook->records.erase(std::remove_if(hook->records.begin(), hook->records.end(),
                                       [&](const SlotRecord& r) { return loaded.count(r.module) == 0; }),
                        hook->records.end());
    Publish(hook);
    UpdateSlotCount(hook);
  }
  std::vector<jp_plt_hook*> active;
  for (jp_plt_hook* hook : AllHooks()) {
    if (hook->active.load()) active.push_back(hook);
  }
  for (jp_plt_hook* hook : active) {
    if (hook->active.load()) InstallWithLazyResolution(hook, &seen, &lock);
  }
  SeenModules() = loaded;
}

void* PrevFor(const jp_plt_hook* hook, const void* return_address) {
  const PrevTable* table = hook->table.load(std::memory_order_acquire);
  if (table == nullptr) return __atomic_load_n(hook->prev, __ATOMIC_ACQUIRE);
  uintptr_t address = reinterpret_cast<uintptr_t>(return_address);
  const std::vector<PrevRange>& ranges = table->ranges;
  auto it = std::upper_bound(ranges.begin(), ranges.end(), address,
                             [](uintptr_t a, const PrevRange& r) { return a < r.start; });
  if (it != ranges.begin() && address < (it - 1)->end) return (it - 1)->prev;
  return __atomic_load_n(hook->prev, __ATOMIC_ACQUIRE);  // a caller outside every hooked module
}

bool IsKnownHook(const jp_plt_hook* hook) {
  std::lock_guard<std::mutex> lock(EngineMutex());
  return std::find(AllHooks().begin(), AllHooks().end(), hook) != AllHooks().end();
}

}  // namespace jp::plt
