#include "tools/jankprobe_elf/libelf_slots.h"

#include <gelf.h>
#include <libelf.h>

#include <map>
#include <memory>

#include "tools/jankprobe_elf/aps2_decoder.h"

namespace jp::elftool {
namespace {

// Relocation type numbers from the psABIs (elf.h names them too; spelled out here so the table reads
// as the list of function-address slots per machine).
struct SlotTypes {
  uint32_t jump_slot;
  uint32_t glob_dat;
  uint32_t absolute;
};

bool SlotTypesFor(uint16_t machine, SlotTypes* t) {
  switch (machine) {
    case EM_X86_64: *t = {R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT, R_X86_64_64}; return true;
    case EM_386: *t = {R_386_JMP_SLOT, R_386_GLOB_DAT, R_386_32}; return true;
    case EM_ARM: *t = {R_ARM_JUMP_SLOT, R_ARM_GLOB_DAT, R_ARM_ABS32}; return true;
    case EM_AARCH64: *t = {R_AARCH64_JUMP_SLOT, R_AARCH64_GLOB_DAT, R_AARCH64_ABS64}; return true;
    default: return false;
  }
}

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};

std::string LibelfError(const char* what) {
  const char* msg = elf_errmsg(-1);
  return std::string(what) + ": " + (msg != nullptr ? msg : "unknown libelf error");
}

// Versions by .gnu.version index, from .gnu.version_r (what the engine reads: DT_VERNEED).
bool ReadVerneed(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, std::map<uint16_t, std::string>* names,
                 std::string* error) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) {
    *error = LibelfError(".gnu.version_r");
    return false;
  }
  int offset = 0;
  for (size_t i = 0; i < shdr.sh_info; ++i) {
    GElf_Verneed need;
    if (gelf_getverneed(data, offset, &need) == nullptr) {
      *error = LibelfError(".gnu.version_r entry");
      return false;
    }
    int aux_offset = offset + static_cast<int>(need.vn_aux);
    for (size_t j = 0; j < need.vn_cnt; ++j) {
      GElf_Vernaux aux;
      if (gelf_getvernaux(data, aux_offset, &aux) == nullptr) {
        *error = LibelfError(".gnu.version_r aux entry");
        return false;
      }
      const char* name = elf_strptr(elf, shdr.sh_link, aux.vna_name);
      if (name == nullptr) {
        *error = ".gnu.version_r: version name outside the string table";
        return false;
      }
      (*names)[static_cast<uint16_t>(aux.vna_other & 0x7fff)] = name;
      if (aux.vna_next == 0) break;
      aux_offset += static_cast<int>(aux.vna_next);
    }
    if (need.vn_next == 0) break;
    offset += static_cast<int>(need.vn_next);
  }
  return true;
}

// Versions a symbol *defines* (.gnu.version_d). The dynamic linker resolves a relocation against a
// defined symbol with its definition's version, so a slot of the library's own export carries it.
// The base entry (VER_FLG_BASE) names the file, not a version.
bool ReadVerdef(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, std::map<uint16_t, std::string>* names,
                std::string* error) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) {
    *error = LibelfError(".gnu.version_d");
    return false;
  }
  int offset = 0;
  for (size_t i = 0; i < shdr.sh_info; ++i) {
    GElf_Verdef def;
    if (gelf_getverdef(data, offset, &def) == nullptr) {
      *error = LibelfError(".gnu.version_d entry");
      return false;
    }
    if (def.vd_cnt > 0 && !(def.vd_flags & VER_FLG_BASE)) {
      GElf_Verdaux aux;
      if (gelf_getverdaux(data, offset + static_cast<int>(def.vd_aux), &aux) == nullptr) {
        *error = LibelfError(".gnu.version_d aux entry");
        return false;
      }
      const char* name = elf_strptr(elf, shdr.sh_link, aux.vda_name);
      if (name == nullptr) {
        *error = ".gnu.version_d: version name outside the string table";
        return false;
      }
      (*names)[static_cast<uint16_t>(def.vd_ndx & 0x7fff)] = name;
    }
    if (def.vd_next == 0) break;
    offset += static_cast<int>(def.vd_next);
  }
  return true;
}

struct RelocationSection {
  Elf_Scn* scn = nullptr;
  GElf_Shdr shdr{};
  std::string name;
  SlotSource source = SlotSource::kDyn;
};

