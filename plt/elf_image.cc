// ElfImage: ties the header/program-header reading to the per-table parsers (segment_map,
// dynamic_section, symbol_table, symbol_versions, reloc_walker) and filters relocations down to
// import slots.
#include "plt/elf_image.h"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "plt/byte_reader.h"
#include "plt/dynamic_section.h"
#include "plt/reloc_types.h"
#include "plt/reloc_walker.h"
#include "plt/segment_map.h"
#include "plt/symbol_table.h"
#include "plt/symbol_versions.h"

namespace jp::plt {

struct ElfImage::Impl {
  uint16_t machine = 0;
  bool is64 = false;
  bool loaded = false;
  uintptr_t bias = 0;
  std::vector<Segment> segments;
  uint64_t relro_vaddr = 0, relro_size = 0;
  uint64_t dynamic_vaddr = 0, dynamic_size = 0;
  bool has_dynamic = false;
  SegmentMap map;
  DynamicInfo dyn;
  SymbolTable symbols;
  SymbolVersions versions;
  RelocWalker relocs;
};

namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Reads the program headers common to both sources: PT_LOAD, PT_DYNAMIC, PT_GNU_RELRO.
Status ReadProgramHeaders(const uint8_t* phdrs, size_t phnum, bool is64, bool loaded, ElfImage::Impl* im) {
  const size_t entsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  for (size_t i = 0; i < phnum; ++i) {
    const uint8_t* p = phdrs + i * entsize;
    uint32_t type = Load<uint32_t>(p);
    Segment s;
    if (is64) {
      s.flags = Load<uint32_t>(p + 4);
      s.offset = Load<uint64_t>(p + 8);
      s.vaddr = Load<uint64_t>(p + 16);
      s.filesz = Load<uint64_t>(p + 32);
      s.memsz = Load<uint64_t>(p + 40);
    } else {
      s.offset = Load<uint32_t>(p + 4);
      s.vaddr = Load<uint32_t>(p + 8);
      s.filesz = Load<uint32_t>(p + 16);
      s.memsz = Load<uint32_t>(p + 20);
      s.flags = Load<uint32_t>(p + 24);
    }
    if (type == PT_LOAD) {
      im->segments.push_back(s);
    } else if (type == PT_DYNAMIC && !im->has_dynamic) {
      im->has_dynamic = true;
      im->dynamic_vaddr = s.vaddr;
      im->dynamic_size = loaded ? s.memsz : s.filesz;
    } else if (type == PT_GNU_RELRO) {
      im->relro_vaddr = s.vaddr;
      im->relro_size = s.memsz;
    }
  }
  if (im->segments.empty()) return Status::Malformed("no PT_LOAD program header");
  if (!im->has_dynamic) return Status::Malformed("no PT_DYNAMIC program header: not a dynamically linked object");
  return Status::Ok();
}

// Everything after the segments are known: dynamic section, symbols, versions, relocation tables.
Status ParseTables(ElfImage::Impl* im) {
  DynamicSource src;
  src.vaddr = im->dynamic_vaddr;
  src.size = im->dynamic_size;
  src.is64 = im->is64;
  src.loaded = im->loaded;
  src.bias = im->bias;
  Status st = ParseDynamic(im->map, src, &im->dyn);
  if (!st.ok()) return st;
  st = im->symbols.Init(im->map, im->is64, im->dyn);
  if (!st.ok()) return st;
  st = im->versions.Init(im->map, im->dyn, im->symbols);
  if (!st.ok()) return st;
  // Every relocation patches its own word inside the image, so an image spanning S bytes cannot have
  // more than S / 4 of them; the hard cap keeps a forged APS2 count from a span of 2^64 harmless
  // (real libraries have well under a million relocations).
  constexpr uint64_t kHardCap = uint64_t{1} << 24;
  uint64_t span_cap = (im->map.max_vaddr() - im->map.min_vaddr()) / 4;
  return im->relocs.Init(im->map, im->is64, im->dyn, span_cap < kHardCap ? span_cap : kHardCap);
}

uint16_t HostMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__i386__)
  return EM_386;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__arm__)
  return EM_ARM;
#else
  return EM_NONE;
#endif
}

}  // namespace

ElfImage::ElfImage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ElfImage::~ElfImage() = default;

