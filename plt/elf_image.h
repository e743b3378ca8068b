// One ELF shared object as the hook engine reads it: either a module loaded in this process (read in
// place, through its PT_LOAD segments) or a file image in a buffer (tools, differential tests, fuzzing).
// Both go through the same parser, so what the host tool checks is what the engine runs.
//
// The parser is independent of the host: it reads ELFCLASS32 and ELFCLASS64 images of x86_64, i386, arm
// and aarch64 whatever the build's own architecture is. Every read is bounds-checked against the
// image's readable PT_LOAD segments; inconsistent input yields an error Status, never a crash.
#ifndef JANKPROBE_PLT_ELF_IMAGE_H_
#define JANKPROBE_PLT_ELF_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plt/status.h"

namespace jp::plt {

// What kind of relocation fills a slot. Only these three can hold a plain function address.
enum class SlotKind : uint8_t {
  kJumpSlot,  // R_*_JUMP_SLOT / R_386_JMP_SLOT: calls through the PLT
  kGlobDat,   // R_*_GLOB_DAT: -fno-plt calls, function pointers taken in code
  kAbsolute,  // R_X86_64_64, R_386_32, R_ARM_ABS32, R_AARCH64_ABS64: function pointers in data
};

// Which table a relocation came from.
enum class RelocTable : uint8_t {
  kJmpRel,      // DT_JMPREL / DT_PLTRELSZ
  kDyn,         // DT_REL(A) / DT_REL(A)SZ
  kAndroidDyn,  // DT_ANDROID_REL(A) / DT_ANDROID_REL(A)SZ, APS2 packed
};

struct ImportSlot {
  uint64_t got_vaddr = 0;   // link-time virtual address of the slot; add the load bias at run time
  uint32_t reloc_type = 0;  // raw r_type, meaning depends on machine()
  SlotKind kind = SlotKind::kJumpSlot;
  RelocTable table = RelocTable::kJmpRel;
  int64_t addend = 0;       // RELA addend; 0 for REL (the implicit addend lives in the slot)
  uint32_t sym_index = 0;
  std::string_view symbol;   // name without version; points into the image's string table
  std::string_view version;  // from DT_VERSYM + DT_VERNEED, e.g. "GLIBC_2.2.5"; empty when unversioned
};

struct Segment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t filesz = 0;
  uint64_t offset = 0;
  uint32_t flags = 0;  // PF_R | PF_W | PF_X
};

class ElfImage {
 public:
  // A file image (the whole file in memory). `data` must outlive the ElfImage.
  static Status FromFile(const uint8_t* data, size_t size, std::unique_ptr<ElfImage>* out);

  // A module loaded in this process, as dl_iterate_phdr describes it (dlpi_addr, dlpi_phdr, dlpi_phnum).
  // Handles glibc's habit of rewriting DT_* pointers in a writable .dynamic to absolute addresses.
  static Status FromLoaded(uintptr_t load_bias, const void* phdrs, size_t phnum, std::unique_ptr<ElfImage>* out);

  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  uint16_t machine() const;  // EM_X86_64, EM_386, EM_ARM, EM_AARCH64
  bool is_64bit() const;
  bool is_loaded() const;
  uintptr_t load_bias() const;  // 0 for file images
  const std::vector<Segment>& load_segments() const;
  // PT_GNU_RELRO range (vaddr, size); size 0 when absent.
  uint64_t relro_vaddr() const;
  uint64_t relro_size() const;

  // Every import slot that can hold a function address, from all relocation tables, in table order.
  // The callback returns false to stop early. Relocations of other types (RELATIVE, TLS, COPY...) and
  // absolute relocations against local symbols or with a non-zero RELA addend are skipped (such a word
  // is not a plain imported function address). A relocation naming a symbol index past the symbol
  // count, or a name not NUL-terminated inside DT_STRSZ, stops the walk with Malformed.
  Status ForEachImportSlot(const std::function<bool(const ImportSlot&)>& fn) const;

  // Slots whose symbol name is `symbol` (and, if `version` is not empty, whose version equals it).
  // `out` is cleared first. Cost: one pass over the relocations, one name compare per candidate.
  Status FindImportSlots(std::string_view symbol, std::string_view version, std::vector<ImportSlot>* out) const;

  // Address (link-time vaddr) of a symbol this image *defines*, found through DT_GNU_HASH or DT_HASH.
  // Returns false when not defined here.
  bool LookupExport(std::string_view symbol, uint64_t* vaddr) const;

  // Number of entries in the dynamic symbol table (from DT_HASH nchain or the DT_GNU_HASH chains).
  size_t dynamic_symbol_count() const;

  // True for a loaded module whose .dynamic held absolute addresses (glibc's ld.so rewrites the d_ptr
  // entries of a writable .dynamic); the parser rebased them. Always false for file images.
  bool dynamic_pointers_were_absolute() const;

  struct Impl;

 private:
  explicit ElfImage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Human-readable relocation type name for a machine ("R_X86_64_JUMP_SLOT"), for tools and errors.
const char* RelocTypeName(uint16_t machine, uint32_t type);

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_ELF_IMAGE_H_
