// One pass with libelf over a file's sections (and program headers), for the library tests that read
// libjankprobe.so's own file: library_surface_test (dependencies, exports, sections), runtime_terminate_test
// (symbols, dependencies, RELRO) and text_release_library_test (function addresses). Each collects its own
// things from the sections it is handed; the opening, the walk and the entry reads are here once.
// (tests/lib/library_file.h reads a few headers without libelf, for tests that do not link it.)
#ifndef JANKPROBE_TESTS_LIB_ELF_SECTIONS_H_
#define JANKPROBE_TESTS_LIB_ELF_SECTIONS_H_

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

namespace jp::testing {

// A section as the walk hands it over. data may be null (NOBITS, or unreadable); then it has no entries.
struct ElfSection {
  Elf* elf = nullptr;
  const char* name = "";
  GElf_Shdr header{};
  Elf_Data* data = nullptr;

  size_t count() const { return data && header.sh_entsize ? header.sh_size / header.sh_entsize : 0; }
  // Symbol i of a SHT_SYMTAB or SHT_DYNSYM section and its name ("" when it has none).
  bool Symbol(size_t i, GElf_Sym* sym, const char** sym_name) const {
    if (gelf_getsym(data, static_cast<int>(i), sym) == nullptr) return false;
    const char* n = elf_strptr(elf, header.sh_link, sym->st_name);
    *sym_name = n ? n : "";
    return true;
  }
  // The DT_NEEDED names of a SHT_DYNAMIC section, appended in file order.
  void AppendNeeded(std::vector<std::string>* out) const {
    for (size_t i = 0; i < count(); ++i) {
      GElf_Dyn dyn;
      if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag != DT_NEEDED) continue;
      const char* n = elf_strptr(elf, header.sh_link, dyn.d_un.d_val);
      out->push_back(n ? n : "");
    }
  }
};

// Calls `section` for each section of the file at `path` and, if given, `segment` for each program header
// (before the sections). False when the file cannot be opened or is not ELF that libelf reads.
inline bool WalkElf(const char* path, const std::function<void(const ElfSection&)>& section,
                    const std::function<void(const GElf_Phdr&)>& segment = nullptr) {
  if (elf_version(EV_CURRENT) == EV_NONE) return false;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  const bool ok = elf != nullptr && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0;
  size_t phnum = 0;
  if (ok && segment && elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph)) segment(ph);
    }
  }
  for (Elf_Scn* scn = ok ? elf_nextscn(elf, nullptr) : nullptr; scn != nullptr; scn = elf_nextscn(elf, scn)) {
    ElfSection s;
    s.elf = elf;
    if (gelf_getshdr(scn, &s.header) == nullptr) continue;
    const char* n = elf_strptr(elf, shstrndx, s.header.sh_name);
    s.name = n ? n : "";
    s.data = s.header.sh_type == SHT_NOBITS ? nullptr : elf_getdata(scn, nullptr);
    section(s);
  }
  if (elf) elf_end(elf);
  close(fd);
  return ok;
}

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_LIB_ELF_SECTIONS_H_