Status ElfImage::FromFile(const uint8_t* data, size_t size, std::unique_ptr<ElfImage>* out) {
  if (data == nullptr || out == nullptr) return Status::Invalid("null image or output");
  if (size < EI_NIDENT || std::memcmp(data, ELFMAG, SELFMAG) != 0) return Status::Malformed("not an ELF file (bad magic)");
  const uint8_t cls = data[EI_CLASS];
  if (cls != ELFCLASS32 && cls != ELFCLASS64) return Status::Malformed("unknown ELF class " + std::to_string(cls));
  if (data[EI_DATA] != ELFDATA2LSB) return Status::Malformed("not a little-endian ELF file");
  const bool is64 = cls == ELFCLASS64;
  const size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (size < ehsize) return Status::Malformed("file ends inside the ELF header");

  auto im = std::make_unique<Impl>();
  im->is64 = is64;
  im->machine = Load<uint16_t>(data + 18);
  if (!IsSupportedMachine(im->machine)) {
    return Status::Malformed("unsupported machine " + std::to_string(im->machine));
  }
  if (MachineIs64(im->machine) != is64) {
    return Status::Malformed("ELF class does not match machine " + std::to_string(im->machine));
  }
  uint64_t phoff = is64 ? Load<uint64_t>(data + 32) : Load<uint32_t>(data + 28);
  uint16_t phentsize = Load<uint16_t>(data + (is64 ? 54 : 42));
  uint16_t phnum = Load<uint16_t>(data + (is64 ? 56 : 44));
  const size_t want_ent = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  if (phentsize != want_ent) {
    return Status::Malformed("e_phentsize " + std::to_string(phentsize) + ", expected " + std::to_string(want_ent));
  }
  uint64_t ph_end;
  if (phnum == 0 || AddOverflows(phoff, uint64_t{phnum} * phentsize, &ph_end) || ph_end > size) {
    return Status::Malformed("program headers (e_phoff " + Hex(phoff) + ", e_phnum " + std::to_string(phnum) +
                             ") are not inside the file");
  }
  Status st = ReadProgramHeaders(data + phoff, phnum, is64, false, im.get());
  if (st.ok()) st = SegmentMap::ForFile(data, size, im->segments, &im->map);
  if (st.ok()) st = ParseTables(im.get());
  if (!st.ok()) return st;
  out->reset(new ElfImage(std::move(im)));
  return Status::Ok();
}

Status ElfImage::FromLoaded(uintptr_t load_bias, const void* phdrs, size_t phnum, std::unique_ptr<ElfImage>* out) {
  if (phdrs == nullptr || phnum == 0 || out == nullptr) return Status::Invalid("no program headers");
  auto im = std::make_unique<Impl>();
  im->is64 = sizeof(void*) == 8;
  im->loaded = true;
  im->bias = load_bias;
  Status st = ReadProgramHeaders(static_cast<const uint8_t*>(phdrs), phnum, im->is64, true, im.get());
  if (st.ok()) st = SegmentMap::ForLoaded(load_bias, im->segments, &im->map);
  if (!st.ok()) return st;
  // The ELF header is mapped with the segment at file offset 0 (in practice always); without it the
  // module can only be of this process's own machine.
  im->machine = HostMachine();
  for (const Segment& s : im->segments) {
    if (s.offset != 0) continue;
    const uint8_t* eh = im->map.Translate(s.vaddr, im->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr));
    if (eh != nullptr && std::memcmp(eh, ELFMAG, SELFMAG) == 0) {
      if (eh[EI_CLASS] != (im->is64 ? ELFCLASS64 : ELFCLASS32)) {
        return Status::Malformed("loaded module's ELF class differs from the process's");
      }
      im->machine = Load<uint16_t>(eh + 18);
    }
    break;
  }
  if (!IsSupportedMachine(im->machine)) return Status::Malformed("unsupported machine " + std::to_string(im->machine));
  st = ParseTables(im.get());
  if (!st.ok()) return st;
  out->reset(new ElfImage(std::move(im)));
  return Status::Ok();
}

uint16_t ElfImage::machine() const { return impl_->machine; }
bool ElfImage::is_64bit() const { return impl_->is64; }
bool ElfImage::is_loaded() const { return impl_->loaded; }
uintptr_t ElfImage::load_bias() const { return impl_->bias; }
const std::vector<Segment>& ElfImage::load_segments() const { return impl_->segments; }
uint64_t ElfImage::relro_vaddr() const { return impl_->relro_vaddr; }
uint64_t ElfImage::relro_size() const { return impl_->relro_size; }
size_t ElfImage::dynamic_symbol_count() const { return impl_->symbols.count(); }
bool ElfImage::dynamic_pointers_were_absolute() const { return impl_->dyn.pointers_were_absolute; }