class Reader {
 public:
  Reader(Elf* elf, const uint8_t* file, size_t file_size, LibelfImage* out)
      : elf_(elf), file_(file), file_size_(file_size), out_(out) {}

  bool saw_dynamic() const { return saw_dynamic_; }

  bool Run(std::string* error) {
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf_, &shstrndx) != 0) {
      *error = LibelfError("section header string table");
      return false;
    }
    uint64_t jmprel = 0;
    bool has_jmprel = false;
    std::vector<RelocationSection> relocation_sections;
    for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) {
        *error = LibelfError("section header");
        return false;
      }
      const char* raw_name = elf_strptr(elf_, shstrndx, shdr.sh_name);
      std::string name = raw_name != nullptr ? raw_name : "";
      switch (shdr.sh_type) {
        case SHT_DYNSYM:
          dynsym_ = scn;
          dynsym_shdr_ = shdr;
          break;
        case SHT_GNU_versym:
          versym_ = scn;
          break;
        case SHT_GNU_verneed:
          if (!ReadVerneed(elf_, scn, shdr, &verneed_names_, error)) return false;
          break;
        case SHT_GNU_verdef:
          if (!ReadVerdef(elf_, scn, shdr, &verdef_names_, error)) return false;
          break;
        case SHT_DYNAMIC:
          saw_dynamic_ = true;
          if (!ReadDynamic(scn, &jmprel, &has_jmprel, error)) return false;
          break;
        case SHT_REL:
        case SHT_RELA:
        case kShtAndroidRel:
        case kShtAndroidRela:
          // Only relocations the dynamic loader applies: allocated, against the dynamic symbol table.
          if (shdr.sh_flags & SHF_ALLOC) relocation_sections.push_back({scn, shdr, name, SlotSource::kDyn});
          break;
        case SHT_PROGBITS:
          if ((shdr.sh_flags & SHF_EXECINSTR) && (name == ".plt" || name == ".plt.sec" || name == ".plt.got")) {
            if (!AddCodeSection(shdr, name, error)) return false;
          }
          break;
        default:
          break;
      }
    }
    for (RelocationSection& rs : relocation_sections) {
      if (rs.shdr.sh_type == kShtAndroidRel || rs.shdr.sh_type == kShtAndroidRela) {
        rs.source = SlotSource::kAndroidPacked;
      } else if (has_jmprel ? rs.shdr.sh_addr == jmprel : (rs.name == ".rela.plt" || rs.name == ".rel.plt")) {
        rs.source = SlotSource::kJmpRel;
      }
    }
    // Table order as the engine walks them: DT_JMPREL first... the comparison is by set, so only the
    // listing order depends on this; list the PLT relocations first as readers expect.
    for (const RelocationSection& rs : relocation_sections) {
      if (rs.source == SlotSource::kJmpRel && !WalkSection(rs, error)) return false;
    }
    for (const RelocationSection& rs : relocation_sections) {
      if (rs.source != SlotSource::kJmpRel && !WalkSection(rs, error)) return false;
    }
    return true;
  }

 private:
  bool ReadDynamic(Elf_Scn* scn, uint64_t* jmprel, bool* has_jmprel, std::string* error) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) {
      *error = LibelfError(".dynamic");
      return false;
    }
    GElf_Dyn dyn;
    for (int i = 0; gelf_getdyn(data, i, &dyn) != nullptr; ++i) {
      if (dyn.d_tag == DT_NULL) break;
      if (dyn.d_tag == DT_JMPREL) {
        *jmprel = dyn.d_un.d_ptr;
        *has_jmprel = true;
      } else if (dyn.d_tag == DT_PLTGOT) {
        out_->pltgot = dyn.d_un.d_ptr;
        out_->has_pltgot = true;
      }
    }
    return true;
  }

  // The stub bytes are taken straight from the caller's file buffer (they outlive the Elf handle).
  bool AddCodeSection(const GElf_Shdr& shdr, const std::string& name, std::string* error) {
    if (shdr.sh_size == 0) return true;
    if (shdr.sh_offset > file_size_ || shdr.sh_size > file_size_ - shdr.sh_offset) {
      *error = name + ": section extends past the end of the file";
      return false;
    }
    out_->plt_sections.push_back({name, shdr.sh_addr, file_ + shdr.sh_offset, static_cast<size_t>(shdr.sh_size)});
    return true;
  }

  bool WalkSection(const RelocationSection& rs, std::string* error) {
    if (dynsym_ == nullptr) {
      *error = "relocation section " + rs.name + " but no .dynsym";
      return false;
    }
    if (elf_ndxscn(dynsym_) != rs.shdr.sh_link) return true;  // not against the dynamic symbol table
    Elf_Data* data = elf_getdata(rs.scn, nullptr);
    if (data == nullptr) {
      *error = LibelfError(rs.name.c_str());
      return false;
    }
    // gelf_getrel(a) hands back r_info already widened to the ELF64 layout; APS2 streams carry the
    // image's own layout (ELF32: sym << 8 | type).
    const bool is64 = out_->is_64bit;
    auto packed_sym = [is64](uint64_t info) {
      return static_cast<uint32_t>(is64 ? ELF64_R_SYM(info) : ELF32_R_SYM(static_cast<uint32_t>(info)));
    };
    auto packed_type = [is64](uint64_t info) {
      return static_cast<uint32_t>(is64 ? ELF64_R_TYPE(info) : ELF32_R_TYPE(static_cast<uint32_t>(info)));
    };
    auto sym_of = [](uint64_t info) { return static_cast<uint32_t>(GELF_R_SYM(info)); };
    auto type_of = [](uint64_t info) { return static_cast<uint32_t>(GELF_R_TYPE(info)); };
    if (rs.source == SlotSource::kAndroidPacked) {
      std::vector<PackedRelocation> relocs;
      std::string why;
      if (!DecodeAps2(static_cast<const uint8_t*>(data->d_buf), data->d_size, rs.shdr.sh_type == kShtAndroidRela,
                      &relocs, &why)) {
        *error = rs.name + ": " + why;
        return false;
      }
      out_->packed_relocations += relocs.size();
      for (const PackedRelocation& r : relocs) {
        if (!Consider(rs, r.offset, packed_sym(r.info), packed_type(r.info), r.addend, error)) return false;
      }
      return true;
    }
    if (rs.shdr.sh_entsize == 0) {
      *error = rs.name + ": sh_entsize is 0";
      return false;
    }
    const size_t count = data->d_size / rs.shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      if (rs.shdr.sh_type == SHT_RELA) {
        GElf_Rela rela;
        if (gelf_getrela(data, static_cast<int>(i), &rela) == nullptr) {
          *error = LibelfError(rs.name.c_str());
          return false;
        }
        if (!Consider(rs, rela.r_offset, sym_of(rela.r_info), type_of(rela.r_info), rela.r_addend, error)) {
          return false;
        }
      } else {
        GElf_Rel rel;
        if (gelf_getrel(data, static_cast<int>(i), &rel) == nullptr) {
          *error = LibelfError(rs.name.c_str());
          return false;
        }
        if (!Consider(rs, rel.r_offset, sym_of(rel.r_info), type_of(rel.r_info), 0, error)) return false;
      }
    }
    return true;
  }

  bool Consider(const RelocationSection& rs, uint64_t offset, uint32_t sym_index, uint32_t type, int64_t addend,
                std::string* error) {
    ++out_->relocations_seen;
    SlotClass kind;
    if (!ClassifyRelocation(out_->machine, type, &kind)) return true;
    // A relocation without a symbol (sym 0) fills the slot with a link-time constant: nothing is
    // imported through it.
    if (sym_index == 0) return true;
    GElf_Sym sym{};
    Elf_Data* symdata = elf_getdata(dynsym_, nullptr);
    if (symdata == nullptr || gelf_getsym(symdata, static_cast<int>(sym_index), &sym) == nullptr) {
      *error = rs.name + ": symbol index " + std::to_string(sym_index) + " outside .dynsym";
      return false;
    }
    const char* raw_name = elf_strptr(elf_, dynsym_shdr_.sh_link, sym.st_name);
    if (raw_name == nullptr) {
      *error = rs.name + ": symbol name outside the dynamic string table";
      return false;
    }
    std::string name = raw_name;
    // The contract (plt/elf_image.h): an absolute relocation is a function-pointer slot only when it
    // names a non-local symbol and adds nothing to it. Undefined-weak ones count: when the symbol
    // resolves at run time (__cxa_pure_virtual in a vtable) the word holds a function address.
    if (kind == SlotClass::kAbsolute) {
      const bool local = GELF_ST_BIND(sym.st_info) == STB_LOCAL;
      if (local || addend != 0) return true;
    }
    LibelfSlot slot;
    slot.got_vaddr = offset;
    slot.reloc_type = type;
    slot.kind = kind;
    slot.source = rs.source;
    slot.addend = addend;
    slot.sym_index = sym_index;
    slot.symbol = std::move(name);
    slot.section = rs.name;
    if (versym_ != nullptr) {
      Elf_Data* vdata = elf_getdata(versym_, nullptr);
      GElf_Versym v;
      if (vdata != nullptr && gelf_getversym(vdata, static_cast<int>(sym_index), &v) != nullptr) {
        const uint16_t index = static_cast<uint16_t>(v & 0x7fff);
        auto need = verneed_names_.find(index);
        auto def = verdef_names_.find(index);
        if (need != verneed_names_.end()) {
          slot.version = need->second;
        } else if (def != verdef_names_.end()) {
          slot.version = def->second;
        }
      }
    }
    out_->slots.push_back(std::move(slot));
    return true;
  }

  Elf* elf_;
  const uint8_t* file_;
  size_t file_size_;
  LibelfImage* out_;
  Elf_Scn* dynsym_ = nullptr;
  GElf_Shdr dynsym_shdr_{};
  Elf_Scn* versym_ = nullptr;
  std::map<uint16_t, std::string> verneed_names_;
  std::map<uint16_t, std::string> verdef_names_;
  bool saw_dynamic_ = false;
};

}  // namespace

