#include "plt/got_patcher.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace jp::plt {
namespace {

uintptr_t PageSize() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

uintptr_t PageDown(uintptr_t address) { return address & ~(PageSize() - 1); }

// Whether the loader made the page starting at `page` read-only as part of PT_GNU_RELRO. The two
// loaders round the end of the range differently: glibc's _dl_protect_relro rounds it down (a page
// shared with .data stays writable); bionic rounds it up (its linkers pad RELRO to a page end).
bool PageInRelro(const ElfImage& image, uintptr_t page) {
  if (image.relro_size() == 0) return false;
  uintptr_t start = PageDown(image.load_bias() + image.relro_vaddr());
  uintptr_t raw_end = image.load_bias() + image.relro_vaddr() + image.relro_size();
#if defined(__BIONIC__)
  uintptr_t end = PageDown(raw_end + PageSize() - 1);
#else
  uintptr_t end = PageDown(raw_end);
#endif
  return page >= start && page < end;
}

}  // namespace

int SlotPageProtection(const ElfImage& image, uintptr_t slot) {
  uintptr_t page = PageDown(slot);
  if (PageInRelro(image, page)) return PROT_READ;
  for (const Segment& segment : image.load_segments()) {
    uintptr_t start = image.load_bias() + segment.vaddr;
    if (slot < start || slot >= start + segment.memsz) continue;
    int prot = 0;
    if (segment.flags & PF_R) prot |= PROT_READ;
    if (segment.flags & PF_W) prot |= PROT_WRITE;
    if (segment.flags & PF_X) prot |= PROT_EXEC;
    return prot;
  }
  return PROT_READ;  // not inside any segment: the caller's bounds checks should make this unreachable
}

void* ReadSlot(uintptr_t slot) { return __atomic_load_n(reinterpret_cast<void**>(slot), __ATOMIC_RELAXED); }

Status WriteSlot(uintptr_t slot, void* value, int protection, const char* module_name, const char* symbol) {
  if (slot % alignof(void*) != 0) {
    return Status::Malformed(std::string("misaligned GOT slot for ") + symbol + " in " + module_name);
  }
  void* page = reinterpret_cast<void*>(PageDown(slot));
  bool writable = (protection & PROT_WRITE) != 0;
  if (!writable && mprotect(page, PageSize(), protection | PROT_READ | PROT_WRITE) != 0) {
    return Status(JP_PLT_ERR_MPROTECT, std::string("cannot make the GOT page of ") + module_name +
                                           " writable to hook " + symbol + ": " + std::strerror(errno));
  }
  __atomic_store_n(reinterpret_cast<void**>(slot), value, __ATOMIC_RELEASE);
  // Putting the protection back can only fail if the mapping changed under us, which the loader lock
  // excludes; if it does, the page merely stays writable and the hook is in place, so it is not an error.
  if (!writable) mprotect(page, PageSize(), protection);
  return Status::Ok();
}

}  // namespace jp::plt