namespace {

// Shared by ForEachImportSlot and FindImportSlots: decides whether a relocation is an import slot.
// With `name_filter`, the symbol indices carrying that name are looked up once through the hash
// tables, so the pass over the relocations compares integers and touches neither the symbol nor the
// string table for relocations of other symbols (libstdc++ has ~5000 relocations).
// The part of the walk that runs only for candidate relocations; kept out of line so the per-
// relocation loop stays small enough to inline.
template <typename Fn>
__attribute__((noinline)) bool EmitSlot(const ElfImage::Impl& im, const Reloc& r, const SlotTypes& types,
                                        const std::string_view* name_filter, bool by_index, Status* err, Fn& fn) {
  SlotKind kind;
  if (!types.Classify(r.type, &kind)) return true;
  Symbol s;
  im.symbols.Get(r.sym, &s);
  // A data word holding a local symbol or symbol+offset is not a function pointer anyone imports.
  if (kind == SlotKind::kAbsolute && (s.bind() == STB_LOCAL || r.addend != 0)) return true;
  if (name_filter != nullptr && !by_index && !im.symbols.StringEquals(s.name, *name_filter)) return true;
  ImportSlot slot;
  if (!im.symbols.StringAt(s.name, &slot.symbol)) {
    *err = Status::Malformed("name of symbol " + std::to_string(r.sym) + " (string offset " + std::to_string(s.name) +
                             ") is not NUL-terminated inside DT_STRSZ " + std::to_string(im.dyn.strsz));
    return false;
  }
  slot.got_vaddr = r.offset;
  slot.reloc_type = r.type;
  slot.kind = kind;
  slot.table = r.table;
  slot.addend = r.addend;
  slot.sym_index = r.sym;
  slot.version = im.versions.VersionOf(r.sym);
  return fn(static_cast<const ImportSlot&>(slot));
}

__attribute__((noinline)) Status BadSymbolIndex(const Reloc& r, uint64_t count) {
  return Status::Malformed("relocation at " + Hex(r.offset) + " names symbol " + std::to_string(r.sym) +
                           " but the table has " + std::to_string(count));
}

// Shared by ForEachImportSlot and FindImportSlots. With `name_filter`, the symbol indices carrying
// that name are looked up once through the hash tables, so the pass over the relocations compares
// integers and touches neither the symbol nor the string table for other symbols' relocations
// (libstdc++ has ~5000 relocations; a hook install must stay well under 50 us).
template <typename Fn>
Status WalkSlots(const ElfImage::Impl& im, const std::string_view* name_filter, Fn&& fn) {
  constexpr size_t kMaxCandidates = 16;
  uint32_t candidates[kMaxCandidates];
  size_t ncandidates = 0;
  bool by_index = false;
  if (name_filter != nullptr) {
    ncandidates = im.symbols.FindIndices(*name_filter, candidates, kMaxCandidates);
    by_index = ncandidates <= kMaxCandidates;  // else: too many same-named symbols, compare names
  }
  const uint64_t symbol_count = im.symbols.readable_count();
  SlotTypes types;
  SlotTypesFor(im.machine, &types);  // the machine was checked when the image was parsed
  Status err;
  Status st = im.relocs.ForEach([&](const Reloc& r) {
    if (r.sym == 0) return true;
    if (__builtin_expect(r.sym >= symbol_count, 0)) {
      err = BadSymbolIndex(r, symbol_count);
      return false;
    }
    if (by_index) {
      bool candidate = false;
      for (size_t i = 0; i < ncandidates; ++i) candidate |= candidates[i] == r.sym;
      if (!candidate) return true;
    }
    return EmitSlot(im, r, types, name_filter, by_index, &err, fn);
  });
  if (!err.ok()) return err;
  return st;
}

}  // namespace

Status ElfImage::ForEachImportSlot(const std::function<bool(const ImportSlot&)>& fn) const {
  return WalkSlots(*impl_, nullptr, fn);
}

Status ElfImage::FindImportSlots(std::string_view symbol, std::string_view version,
                                 std::vector<ImportSlot>* out) const {
  if (out == nullptr) return Status::Invalid("null output vector");
  out->clear();
  return WalkSlots(*impl_, &symbol, [&](const ImportSlot& slot) {
    if (version.empty() || slot.version == version) out->push_back(slot);
    return true;
  });
}

bool ElfImage::LookupExport(std::string_view symbol, uint64_t* vaddr) const {
  uint64_t v;
  if (!impl_->symbols.LookupDefined(symbol, &impl_->versions, &v)) return false;
  if (vaddr != nullptr) *vaddr = v;
  return true;
}

}  // namespace jp::plt
