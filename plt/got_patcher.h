// Writes one GOT (or data) slot of a loaded module: make the slot's run-time page writable, store the
// pointer atomically, put the page's original protection back.
#ifndef JANKPROBE_PLT_GOT_PATCHER_H_
#define JANKPROBE_PLT_GOT_PATCHER_H_

#include <cstdint>

#include "plt/elf_image.h"
#include "plt/status.h"

namespace jp::plt {

// The protection the loader left on the run-time page (sysconf(_SC_PAGESIZE), not the link-time page)
// holding `slot`: PROT_READ when the page lies in the part of PT_GNU_RELRO that the loader made
// read-only, otherwise the flags of the PT_LOAD segment containing the slot. Derived from the program
// headers rather than read from /proc/self/maps, which is slow and may be unreadable.
int SlotPageProtection(const ElfImage& image, uintptr_t slot);

// Reads a slot (relaxed atomic load: other threads may be calling through it).
void* ReadSlot(uintptr_t slot);

// Stores `value` into the slot with release ordering, so whatever was published before (the hook's
// previous-target pointer) is visible to a thread that calls through the new value. `protection` is
// the page's protection as SlotPageProtection returned it; the page is made writable only when needed
// and returned to exactly that protection.
Status WriteSlot(uintptr_t slot, void* value, int protection, const char* module_name, const char* symbol);

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_GOT_PATCHER_H_
