// What the library tests read from libjankprobe.so's own file (ELF64: they run on the host only): a
// section's place and the first load segment's end, from the headers, without the library's help; shared
// by the tests that check what the text releases give back (tests/lib/text_release_library_test.cc,
// tests/hook/text_release_sweep_test.cc).
#ifndef JANKPROBE_TESTS_LIB_LIBRARY_FILE_H_
#define JANKPROBE_TESTS_LIB_LIBRARY_FILE_H_

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace jp::testing {

struct Section {
  uint64_t addr = 0, size = 0;
};

// A section's address and size from the file's section headers; {0, 0} if absent or unreadable.
inline Section FindSection(const char* path, const char* name) {
  Section out;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shnum > 0 &&
      eh.e_shstrndx < eh.e_shnum) {
    std::vector<Elf64_Shdr> sh(eh.e_shnum);
    const ssize_t want = static_cast<ssize_t>(sizeof(Elf64_Shdr) * eh.e_shnum);
    if (pread(fd, sh.data(), want, static_cast<off_t>(eh.e_shoff)) == want) {
      const Elf64_Shdr& strtab = sh[eh.e_shstrndx];
      std::string names(strtab.sh_size, '\0');
      if (pread(fd, names.data(), names.size(), static_cast<off_t>(strtab.sh_offset)) ==
          static_cast<ssize_t>(names.size())) {
        for (const Elf64_Shdr& s : sh) {
          if (s.sh_name < names.size() && strcmp(names.c_str() + s.sh_name, name) == 0) out = {s.sh_addr, s.sh_size};
        }
      }
    }
  }
  close(fd);
  return out;
}

// The end of the file's first PT_LOAD (offset 0: ELF and program headers, .dynsym, .dynstr, .rodata) as
// loaded, rounded up to a page: the segment is [0, this) from the load address. 0 if not found.
inline uintptr_t FirstSegmentEnd(const char* path) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t end = 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_ident[EI_CLASS] == ELFCLASS64) {
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      const off_t at = static_cast<off_t>(eh.e_phoff + static_cast<uint64_t>(i) * sizeof ph);
      if (pread(fd, &ph, sizeof ph, at) != sizeof ph) break;
      if (ph.p_type == PT_LOAD && ph.p_offset == 0 && !(ph.p_flags & (PF_X | PF_W))) {
        end = (ph.p_vaddr + ph.p_memsz + page - 1) / page * page;
        break;
      }
    }
  }
  close(fd);
  return end;
}

// What the text releases give back, as offsets from the load address: from the first 64 KiB window wholly
// in the rare part (.text.jp_rare; the window it shares with the steady text stays) to the end of the
// start-only range. {0, 0} when the file has neither section.
struct Released {
  uintptr_t first = 0, last = 0;
};
inline Released ReleasedRange(const char* path) {
  const Section rare = FindSection(path, ".text.jp_rare");
  const Section start_only = FindSection(path, ".text.jp_start_only");
  if (rare.size == 0 || start_only.size == 0) return {};
  return {(rare.addr + 0xffff) / 0x10000 * 0x10000, start_only.addr + start_only.size};
}

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_LIB_LIBRARY_FILE_H_
