#include "tests/plt/parser_test_util.h"

#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

namespace jp::plt::testing {

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string FixturePath(const std::string& name) { return std::string(JP_PLT_FIXTURE_DIR) + "/" + name; }

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

namespace {

template <typename T>
T Get(const std::vector<uint8_t>& f, uint64_t off) {
  T v{};
  if (off + sizeof(T) <= f.size()) std::memcpy(&v, f.data() + off, sizeof(T));
  return v;
}

template <typename Ehdr, typename Shdr, typename Sym, typename Rel, typename Rela>
bool ReadSectionsT(const std::vector<uint8_t>& f, SectionView* out, bool is64) {
  auto eh = Get<Ehdr>(f, 0);
  out->machine = eh.e_machine;
  out->is64 = is64;
  if (eh.e_shoff == 0 || eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Shdr) > f.size()) return false;
  std::vector<Shdr> sh(eh.e_shnum);
  for (size_t i = 0; i < sh.size(); ++i) sh[i] = Get<Shdr>(f, eh.e_shoff + i * sizeof(Shdr));
  // DT_JMPREL tells which relocation section is the PLT one.
  uint64_t jmprel = 0;
  for (const Shdr& s : sh) {
    if (s.sh_type != SHT_DYNAMIC) continue;
    for (uint64_t o = s.sh_offset; o + 2 * sizeof(s.sh_addr) <= s.sh_offset + s.sh_size; o += 2 * sizeof(s.sh_addr)) {
      uint64_t tag = is64 ? Get<uint64_t>(f, o) : Get<uint32_t>(f, o);
      if (tag == DT_JMPREL) jmprel = is64 ? Get<uint64_t>(f, o + 8) : Get<uint32_t>(f, o + 4);
    }
  }
  for (const Shdr& s : sh) {
    if (s.sh_type == SHT_DYNSYM) out->dynsym_count = s.sh_size / s.sh_entsize;
    if (s.sh_type == 0x60000001 || s.sh_type == 0x60000002) out->has_packed_section = true;
    if (s.sh_type != SHT_REL && s.sh_type != SHT_RELA) continue;
    if (s.sh_link >= sh.size()) return false;
    const Shdr& symsec = sh[s.sh_link];
    if (symsec.sh_link >= sh.size()) return false;
    const Shdr& strsec = sh[symsec.sh_link];
    const bool rela = s.sh_type == SHT_RELA;
    const uint64_t ent = rela ? sizeof(Rela) : sizeof(Rel);
    for (uint64_t o = s.sh_offset; o + ent <= s.sh_offset + s.sh_size; o += ent) {
      SectionReloc r;
      uint64_t info;
      if (rela) {
        auto e = Get<Rela>(f, o);
        r.offset = e.r_offset;
        info = e.r_info;
        r.addend = e.r_addend;
      } else {
        auto e = Get<Rel>(f, o);
        r.offset = e.r_offset;
        info = e.r_info;
      }
      r.sym = is64 ? static_cast<uint32_t>(info >> 32) : static_cast<uint32_t>(info >> 8);
      r.type = is64 ? static_cast<uint32_t>(info & 0xffffffff) : static_cast<uint32_t>(info & 0xff);
      r.plt = s.sh_addr == jmprel;
      if (r.sym != 0) {
        auto sym = Get<Sym>(f, symsec.sh_offset + uint64_t{r.sym} * sizeof(Sym));
        r.local = (sym.st_info >> 4) == STB_LOCAL;
        r.symbol = reinterpret_cast<const char*>(f.data() + strsec.sh_offset + sym.st_name);
      }
      out->relocs.push_back(r);
    }
  }
  return true;
}

}  // namespace

bool ReadSections(const std::vector<uint8_t>& file, SectionView* out) {
  *out = SectionView();
  if (file.size() < sizeof(Elf64_Ehdr) || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0) return false;
  if (file[EI_CLASS] == ELFCLASS64) {
    return ReadSectionsT<Elf64_Ehdr, Elf64_Shdr, Elf64_Sym, Elf64_Rel, Elf64_Rela>(file, out, true);
  }
  return ReadSectionsT<Elf32_Ehdr, Elf32_Shdr, Elf32_Sym, Elf32_Rel, Elf32_Rela>(file, out, false);
}

MachineTypes TypesFor(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return {7, 6, 1};
    case EM_386: return {7, 6, 1};
    case EM_ARM: return {22, 21, 2};
    case EM_AARCH64: return {1026, 1025, 257};
    default: return {0, 0, 0};
  }
}

