// Slot writes: the run-time page protection derived from the program headers matches what the loader
// set (checked against /proc/self/maps), and a write into a read-only RELRO page puts it back.
#include "plt/got_patcher.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plt/elf_image.h"
#include "plt/module_list.h"
#include "tests/fixtures/hook/callers.h"
#include "tests/fixtures/hook/target.h"

namespace jp::plt {
namespace {

// Protection of the mapping containing `address`, from /proc/self/maps (the ground truth).
int MappedProtection(uintptr_t address) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return -1;
  char line[512];
  int prot = -1;
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    if (address < start || address >= end) continue;
    prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | (perms[2] == 'x' ? PROT_EXEC : 0);
    break;
  }
  std::fclose(maps);
  return prot;
}

struct FoundSlot {
  uintptr_t address = 0;
  int derived_protection = -1;
  SlotKind kind = SlotKind::kJumpSlot;
};

// The module's slots for jp_target_add with the protection SlotPageProtection derives.
std::vector<FoundSlot> SlotsOf(const char* file_name) {
  std::vector<FoundSlot> found;
  CallerSpec spec(file_name);
  ForEachLoadedModule([&](const LoadedModule& m) {
    if (!spec.Matches(m)) return true;
    std::unique_ptr<ElfImage> image;
    Status status = ElfImage::FromLoaded(m.load_bias, m.phdrs, m.phnum, &image);
    EXPECT_TRUE(status.ok()) << status.message();
    if (!status.ok()) return false;
    std::vector<ImportSlot> slots;
    EXPECT_TRUE(image->FindImportSlots("jp_target_add", "", &slots).ok());
    for (const ImportSlot& s : slots) {
      uintptr_t address = m.load_bias + s.got_vaddr;
      found.push_back({address, SlotPageProtection(*image, address), s.kind});
    }
    return false;
  });
  return found;
}

class Protection : public ::testing::TestWithParam<const char*> {};

TEST_P(Protection, DerivedProtectionMatchesTheMapping) {
  // Referencing every fixture keeps it loaded (the linker may drop unreferenced DT_NEEDED entries).
  for (auto call : {&lazy_call_add, &partial_call_add, &full_call_add, &noplt_call_add, &data_call_add}) {
    ASSERT_EQ(call(1, 1), 2);
  }
  std::vector<FoundSlot> slots = SlotsOf(GetParam());
  ASSERT_FALSE(slots.empty());
  for (const FoundSlot& slot : slots) EXPECT_EQ(slot.derived_protection, MappedProtection(slot.address)) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Protection,
                         ::testing::Values("libjp_hook_lazy.so", "libjp_hook_partial.so", "libjp_hook_full.so",
                                           "libjp_hook_noplt.so", "libjp_hook_data.so"));

TEST(WriteSlot, FullRelroPageIsReadOnlyAgainAfterTheWrite) {
  std::vector<FoundSlot> slots = SlotsOf("libjp_hook_full.so");
  ASSERT_FALSE(slots.empty());
  const FoundSlot& slot = slots[0];
  ASSERT_EQ(slot.derived_protection, PROT_READ);
  void* original = ReadSlot(slot.address);
  int (*replacement)(int, int) = [](int a, int b) { return a * b; };
  ASSERT_TRUE(WriteSlot(slot.address, reinterpret_cast<void*>(replacement), slot.derived_protection,
                        "libjp_hook_full.so", "jp_target_add").ok());
  EXPECT_EQ(MappedProtection(slot.address), PROT_READ);
  EXPECT_EQ(ReadSlot(slot.address), reinterpret_cast<void*>(replacement));
  EXPECT_EQ(full_call_add(6, 7), 42);  // the call really goes through the slot
  ASSERT_TRUE(WriteSlot(slot.address, original, slot.derived_protection, "libjp_hook_full.so", "jp_target_add").ok());
  EXPECT_EQ(full_call_add(6, 7), 13);
  EXPECT_EQ(MappedProtection(slot.address), PROT_READ);
}

TEST(WriteSlot, WritablePageStaysWritable) {
  EXPECT_EQ(partial_call_add(0, 0), 0);  // bind the lazy slot
  std::vector<FoundSlot> slots = SlotsOf("libjp_hook_partial.so");
  ASSERT_FALSE(slots.empty());
  const FoundSlot& slot = slots[0];
  ASSERT_EQ(slot.derived_protection, PROT_READ | PROT_WRITE);
  void* original = ReadSlot(slot.address);
  ASSERT_TRUE(WriteSlot(slot.address, original, slot.derived_protection, "libjp_hook_partial.so", "jp_target_add").ok());
  EXPECT_EQ(MappedProtection(slot.address), PROT_READ | PROT_WRITE);
}

TEST(WriteSlot, MisalignedSlotIsRefusedWithAReason) {
  alignas(void*) char buffer[2 * sizeof(void*)] = {};
  Status status = WriteSlot(reinterpret_cast<uintptr_t>(buffer + 1), nullptr, PROT_READ | PROT_WRITE, "libx.so", "f");
  EXPECT_EQ(status.code(), JP_PLT_ERR_MALFORMED_ELF);
  EXPECT_NE(status.message().find("libx.so"), std::string::npos);
}

}  // namespace
}  // namespace jp::plt
