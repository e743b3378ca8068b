// The independent side of the differential check: the import-slot list of an ELF file image as
// libelf (elfutils) reads it, through the *section headers* (.rel[a].plt, .rel[a].dyn, Android APS2
// sections, .dynsym, .gnu.version, .gnu.version_r). The engine reads the same facts through the dynamic
// segment (DT_* tags), so the two sides share neither code nor the route to the data.
#ifndef JANKPROBE_TOOLS_JANKPROBE_ELF_LIBELF_SLOTS_H_
#define JANKPROBE_TOOLS_JANKPROBE_ELF_LIBELF_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace jp::elftool {

enum class SlotClass : uint8_t { kJumpSlot, kGlobDat, kAbsolute };
enum class SlotSource : uint8_t { kJmpRel, kDyn, kAndroidPacked };

struct LibelfSlot {
  uint64_t got_vaddr = 0;
  uint32_t reloc_type = 0;
  SlotClass kind = SlotClass::kJumpSlot;
  SlotSource source = SlotSource::kJmpRel;
  int64_t addend = 0;  // explicit RELA addend, 0 for REL
  uint32_t sym_index = 0;
  std::string symbol;
  std::string version;
  std::string section;  // the relocation section it came from, e.g. ".rela.plt"
};

// Code bytes of one PLT-like section, pointing into the caller's file buffer.
struct CodeSection {
  std::string name;
  uint64_t vaddr = 0;
  const uint8_t* bytes = nullptr;
  size_t size = 0;
};

struct LibelfImage {
  uint16_t machine = 0;
  uint16_t elf_type = 0;  // ET_DYN, ET_EXEC...
  bool is_64bit = false;
  bool has_pltgot = false;
  uint64_t pltgot = 0;  // DT_PLTGOT: i386 PIC stubs address the GOT relative to it (ebx)
  std::vector<LibelfSlot> slots;
  std::vector<CodeSection> plt_sections;  // .plt, .plt.sec, .plt.got, in section order
  size_t relocations_seen = 0;            // every dynamic relocation, slot or not
  size_t packed_relocations = 0;          // how many of them came from APS2 sections
};

bool IsSupportedMachine(uint16_t machine);
const char* MachineName(uint16_t machine);  // "x86_64", "i386", "arm", "aarch64", "unknown"

// Classifies a relocation type of `machine` as a slot kind; false for every other type.
bool ClassifyRelocation(uint16_t machine, uint32_t type, SlotClass* kind);

// Reads `data` (the whole file; libelf may write into it, so pass a private copy) with libelf.
// Returns false with a readable reason for anything that is not an ELF file libelf can walk.
bool ReadWithLibelf(uint8_t* data, size_t size, LibelfImage* out, std::string* error);

}  // namespace jp::elftool

#endif  // JANKPROBE_TOOLS_JANKPROBE_ELF_LIBELF_SLOTS_H_
