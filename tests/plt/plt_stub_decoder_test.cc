// PLT stub decoding (tools/jankprobe_elf/plt_stub_decoder): hand-encoded stubs whose slot addresses
// follow from the encodings, then real libraries where every JUMP_SLOT relocation (libelf) must be
// reached by exactly one stub.
#include <elf.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tools/jankprobe_elf/libelf_slots.h"
#include "tools/jankprobe_elf/mapped_file.h"
#include "tools/jankprobe_elf/plt_stub_decoder.h"

namespace jp::elftool {
namespace {

std::vector<uint8_t> Words(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  }
  return out;
}

std::vector<PltStub> Decode(uint16_t machine, uint64_t vaddr, const std::vector<uint8_t>& bytes,
                            uint64_t pltgot = 0, bool has_pltgot = false) {
  CodeSection section{".plt", vaddr, bytes.data(), bytes.size()};
  std::vector<PltStub> out;
  std::string error;
  EXPECT_TRUE(DecodePltSection(machine, has_pltgot, pltgot, section, &out, &error)) << error;
  return out;
}

TEST(PltStubDecoderTest, X86_64LazyAndIbtStubs) {
  const std::vector<uint8_t> bytes = {
      0xff, 0x25, 0xfa, 0x2f, 0x00, 0x00,              // 0x1000 jmp [rip+0x2ffa] -> 0x1006+0x2ffa = 0x4000
      0x68, 0x00, 0x00, 0x00, 0x00,                    // 0x1006 push 0
      0xe9, 0xf0, 0xff, 0xff, 0xff,                    // 0x100b jmp rel32
      0xf3, 0x0f, 0x1e, 0xfa,                          // 0x1010 endbr64
      0xf2, 0xff, 0x25, 0xed, 0x2f, 0x00, 0x00,        // 0x1014 bnd jmp [rip+0x2fed] -> 0x101b+0x2fed = 0x4008
      0x0f, 0x1f, 0x44, 0x00, 0x00,                    // 0x101b nop
  };
  std::vector<PltStub> stubs = Decode(EM_X86_64, 0x1000, bytes);
  ASSERT_EQ(stubs.size(), 2u);
  EXPECT_EQ(stubs[0].stub_vaddr, 0x1000u);
  EXPECT_EQ(stubs[0].slot_vaddr, 0x4000u);
  EXPECT_EQ(stubs[1].stub_vaddr, 0x1010u) << "the endbr64 landing pad starts the stub";
  EXPECT_EQ(stubs[1].slot_vaddr, 0x4008u);
  EXPECT_EQ(stubs[0].section, ".plt");
}

TEST(PltStubDecoderTest, X86_64Plt0StartsAtItsPush) {
  const std::vector<uint8_t> bytes = {
      0xff, 0x35, 0xe2, 0x2f, 0x00, 0x00,  // 0x1000 push [rip+0x2fe2]
      0xff, 0x25, 0xe4, 0x2f, 0x00, 0x00,  // 0x1006 jmp [rip+0x2fe4] -> 0x100c+0x2fe4 = 0x3ff0
      0x0f, 0x1f, 0x40, 0x00,              // nop
  };
  std::vector<PltStub> stubs = Decode(EM_X86_64, 0x1000, bytes);
  ASSERT_EQ(stubs.size(), 1u);
  EXPECT_EQ(stubs[0].stub_vaddr, 0x1000u);
  EXPECT_EQ(stubs[0].slot_vaddr, 0x3ff0u);
}

TEST(PltStubDecoderTest, I386PicAndAbsoluteStubs) {
  const std::vector<uint8_t> bytes = {
      0xff, 0xa3, 0x0c, 0x00, 0x00, 0x00,  // 0x2000 jmp [ebx+0xc] -> DT_PLTGOT 0x3000 + 0xc
      0x68, 0x00, 0x00, 0x00, 0x00,        // push 0
      0xe9, 0xf0, 0xff, 0xff, 0xff,        // jmp rel32
      0xff, 0x25, 0x10, 0x40, 0x00, 0x00,  // 0x2010 jmp [0x4010]
  };
  std::vector<PltStub> stubs = Decode(EM_386, 0x2000, bytes, 0x3000, true);
  ASSERT_EQ(stubs.size(), 2u);
  EXPECT_EQ(stubs[0].stub_vaddr, 0x2000u);
  EXPECT_EQ(stubs[0].slot_vaddr, 0x300cu);
  EXPECT_EQ(stubs[1].stub_vaddr, 0x2010u);
  EXPECT_EQ(stubs[1].slot_vaddr, 0x4010u);

  // Without DT_PLTGOT an ebx-relative stub names no slot rather than a wrong one.
  std::vector<PltStub> without_got = Decode(EM_386, 0x2000, bytes);
  ASSERT_EQ(without_got.size(), 1u);
  EXPECT_EQ(without_got[0].slot_vaddr, 0x4010u);
}

TEST(PltStubDecoderTest, Aarch64AdrpLdrStubsWithAndWithoutBti) {
  const std::vector<uint8_t> bytes = Words({
      0x90000090,  // 0x10000 adrp x16, 0x20000   (immhi=4, immlo=0: +0x10 pages)
      0xf9400e11,  // 0x10004 ldr x17, [x16, #0x18]
      0x91006210,  // 0x10008 add x16, x16, #0x18
      0xd61f0220,  // 0x1000c br x17
      0xd503245f,  // 0x10010 bti c
      0x90000090,  // 0x10014 adrp x16, 0x20000
      0xf9401211,  // 0x10018 ldr x17, [x16, #0x20]
      0x91008210,  // 0x1001c add x16, x16, #0x20
      0xd61f0220,  // 0x10020 br x17
  });
  std::vector<PltStub> stubs = Decode(EM_AARCH64, 0x10000, bytes);
  ASSERT_EQ(stubs.size(), 2u);
  EXPECT_EQ(stubs[0].stub_vaddr, 0x10000u);
  EXPECT_EQ(stubs[0].slot_vaddr, 0x20018u);
  EXPECT_EQ(stubs[1].stub_vaddr, 0x10010u) << "the bti landing pad starts the stub";
  EXPECT_EQ(stubs[1].slot_vaddr, 0x20020u);
}

TEST(PltStubDecoderTest, ArmAddAddLdrStubs) {
  const std::vector<uint8_t> bytes = Words({
      0xe28fc600,  // 0x1000 add ip, pc, #0, 12        ip = 0x1008
      0xe28cca01,  // 0x1004 add ip, ip, #1, 20        ip += 0x1000
      0xe5bcf008,  // 0x1008 ldr pc, [ip, #8]!         slot = 0x2010
      0xe28fc600,  // 0x100c add ip, pc, #0, 12        ip = 0x1014
      0xe28cca01,  // 0x1010 add ip, ip, #0x1000       ip = 0x2014
      0xe5bcfffc,  // 0x1014 ldr pc, [ip, #0xffc]!     slot = 0x3010
  });
  std::vector<PltStub> stubs = Decode(EM_ARM, 0x1000, bytes);
  ASSERT_EQ(stubs.size(), 2u);
  EXPECT_EQ(stubs[0].stub_vaddr, 0x1000u);
  EXPECT_EQ(stubs[0].slot_vaddr, 0x2010u);
  EXPECT_EQ(stubs[1].stub_vaddr, 0x100cu);
  EXPECT_EQ(stubs[1].slot_vaddr, 0x3010u);
}

TEST(PltStubDecoderTest, GarbageIsSkippedNotFatal) {
  std::vector<uint8_t> bytes(64, 0xff);
  for (uint16_t machine : {EM_X86_64, EM_386, EM_AARCH64, EM_ARM}) {
    EXPECT_TRUE(Decode(machine, 0x1000, bytes).empty()) << machine;
  }
  CodeSection section{".plt", 0, bytes.data(), bytes.size()};
  std::vector<PltStub> out;
  std::string error;
  EXPECT_FALSE(DecodePltSection(EM_MIPS, false, 0, section, &out, &error));
  EXPECT_FALSE(error.empty());
}

// Real libraries: the stubs ld wrote must cover every JUMP_SLOT exactly once, from inside a PLT section.
void ExpectEveryJumpSlotHasOneStub(const std::string& path) {
  SCOPED_TRACE(path);
  MappedFile file;
  std::string error;
  if (!file.Open(path, &error)) GTEST_SKIP() << error;
  LibelfImage image;
  ASSERT_TRUE(ReadWithLibelf(file.data(), file.size(), &image, &error)) << error;
  ASSERT_FALSE(image.plt_sections.empty());
  std::vector<PltStub> stubs;
  ASSERT_TRUE(DecodePltStubs(image, &stubs, &error)) << error;

  std::map<uint64_t, int> stubs_per_slot;
  std::set<uint64_t> stub_addresses;
  for (const PltStub& s : stubs) {
    ++stubs_per_slot[s.slot_vaddr];
    EXPECT_TRUE(stub_addresses.insert(s.stub_vaddr).second) << "two stubs at 0x" << std::hex << s.stub_vaddr;
    bool inside = false;
    for (const CodeSection& c : image.plt_sections) {
      inside |= c.name == s.section && s.stub_vaddr >= c.vaddr && s.stub_vaddr < c.vaddr + c.size;
    }
    EXPECT_TRUE(inside) << "stub 0x" << std::hex << s.stub_vaddr << " outside " << s.section;
  }
  size_t jump_slots = 0;
  for (const LibelfSlot& slot : image.slots) {
    if (slot.kind != SlotClass::kJumpSlot) continue;
    ++jump_slots;
    EXPECT_EQ(stubs_per_slot[slot.got_vaddr], 1) << slot.symbol << " slot 0x" << std::hex << slot.got_vaddr;
  }
  EXPECT_GT(jump_slots, 0u);
}

TEST(PltStubDecoderTest, EveryJumpSlotOfX86_64LibcHasOneStub) {
  ExpectEveryJumpSlotHasOneStub("/usr/lib/x86_64-linux-gnu/libc.so.6");
}
TEST(PltStubDecoderTest, EveryJumpSlotOfI386LibcHasOneStub) {
  ExpectEveryJumpSlotHasOneStub("/usr/i686-linux-gnu/lib/libc.so.6");
}
TEST(PltStubDecoderTest, EveryJumpSlotOfAarch64LibcHasOneStub) {
  ExpectEveryJumpSlotHasOneStub("/usr/aarch64-linux-gnu/lib/libc.so.6");
}
TEST(PltStubDecoderTest, EveryJumpSlotOfArmLibcHasOneStub) {
  ExpectEveryJumpSlotHasOneStub("/usr/arm-linux-gnueabihf/lib/libc.so.6");
}
TEST(PltStubDecoderTest, EveryJumpSlotOfLibstdcxxHasOneStub) {
  ExpectEveryJumpSlotHasOneStub("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
}
TEST(PltStubDecoderTest, FixtureSendtoGoesThroughItsStub) { ExpectEveryJumpSlotHasOneStub(JP_PLAIN_FIXTURE); }

}  // namespace
}  // namespace jp::elftool
