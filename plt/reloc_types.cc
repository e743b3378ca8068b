#include "plt/reloc_types.h"

#include <elf.h>

namespace jp::plt {
namespace {

struct TypeInfo {
  uint32_t type;
  const char* name;
};

#define JP_R(x) {x, #x}
constexpr TypeInfo kX86_64[] = {
    JP_R(R_X86_64_NONE),     JP_R(R_X86_64_64),        JP_R(R_X86_64_PC32),     JP_R(R_X86_64_GOT32),
    JP_R(R_X86_64_PLT32),    JP_R(R_X86_64_COPY),      JP_R(R_X86_64_GLOB_DAT), JP_R(R_X86_64_JUMP_SLOT),
    JP_R(R_X86_64_RELATIVE), JP_R(R_X86_64_GOTPCREL),  JP_R(R_X86_64_32),       JP_R(R_X86_64_32S),
    JP_R(R_X86_64_DTPMOD64), JP_R(R_X86_64_DTPOFF64),  JP_R(R_X86_64_TPOFF64),  JP_R(R_X86_64_PC64),
    JP_R(R_X86_64_SIZE32),   JP_R(R_X86_64_SIZE64),    JP_R(R_X86_64_TLSDESC),  JP_R(R_X86_64_IRELATIVE),
    JP_R(R_X86_64_RELATIVE64),
};
constexpr TypeInfo kI386[] = {
    JP_R(R_386_NONE),         JP_R(R_386_32),           JP_R(R_386_PC32),         JP_R(R_386_GOT32),
    JP_R(R_386_PLT32),        JP_R(R_386_COPY),         JP_R(R_386_GLOB_DAT),     JP_R(R_386_JMP_SLOT),
    JP_R(R_386_RELATIVE),     JP_R(R_386_GOTOFF),       JP_R(R_386_GOTPC),        JP_R(R_386_TLS_TPOFF),
    JP_R(R_386_TLS_DTPMOD32), JP_R(R_386_TLS_DTPOFF32), JP_R(R_386_TLS_TPOFF32),  JP_R(R_386_TLS_DESC),
    JP_R(R_386_IRELATIVE),
};
constexpr TypeInfo kArm[] = {
    JP_R(R_ARM_NONE),         JP_R(R_ARM_ABS32),        JP_R(R_ARM_REL32),        JP_R(R_ARM_TLS_DESC),
    JP_R(R_ARM_TLS_DTPMOD32), JP_R(R_ARM_TLS_DTPOFF32), JP_R(R_ARM_TLS_TPOFF32),  JP_R(R_ARM_COPY),
    JP_R(R_ARM_GLOB_DAT),     JP_R(R_ARM_JUMP_SLOT),    JP_R(R_ARM_RELATIVE),     JP_R(R_ARM_IRELATIVE),
};
constexpr TypeInfo kAarch64[] = {
    JP_R(R_AARCH64_NONE),      JP_R(R_AARCH64_ABS64),      JP_R(R_AARCH64_ABS32),     JP_R(R_AARCH64_PREL64),
    JP_R(R_AARCH64_PREL32),    JP_R(R_AARCH64_COPY),       JP_R(R_AARCH64_GLOB_DAT),  JP_R(R_AARCH64_JUMP_SLOT),
    JP_R(R_AARCH64_RELATIVE),  JP_R(R_AARCH64_TLS_DTPMOD), JP_R(R_AARCH64_TLS_DTPREL), JP_R(R_AARCH64_TLS_TPREL),
    JP_R(R_AARCH64_TLSDESC),   JP_R(R_AARCH64_IRELATIVE),
};
#undef JP_R

template <size_t N>
const char* Find(const TypeInfo (&table)[N], uint32_t type) {
  for (const TypeInfo& t : table) {
    if (t.type == type) return t.name;
  }
  return "R_UNKNOWN";
}

}  // namespace

bool SlotTypesFor(uint16_t machine, SlotTypes* out) {
  switch (machine) {
    case EM_X86_64: *out = {R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT, R_X86_64_64}; return true;
    case EM_386: *out = {R_386_JMP_SLOT, R_386_GLOB_DAT, R_386_32}; return true;
    case EM_ARM: *out = {R_ARM_JUMP_SLOT, R_ARM_GLOB_DAT, R_ARM_ABS32}; return true;
    case EM_AARCH64: *out = {R_AARCH64_JUMP_SLOT, R_AARCH64_GLOB_DAT, R_AARCH64_ABS64}; return true;
    default: return false;
  }
}

bool ClassifySlot(uint16_t machine, uint32_t type, SlotKind* kind) {
  SlotTypes t;
  return SlotTypesFor(machine, &t) && t.Classify(type, kind);
}

bool IsSupportedMachine(uint16_t machine) {
  return machine == EM_X86_64 || machine == EM_386 || machine == EM_ARM || machine == EM_AARCH64;
}

bool MachineIs64(uint16_t machine) { return machine == EM_X86_64 || machine == EM_AARCH64; }

const char* RelocTypeName(uint16_t machine, uint32_t type) {
  switch (machine) {
    case EM_X86_64: return Find(kX86_64, type);
    case EM_386: return Find(kI386, type);
    case EM_ARM: return Find(kArm, type);
    case EM_AARCH64: return Find(kAarch64, type);
    default: return "R_UNKNOWN";
  }
}

}  // namespace jp::plt
