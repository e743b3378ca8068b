#include "plt/aps2_decoder.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>

namespace jp::plt {
namespace {

constexpr int64_t kByInfo = 1, kByOffset = 2, kByAddend = 4, kHasAddend = 8;

// Builds a stream: "APS2" + the SLEB128 encoding of each number.
std::vector<uint8_t> Stream(std::initializer_list<int64_t> numbers, const char* magic = "APS2") {
  std::vector<uint8_t> out(magic, magic + 4);
  for (int64_t v : numbers) {
    bool more = true;
    while (more) {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
      out.push_back(byte | (more ? 0x80 : 0));
    }
  }
  return out;
}

struct Result {
  Status status;
  std::vector<PackedReloc> relocs;
};

Result DecodeAll(const std::vector<uint8_t>& s, bool is64 = true, bool rela = true, uint64_t max = 1000) {
  Result r;
  Aps2Decoder d(s.data(), s.size(), is64, rela, max);
  r.status = d.Start();
  if (!r.status.ok()) return r;
  PackedReloc p;
  while (d.Next(&p)) r.relocs.push_back(p);
  r.status = d.status();
  return r;
}

void ExpectReloc(const PackedReloc& r, uint64_t offset, uint64_t info, int64_t addend) {
  EXPECT_EQ(r.offset, offset);
  EXPECT_EQ(r.info, info);
  EXPECT_EQ(r.addend, addend);
}

TEST(Aps2Decoder, GroupedByInfoAndOffsetDelta) {
  // 3 RELATIVE-like relocations one word apart, starting at 0x1000 + 8.
  Result r = DecodeAll(Stream({3, 0x1000, /*group*/ 3, kByInfo | kByOffset, /*delta*/ 8, /*info*/ 0x8}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.relocs.size(), 3u);
  ExpectReloc(r.relocs[0], 0x1008, 0x8, 0);
  ExpectReloc(r.relocs[1], 0x1010, 0x8, 0);
  ExpectReloc(r.relocs[2], 0x1018, 0x8, 0);
}

TEST(Aps2Decoder, PerRelocationFieldsAndRunningAddend) {
  // Group 1: offset, info and addend delta per relocation. Group 2 (no addend) resets the addend.
  Result r = DecodeAll(Stream({4, 0x2000,
                               2, kHasAddend, /*r1*/ 0x10, 0x100000001, 5, /*r2*/ 0x8, 0x200000006, -3,
                               2, 0, /*r3*/ -0x8, 0x300000007, /*r4*/ 0x20, 0x400000007}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.relocs.size(), 4u);
  ExpectReloc(r.relocs[0], 0x2010, 0x100000001, 5);
  ExpectReloc(r.relocs[1], 0x2018, 0x200000006, 2);
  ExpectReloc(r.relocs[2], 0x2010, 0x300000007, 0);
  ExpectReloc(r.relocs[3], 0x2030, 0x400000007, 0);
}

TEST(Aps2Decoder, GroupedByAddendAppliesTheDeltaOncePerGroup) {
  Result r = DecodeAll(Stream({3, 0,
                               2, kHasAddend | kByAddend | kByInfo, /*info*/ 0x101, /*addend*/ 16, 0x40, 0x48,
                               1, kHasAddend | kByAddend | kByInfo, 0x101, 16, 0x8}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.relocs.size(), 3u);
  ExpectReloc(r.relocs[0], 0x40, 0x101, 16);
  ExpectReloc(r.relocs[1], 0x88, 0x101, 16);
  ExpectReloc(r.relocs[2], 0x90, 0x101, 32);
}

TEST(Aps2Decoder, Rel32TruncatesOffsetsToTheClass) {
  Result r = DecodeAll(Stream({2, 0xfffffff8, 2, kByInfo | kByOffset, 4, 0x216}), /*is64=*/false, /*rela=*/false);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.relocs.size(), 2u);
  ExpectReloc(r.relocs[0], 0xfffffffc, 0x216, 0);
  ExpectReloc(r.relocs[1], 0x0, 0x216, 0);
}

TEST(Aps2Decoder, EmptyTable) {
  Result r = DecodeAll(Stream({0, 0}));
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.relocs.empty());
}

void ExpectMalformed(const Result& r, const char* needle) {
  EXPECT_EQ(r.status.code(), JP_PLT_ERR_MALFORMED_ELF);
  EXPECT_NE(r.status.message().find(needle), std::string::npos) << r.status.message();
}

TEST(Aps2Decoder, RejectsBadMagic) { ExpectMalformed(DecodeAll(Stream({1, 0}, "APS1")), "magic"); }

TEST(Aps2Decoder, RejectsShortTable) {
  std::vector<uint8_t> s = {'A', 'P'};
  ExpectMalformed(DecodeAll(s), "magic");
}

TEST(Aps2Decoder, RejectsTruncatedHeader) {
  std::vector<uint8_t> s = Stream({1});  // count, but no initial offset
  ExpectMalformed(DecodeAll(s), "initial offset");
}

TEST(Aps2Decoder, RejectsNegativeCount) { ExpectMalformed(DecodeAll(Stream({-1, 0})), "negative"); }

TEST(Aps2Decoder, RejectsCountBeyondTheCap) {
  // Fully grouped relocations cost no bytes: a forged count must be refused up front.
  ExpectMalformed(DecodeAll(Stream({1000000, 0, 1000000, kByInfo | kByOffset, 8, 8}), true, true, 4096), "exceeds");
}

TEST(Aps2Decoder, RejectsEmptyAndOversizedGroups) {
  ExpectMalformed(DecodeAll(Stream({2, 0, 0, kByInfo})), "group size 0");
  ExpectMalformed(DecodeAll(Stream({2, 0, 3, kByInfo | kByOffset, 8, 8})), "group size 3");
  ExpectMalformed(DecodeAll(Stream({2, 0, -1, kByInfo})), "group size -1");
}

TEST(Aps2Decoder, RejectsUnknownFlags) { ExpectMalformed(DecodeAll(Stream({1, 0, 1, 16, 8, 8})), "flags"); }

TEST(Aps2Decoder, RejectsAddendsInARelTable) {
  ExpectMalformed(DecodeAll(Stream({1, 0, 1, kHasAddend, 8, 8, 1}), false, /*rela=*/false), "addend");
}

TEST(Aps2Decoder, RejectsAStreamThatEndsInsideARelocation) {
  // Declares 3 relocations; the stream holds 1.5.
  Result r = DecodeAll(Stream({3, 0, 3, 0, 8, 0x101, 8}));
  ExpectMalformed(r, "r_info");
  EXPECT_EQ(r.relocs.size(), 1u);
}

TEST(Aps2Decoder, RejectsAStreamThatEndsBeforeTheNextGroup) {
  Result r = DecodeAll(Stream({2, 0, 1, kByInfo | kByOffset, 8, 8}));
  ExpectMalformed(r, "group size");
  EXPECT_EQ(r.relocs.size(), 1u);
}

TEST(Aps2Decoder, NextAfterAnErrorStaysFalse) {
  std::vector<uint8_t> s = Stream({2, 0, 5, 0});
  Aps2Decoder d(s.data(), s.size(), true, true, 100);
  ASSERT_TRUE(d.Start().ok());
  PackedReloc p;
  EXPECT_FALSE(d.Next(&p));
  EXPECT_FALSE(d.status().ok());
  EXPECT_FALSE(d.Next(&p));
}

}  // namespace
}  // namespace jp::plt
