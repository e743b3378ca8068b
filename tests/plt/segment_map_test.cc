#include "plt/segment_map.h"

#include <elf.h>

#include <vector>

#include <gtest/gtest.h>

namespace jp::plt {
namespace {

Segment Seg(uint64_t vaddr, uint64_t memsz, uint64_t filesz, uint64_t offset, uint32_t flags) {
  Segment s;
  s.vaddr = vaddr;
  s.memsz = memsz;
  s.filesz = filesz;
  s.offset = offset;
  s.flags = flags;
  return s;
}

TEST(SegmentMap, FileImageTranslatesOnlyFileBackedReadableBytes) {
  std::vector<uint8_t> file(0x300);
  for (size_t i = 0; i < file.size(); ++i) file[i] = static_cast<uint8_t>(i);
  SegmentMap map;
  ASSERT_TRUE(SegmentMap::ForFile(file.data(), file.size(),
                                  {Seg(0, 0x100, 0x100, 0, PF_R | PF_X), Seg(0x1100, 0x200, 0x80, 0x100, PF_R | PF_W),
                                   Seg(0x5000, 0x100, 0x100, 0x200, PF_X)},
                                  &map)
                  .ok());
  EXPECT_EQ(map.Translate(0x10, 4), file.data() + 0x10);
  EXPECT_EQ(map.Translate(0x1100, 0x80), file.data() + 0x100);
  EXPECT_EQ(map.Translate(0x117f, 1), file.data() + 0x17f);
  EXPECT_EQ(map.Translate(0x1180, 1), nullptr);  // .bss has no file bytes
  EXPECT_EQ(map.Translate(0xfe, 4), nullptr);    // straddles the end of a segment
  EXPECT_EQ(map.Translate(0x100, 1), nullptr);   // between segments
  EXPECT_EQ(map.Translate(0x5000, 1), nullptr);  // execute-only
  EXPECT_EQ(map.Translate(UINT64_MAX, 2), nullptr);
  EXPECT_EQ(map.Translate(0x10, UINT64_MAX), nullptr);
  EXPECT_EQ(map.min_vaddr(), 0u);
  EXPECT_EQ(map.max_vaddr(), 0x5100u);
  EXPECT_TRUE(map.InWritableSegment(0x1250));  // memory range, not just file range
  EXPECT_FALSE(map.InWritableSegment(0x10));
  EXPECT_TRUE(map.InAnySegment(0x5050));
  EXPECT_FALSE(map.InAnySegment(0x2000));
}

TEST(SegmentMap, LoadedModuleTranslatesWholeMemoryRange) {
  std::vector<uint8_t> memory(0x400);
  const uintptr_t bias = reinterpret_cast<uintptr_t>(memory.data()) - 0x1000;
  SegmentMap map;
  ASSERT_TRUE(SegmentMap::ForLoaded(bias, {Seg(0x1000, 0x400, 0x10, 0, PF_R | PF_W)}, &map).ok());
  EXPECT_EQ(map.Translate(0x1000, 0x400), memory.data());
  EXPECT_EQ(map.Translate(0x13ff, 1), memory.data() + 0x3ff);  // bss is readable once loaded
  EXPECT_EQ(map.Translate(0x13ff, 2), nullptr);
}

TEST(SegmentMap, RejectsInconsistentSegments) {
  std::vector<uint8_t> file(0x100);
  SegmentMap map;
  Status st = SegmentMap::ForFile(file.data(), file.size(), {Seg(0, 0x200, 0x200, 0, PF_R)}, &map);
  EXPECT_EQ(st.code(), JP_PLT_ERR_MALFORMED_ELF);
  EXPECT_NE(st.message().find("outside"), std::string::npos) << st.message();
  st = SegmentMap::ForFile(file.data(), file.size(), {Seg(0, 0x10, 0x10, UINT64_MAX - 4, PF_R)}, &map);
  EXPECT_FALSE(st.ok());
  st = SegmentMap::ForFile(file.data(), file.size(), {Seg(UINT64_MAX - 4, 0x10, 0x10, 0, PF_R)}, &map);
  EXPECT_NE(st.message().find("overflow"), std::string::npos) << st.message();
  st = SegmentMap::ForFile(file.data(), file.size(), {Seg(0, 0x10, 0x20, 0, PF_R)}, &map);
  EXPECT_NE(st.message().find("p_filesz"), std::string::npos) << st.message();
  st = SegmentMap::ForFile(file.data(), file.size(), {}, &map);
  EXPECT_FALSE(st.ok());
  st = SegmentMap::ForLoaded(UINTPTR_MAX - 0x10, {Seg(0x1000, 0x10, 0x10, 0, PF_R)}, &map);
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace jp::plt
