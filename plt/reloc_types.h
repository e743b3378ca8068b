// Per-machine meaning of relocation types: which ones fill a slot that can hold a function address
// (JUMP_SLOT, GLOB_DAT, word-sized absolute), and readable names for tools and error messages.
#ifndef JANKPROBE_PLT_RELOC_TYPES_H_
#define JANKPROBE_PLT_RELOC_TYPES_H_

#include <cstdint>

#include "plt/elf_image.h"

namespace jp::plt {

// True when (machine, type) is a slot-filling relocation; sets *kind.
bool ClassifySlot(uint16_t machine, uint32_t type, SlotKind* kind);

// The three slot-filling type numbers of one machine, for classifying in a hot loop without a
// per-relocation call. False for an unsupported machine.
struct SlotTypes {
  uint32_t jump_slot = 0, glob_dat = 0, absolute = 0;

  bool Classify(uint32_t type, SlotKind* kind) const {
    if (type == jump_slot) {
      *kind = SlotKind::kJumpSlot;
    } else if (type == glob_dat) {
      *kind = SlotKind::kGlobDat;
    } else if (type == absolute) {
      *kind = SlotKind::kAbsolute;
    } else {
      return false;
    }
    return true;
  }
};
bool SlotTypesFor(uint16_t machine, SlotTypes* out);

// Is `machine` one the parser understands (EM_X86_64, EM_386, EM_ARM, EM_AARCH64)?
bool IsSupportedMachine(uint16_t machine);
// The ELF class a supported machine uses (true for ELFCLASS64).
bool MachineIs64(uint16_t machine);

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_RELOC_TYPES_H_