uint64_t ReadWord(const std::vector<uint8_t>& f, uint64_t off, bool is64) {
  return is64 ? Get<uint64_t>(f, off) : Get<uint32_t>(f, off);
}

void WriteWord(std::vector<uint8_t>* f, uint64_t off, bool is64, uint64_t v) {
  if (is64) {
    std::memcpy(f->data() + off, &v, 8);
  } else {
    uint32_t w = static_cast<uint32_t>(v);
    std::memcpy(f->data() + off, &w, 4);
  }
}

uint64_t DynamicValueOffset(const std::vector<uint8_t>& f, uint64_t tag) {
  const bool is64 = f[EI_CLASS] == ELFCLASS64;
  uint64_t phoff = is64 ? Get<uint64_t>(f, 32) : Get<uint32_t>(f, 28);
  uint16_t phnum = Get<uint16_t>(f, is64 ? 56 : 44);
  const uint64_t phent = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  for (uint16_t i = 0; i < phnum; ++i) {
    uint64_t p = phoff + i * phent;
    if (Get<uint32_t>(f, p) != PT_DYNAMIC) continue;
    uint64_t off = is64 ? Get<uint64_t>(f, p + 8) : Get<uint32_t>(f, p + 4);
    uint64_t size = is64 ? Get<uint64_t>(f, p + 32) : Get<uint32_t>(f, p + 16);
    const uint64_t w = is64 ? 8 : 4;
    for (uint64_t o = off; o + 2 * w <= off + size; o += 2 * w) {
      uint64_t t = ReadWord(f, o, is64);
      if (t == tag) return o + w;
      if (t == DT_NULL) break;
    }
  }
  return 0;
}

namespace {
int Collect(struct dl_phdr_info* info, size_t, void* data) {
  auto* all = static_cast<std::vector<LoadedModule>*>(data);
  LoadedModule m;
  m.bias = info->dlpi_addr;
  m.phdrs = info->dlpi_phdr;
  m.phnum = info->dlpi_phnum;
  m.name = info->dlpi_name ? info->dlpi_name : "";
  all->push_back(m);
  return 0;
}
}  // namespace

std::vector<LoadedModule> AllLoaded() {
  std::vector<LoadedModule> all;
  dl_iterate_phdr(Collect, &all);
  return all;
}

bool FindLoaded(const std::string& name_part, LoadedModule* out) {
  for (const LoadedModule& m : AllLoaded()) {
    if (m.name.find(name_part) != std::string::npos) {
      *out = m;
      return true;
    }
  }
  return false;
}

}  // namespace jp::plt::testing

namespace jp::plt::testing {
namespace {
template <typename F>
void ForEachLoad(const std::vector<uint8_t>& f, F&& fn) {
  const bool is64 = f[EI_CLASS] == ELFCLASS64;
  uint64_t phoff = is64 ? Get<uint64_t>(f, 32) : Get<uint32_t>(f, 28);
  uint16_t phnum = Get<uint16_t>(f, is64 ? 56 : 44);
  const uint64_t phent = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  for (uint16_t i = 0; i < phnum; ++i) {
    uint64_t p = phoff + i * phent;
    if (Get<uint32_t>(f, p) != PT_LOAD) continue;
    uint64_t off = is64 ? Get<uint64_t>(f, p + 8) : Get<uint32_t>(f, p + 4);
    uint64_t vaddr = is64 ? Get<uint64_t>(f, p + 16) : Get<uint32_t>(f, p + 8);
    uint64_t filesz = is64 ? Get<uint64_t>(f, p + 32) : Get<uint32_t>(f, p + 16);
    fn(off, vaddr, filesz);
  }
}
}  // namespace

uint64_t VaddrToFileOffset(const std::vector<uint8_t>& file, uint64_t vaddr) {
  uint64_t result = 0;
  ForEachLoad(file, [&](uint64_t off, uint64_t va, uint64_t filesz) {
    if (vaddr >= va && vaddr - va < filesz) result = off + (vaddr - va);
  });
  return result;
}

uint64_t LoadSegmentsFileEnd(const std::vector<uint8_t>& file) {
  uint64_t end = 0;
  ForEachLoad(file, [&](uint64_t off, uint64_t, uint64_t filesz) { end = std::max(end, off + filesz); });
  return end;
}
}  // namespace jp::plt::testing