bool IsSupportedMachine(uint16_t machine) {
  SlotTypes t;
  return SlotTypesFor(machine, &t);
}

const char* MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_AARCH64: return "aarch64";
    default: return "unknown";
  }
}

bool ClassifyRelocation(uint16_t machine, uint32_t type, SlotClass* kind) {
  SlotTypes t;
  if (!SlotTypesFor(machine, &t)) return false;
  if (type == t.jump_slot) *kind = SlotClass::kJumpSlot;
  else if (type == t.glob_dat) *kind = SlotClass::kGlobDat;
  else if (type == t.absolute) *kind = SlotClass::kAbsolute;
  else return false;
  return true;
}

bool ReadWithLibelf(uint8_t* data, size_t size, LibelfImage* out, std::string* error) {
  *out = LibelfImage();
  if (elf_version(EV_CURRENT) == EV_NONE) {
    *error = LibelfError("libelf initialisation");
    return false;
  }
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(reinterpret_cast<char*>(data), size));
  if (!elf) {
    *error = LibelfError("not readable as ELF");
    return false;
  }
  if (elf_kind(elf.get()) != ELF_K_ELF) {
    *error = "not an ELF file";
    return false;
  }
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf.get(), &ehdr) == nullptr) {
    *error = LibelfError("ELF header");
    return false;
  }
  out->machine = ehdr.e_machine;
  out->elf_type = ehdr.e_type;
  out->is_64bit = gelf_getclass(elf.get()) == ELFCLASS64;
  if (!IsSupportedMachine(out->machine)) {
    *error = "unsupported machine " + std::to_string(out->machine) + " (x86_64, i386, arm, aarch64 only)";
    return false;
  }
  // libelf quietly shows no sections when the section header table lies past the end of the file;
  // for this tool that would read as "no imports", so it is an error instead.
  size_t shnum = 0;
  if (elf_getshdrnum(elf.get(), &shnum) != 0) {
    *error = LibelfError("section header count");
    return false;
  }
  if (shnum == 0) {
    *error = "no section headers (the libelf side reads the section table; the engine reads segments)";
    return false;
  }
  const uint64_t table_bytes = uint64_t{shnum} * ehdr.e_shentsize;
  if (ehdr.e_shentsize == 0 || ehdr.e_shoff > size || table_bytes > size - ehdr.e_shoff) {
    *error = "section header table (offset " + std::to_string(ehdr.e_shoff) + ", " + std::to_string(shnum) +
             " entries) extends past the end of the file (" + std::to_string(size) + " bytes): truncated?";
    return false;
  }
  Reader reader(elf.get(), data, size, out);
  if (!reader.Run(error)) return false;
  if (!reader.saw_dynamic()) {
    *error = "no .dynamic section: not a dynamically linked object";
    return false;
  }
  return true;
}

}  // namespace jp::elftool
