// ParseDynamic on hand-built dynamic tables: vaddr and absolute (glibc-relocated) forms, per-tag
// rebasing, and the failures.
#include "plt/dynamic_section.h"

#include <elf.h>

#include <cstring>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace jp::plt {
namespace {

constexpr uint64_t kDynVaddr = 0x800;

// A fake module: 0x1000 bytes mapped at vaddr 0, .dynamic at 0x800, 64-bit entries.
class DynamicSectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memory_.assign(0x1000, 0);
    bias_ = reinterpret_cast<uintptr_t>(memory_.data());
    Segment s;
    s.vaddr = 0;
    s.memsz = s.filesz = memory_.size();
    s.flags = PF_R | PF_W;
    segments_ = {s};
  }
  void Write(std::vector<std::pair<uint64_t, uint64_t>> entries) {
    std::memset(memory_.data() + kDynVaddr, 0, 0x800);
    uint8_t* p = memory_.data() + kDynVaddr;
    for (auto [tag, val] : entries) {
      std::memcpy(p, &tag, 8);
      std::memcpy(p + 8, &val, 8);
      p += 16;
    }
  }
  Status ParseLoaded(DynamicInfo* out, uint64_t size = 0x100) {
    SegmentMap map;
    Status st = SegmentMap::ForLoaded(bias_, segments_, &map);
    if (!st.ok()) return st;
    DynamicSource src;
    src.vaddr = kDynVaddr;
    src.size = size;
    src.is64 = true;
    src.loaded = true;
    src.bias = bias_;
    return ParseDynamic(map, src, out);
  }

  std::vector<uint8_t> memory_;
  uintptr_t bias_ = 0;
  std::vector<Segment> segments_;
};

TEST_F(DynamicSectionTest, GlibcRelocatedPointersAreRebasedTagByTag) {
  // glibc rewrites DT_STRTAB / DT_SYMTAB / DT_VERSYM but not DT_VERNEED or Android's tags.
  Write({{DT_STRTAB, bias_ + 0x100}, {DT_STRSZ, 0x10}, {DT_SYMTAB, bias_ + 0x200}, {DT_VERSYM, bias_ + 0x280},
         {DT_VERNEED, 0x300}, {DT_VERNEEDNUM, 1}, {kDtAndroidRela, 0x400}, {kDtAndroidRelaSz, 0x20}, {DT_NULL, 0}});
  DynamicInfo d;
  Status st = ParseLoaded(&d);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(d.pointers_were_absolute);
  EXPECT_EQ(d.strtab, 0x100u);
  EXPECT_EQ(d.strsz, 0x10u);  // a d_val, never rebased
  EXPECT_EQ(d.symtab, 0x200u);
  EXPECT_EQ(d.versym, 0x280u);
  EXPECT_EQ(d.verneed, 0x300u);
  EXPECT_EQ(d.verneednum, 1u);
  EXPECT_EQ(d.android_rela, 0x400u);
  EXPECT_EQ(d.android_relasz, 0x20u);
}

TEST_F(DynamicSectionTest, BionicStyleVaddrsAreKept) {
  Write({{DT_STRTAB, 0x100}, {DT_STRSZ, 0x10}, {DT_SYMTAB, 0x200}, {DT_JMPREL, 0x600}, {DT_NULL, 0}});
  DynamicInfo d;
  ASSERT_TRUE(ParseLoaded(&d).ok());
  EXPECT_FALSE(d.pointers_were_absolute);
  EXPECT_EQ(d.strtab, 0x100u);
  EXPECT_EQ(d.symtab, 0x200u);
  EXPECT_EQ(d.jmprel, 0x600u);
}

TEST_F(DynamicSectionTest, TableWithoutTerminatorEndsAtTheSegmentSize) {
  Write({{DT_STRTAB, 0x100}, {DT_STRSZ, 0x10}, {DT_SYMTAB, 0x200}});
  DynamicInfo d;
  ASSERT_TRUE(ParseLoaded(&d, 3 * 16).ok());
  EXPECT_EQ(d.symtab, 0x200u);
}

TEST_F(DynamicSectionTest, FirstOfDuplicateTagsWins) {
  Write({{DT_STRTAB, 0x100}, {DT_STRTAB, 0x180}, {DT_STRSZ, 0x10}, {DT_SYMTAB, 0x200}, {DT_NULL, 0}});
  DynamicInfo d;
  ASSERT_TRUE(ParseLoaded(&d).ok());
  EXPECT_EQ(d.strtab, 0x100u);
}

TEST_F(DynamicSectionTest, Failures) {
  DynamicInfo d;
  Write({{DT_STRSZ, 0x10}, {DT_SYMTAB, 0x200}, {DT_NULL, 0}});
  Status st = ParseLoaded(&d);
  EXPECT_NE(st.message().find("DT_STRTAB"), std::string::npos) << st.message();

  Write({{DT_STRTAB, 0x100}, {DT_STRSZ, 0x10}, {DT_NULL, 0}});
  st = ParseLoaded(&d);
  EXPECT_NE(st.message().find("DT_SYMTAB"), std::string::npos) << st.message();

  Write({{DT_STRTAB, 0x100}, {DT_SYMTAB, 0x200}, {DT_NULL, 0}});
  st = ParseLoaded(&d);
  EXPECT_NE(st.message().find("DT_STRSZ"), std::string::npos) << st.message();

  // Neither a vaddr of the module nor an address inside it.
  Write({{DT_STRTAB, 0x50000}, {DT_STRSZ, 0x10}, {DT_SYMTAB, 0x200}, {DT_NULL, 0}});
  st = ParseLoaded(&d);
  EXPECT_EQ(st.code(), JP_PLT_ERR_MALFORMED_ELF);
  EXPECT_NE(st.message().find("DT_STRTAB"), std::string::npos) << st.message();

  // PT_DYNAMIC running past the segment, and smaller than one entry.
  st = ParseLoaded(&d, 0x900);
  EXPECT_NE(st.message().find("PT_DYNAMIC"), std::string::npos) << st.message();
  st = ParseLoaded(&d, 8);
  EXPECT_NE(st.message().find("PT_DYNAMIC"), std::string::npos) << st.message();
}

TEST_F(DynamicSectionTest, FileImagesAreNeverRebased) {
  Write({{DT_STRTAB, 0x100}, {DT_STRSZ, 0x10}, {DT_SYMTAB, 0x200}, {DT_NULL, 0}});
  SegmentMap map;
  ASSERT_TRUE(SegmentMap::ForFile(memory_.data(), memory_.size(), segments_, &map).ok());
  DynamicSource src;
  src.vaddr = kDynVaddr;
  src.size = 0x100;
  src.is64 = true;
  DynamicInfo d;
  ASSERT_TRUE(ParseDynamic(map, src, &d).ok());
  EXPECT_FALSE(d.pointers_were_absolute);
  EXPECT_EQ(d.strtab, 0x100u);
}

}  // namespace
}  // namespace jp::plt
