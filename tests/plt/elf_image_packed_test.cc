// APS2 packed relocations on real lld output: a library packed with --pack-dyn-relocs=android must
// yield the same import slots as the same inputs linked without packing, for all four machines.
#include <elf.h>

#include <cstring>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "plt/elf_image.h"
#include "tests/plt/parser_test_util.h"

namespace jp::plt {
namespace {

using testing::FixturePath;
using testing::ReadFile;

// Layout differs between the two links, so slots are compared by everything but their address.
using SlotFacts = std::tuple<std::string, std::string, SlotKind, uint32_t, int64_t>;

struct Parsed {
  std::vector<uint8_t> file;
  std::unique_ptr<ElfImage> image;
  std::vector<ImportSlot> slots;
};

[[maybe_unused]] void Parse(const std::string& name, Parsed* p) {
  p->file = ReadFile(FixturePath(name));
  ASSERT_FALSE(p->file.empty()) << name;
  Status st = ElfImage::FromFile(p->file.data(), p->file.size(), &p->image);
  ASSERT_TRUE(st.ok()) << name << ": " << st.message();
  st = p->image->ForEachImportSlot([&](const ImportSlot& s) {
    p->slots.push_back(s);
    return true;
  });
  ASSERT_TRUE(st.ok()) << name << ": " << st.message();
}

[[maybe_unused]] std::vector<SlotFacts> Facts(const std::vector<ImportSlot>& slots) {
  std::vector<SlotFacts> f;
  for (const ImportSlot& s : slots) {
    f.emplace_back(std::string(s.symbol), std::string(s.version), s.kind, s.reloc_type, s.addend);
  }
  std::sort(f.begin(), f.end());
  return f;
}

[[maybe_unused]] void ExpectPackedMatchesUnpacked(const std::string& unpacked_name, const std::string& packed_name,
                                 uint16_t machine) {
  Parsed unpacked, packed;
  ASSERT_NO_FATAL_FAILURE(Parse(unpacked_name, &unpacked));
  ASSERT_NO_FATAL_FAILURE(Parse(packed_name, &packed));
  EXPECT_EQ(unpacked.image->machine(), machine);
  EXPECT_EQ(packed.image->machine(), machine);

  testing::SectionView view;
  ASSERT_TRUE(testing::ReadSections(packed.file, &view));
  ASSERT_TRUE(view.has_packed_section) << packed_name << " was not packed by the linker";
  EXPECT_EQ(packed.image->dynamic_symbol_count(), view.dynsym_count);

  EXPECT_EQ(Facts(packed.slots), Facts(unpacked.slots));
  size_t from_packed = std::count_if(packed.slots.begin(), packed.slots.end(),
                                     [](const ImportSlot& s) { return s.table == RelocTable::kAndroidDyn; });
  // fixture_mul (GLOB_DAT) and fixture_sub (absolute) live in the packed table.
  EXPECT_GE(from_packed, 2u);

  // Packed slot addresses are real: each lies in a writable segment of the packed image.
  for (const ImportSlot& s : packed.slots) {
    bool in_writable = false;
    for (const Segment& seg : packed.image->load_segments()) {
      if ((seg.flags & PF_W) && s.got_vaddr >= seg.vaddr && s.got_vaddr - seg.vaddr < seg.memsz) in_writable = true;
    }
    EXPECT_TRUE(in_writable) << s.symbol;
  }

  testing::MachineTypes t = testing::TypesFor(machine);
  auto kind_of = [&](const char* sym) -> std::vector<uint32_t> {
    std::vector<uint32_t> types;
    for (const ImportSlot& s : packed.slots) {
      if (s.symbol == sym) types.push_back(s.reloc_type);
    }
    return types;
  };
  EXPECT_EQ(kind_of("fixture_mul"), std::vector<uint32_t>{t.glob_dat});
  EXPECT_EQ(kind_of("fixture_sub"), std::vector<uint32_t>{t.absolute});
  EXPECT_EQ(kind_of("fixture_add"), std::vector<uint32_t>{t.jump_slot});
}

#if !defined(JP_HAVE_LLD_FIXTURES) && !defined(JP_HAVE_FOREIGN_FIXTURES)
TEST(ElfImagePacked, NeedsLld) { GTEST_SKIP() << "no lld in this toolchain: no APS2 fixtures were built"; }
#endif

#ifdef JP_HAVE_LLD_FIXTURES
TEST(ElfImagePacked, NativeLldPackedMatchesUnpacked) {
  std::vector<uint8_t> f = ReadFile(FixturePath("libplt_lld.so"));
  ASSERT_GT(f.size(), 20u);
  uint16_t machine;
  std::memcpy(&machine, f.data() + 18, 2);
  ExpectPackedMatchesUnpacked("libplt_lld.so", "libplt_lld_packed.so", machine);
}
#endif

#ifdef JP_HAVE_FOREIGN_FIXTURES
struct Abi {
  const char* name;
  uint16_t machine;
};
class ForeignAbi : public ::testing::TestWithParam<Abi> {};

TEST_P(ForeignAbi, PackedMatchesUnpacked) {
  const std::string base = std::string("libplt_foreign_") + GetParam().name;
  ExpectPackedMatchesUnpacked(base + ".so", base + "_packed.so", GetParam().machine);
}

TEST_P(ForeignAbi, UnpackedMatchesSectionHeaders) {
  Parsed p;
  ASSERT_NO_FATAL_FAILURE(Parse(std::string("libplt_foreign_") + GetParam().name + ".so", &p));
  testing::SectionView view;
  ASSERT_TRUE(testing::ReadSections(p.file, &view));
  testing::MachineTypes t = testing::TypesFor(view.machine);
  std::vector<std::tuple<uint64_t, uint32_t, std::string>> expected, got;
  for (const testing::SectionReloc& r : view.relocs) {
    if (r.sym == 0 || r.local) continue;
    if (r.type == t.jump_slot || r.type == t.glob_dat || (r.type == t.absolute && r.addend == 0)) {
      expected.emplace_back(r.offset, r.type, r.symbol);
    }
  }
  for (const ImportSlot& s : p.slots) got.emplace_back(s.got_vaddr, s.reloc_type, std::string(s.symbol));
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(p.image->dynamic_symbol_count(), view.dynsym_count);
  uint64_t v = 0;
  EXPECT_TRUE(p.image->LookupExport("consumer_add", &v));
  EXPECT_NE(v, 0u);
  EXPECT_FALSE(p.image->LookupExport("fixture_add", &v));  // imported, not defined
}

INSTANTIATE_TEST_SUITE_P(AllFour, ForeignAbi,
                         ::testing::Values(Abi{"x86_64", EM_X86_64}, Abi{"i686", EM_386}, Abi{"armv7a", EM_ARM},
                                           Abi{"aarch64", EM_AARCH64}),
                         [](const ::testing::TestParamInfo<Abi>& info) { return std::string(info.param.name); });
#endif

}  // namespace
}  // namespace jp::plt
