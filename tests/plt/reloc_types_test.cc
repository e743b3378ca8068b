#include "plt/reloc_types.h"

#include <elf.h>

#include <cstring>

#include <gtest/gtest.h>

namespace jp::plt {
namespace {

// Numbers from the psABI documents, written out rather than taken from elf.h.
struct Case {
  uint16_t machine;
  uint32_t type;
  bool slot;
  SlotKind kind;
  const char* name;
};

TEST(RelocTypes, ClassifiesTheSlotKindsOfEveryMachine) {
  const Case cases[] = {
      {EM_X86_64, 7, true, SlotKind::kJumpSlot, "R_X86_64_JUMP_SLOT"},
      {EM_X86_64, 6, true, SlotKind::kGlobDat, "R_X86_64_GLOB_DAT"},
      {EM_X86_64, 1, true, SlotKind::kAbsolute, "R_X86_64_64"},
      {EM_X86_64, 8, false, SlotKind::kJumpSlot, "R_X86_64_RELATIVE"},
      {EM_X86_64, 37, false, SlotKind::kJumpSlot, "R_X86_64_IRELATIVE"},
      {EM_386, 7, true, SlotKind::kJumpSlot, "R_386_JMP_SLOT"},
      {EM_386, 6, true, SlotKind::kGlobDat, "R_386_GLOB_DAT"},
      {EM_386, 1, true, SlotKind::kAbsolute, "R_386_32"},
      {EM_386, 8, false, SlotKind::kJumpSlot, "R_386_RELATIVE"},
      {EM_ARM, 22, true, SlotKind::kJumpSlot, "R_ARM_JUMP_SLOT"},
      {EM_ARM, 21, true, SlotKind::kGlobDat, "R_ARM_GLOB_DAT"},
      {EM_ARM, 2, true, SlotKind::kAbsolute, "R_ARM_ABS32"},
      {EM_ARM, 23, false, SlotKind::kJumpSlot, "R_ARM_RELATIVE"},
      {EM_AARCH64, 1026, true, SlotKind::kJumpSlot, "R_AARCH64_JUMP_SLOT"},
      {EM_AARCH64, 1025, true, SlotKind::kGlobDat, "R_AARCH64_GLOB_DAT"},
      {EM_AARCH64, 257, true, SlotKind::kAbsolute, "R_AARCH64_ABS64"},
      {EM_AARCH64, 1027, false, SlotKind::kJumpSlot, "R_AARCH64_RELATIVE"},
      {EM_AARCH64, 1024, false, SlotKind::kJumpSlot, "R_AARCH64_COPY"},
  };
  for (const Case& c : cases) {
    SlotKind kind = SlotKind::kJumpSlot;
    EXPECT_EQ(ClassifySlot(c.machine, c.type, &kind), c.slot) << c.name;
    if (c.slot) {
      EXPECT_EQ(kind, c.kind) << c.name;
    }
    EXPECT_STREQ(RelocTypeName(c.machine, c.type), c.name);
  }
}

TEST(RelocTypes, SameNumberMeansDifferentThingsPerMachine) {
  SlotKind kind;
  // 1 is R_X86_64_64 but R_ARM_PC24 (not a slot); 2 is R_ARM_ABS32 but R_X86_64_PC32.
  EXPECT_FALSE(ClassifySlot(EM_ARM, 1, &kind));
  EXPECT_FALSE(ClassifySlot(EM_X86_64, 2, &kind));
  EXPECT_FALSE(ClassifySlot(EM_AARCH64, 7, &kind));
}

TEST(RelocTypes, UnknownMachinesAndTypes) {
  SlotKind kind;
  EXPECT_FALSE(ClassifySlot(EM_MIPS, 7, &kind));
  EXPECT_STREQ(RelocTypeName(EM_MIPS, 7), "R_UNKNOWN");
  EXPECT_STREQ(RelocTypeName(EM_X86_64, 9999), "R_UNKNOWN");
  EXPECT_TRUE(IsSupportedMachine(EM_ARM));
  EXPECT_FALSE(IsSupportedMachine(EM_RISCV));
  EXPECT_TRUE(MachineIs64(EM_AARCH64));
  EXPECT_FALSE(MachineIs64(EM_386));
}

}  // namespace
}  // namespace jp::plt
