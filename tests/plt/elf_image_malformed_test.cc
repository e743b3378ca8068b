// Malformed images: each corruption must come back as Status::Malformed with a reason, never a crash
// or an out-of-bounds read (the ASan build runs these too).
#include <elf.h>

#include <cstring>

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plt/dynamic_section.h"
#include "plt/elf_image.h"
#include "tests/plt/parser_test_util.h"

namespace jp::plt {
namespace {

using testing::DynamicValueOffset;
using testing::FixturePath;
using testing::ReadFile;
using testing::ReadWord;
using testing::WriteWord;

bool Is64(const std::vector<uint8_t>& f) { return f[EI_CLASS] == ELFCLASS64; }

// Parses and walks everything; returns the first failure (or Ok).
Status ParseAll(const std::vector<uint8_t>& f) {
  std::unique_ptr<ElfImage> image;
  Status st = ElfImage::FromFile(f.data(), f.size(), &image);
  if (!st.ok()) return st;
  st = image->ForEachImportSlot([](const ImportSlot& s) { return !s.symbol.empty() || true; });
  if (!st.ok()) return st;
  std::vector<ImportSlot> found;
  st = image->FindImportSlots("fixture_add", "", &found);
  if (!st.ok()) return st;
  uint64_t v;
  image->LookupExport("consumer_add", &v);
  image->LookupExport("fixture_add", &v);
  return Status::Ok();
}

void ExpectMalformed(const std::vector<uint8_t>& f, const std::string& needle) {
  Status st = ParseAll(f);
  EXPECT_EQ(st.code(), JP_PLT_ERR_MALFORMED_ELF) << "expected a failure mentioning \"" << needle << "\"";
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
}

class Malformed : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = ReadFile(FixturePath("libplt_full_relro.so"));
    ASSERT_FALSE(original_.empty());
    ASSERT_TRUE(ParseAll(original_).ok());
    f_ = original_;
    is64_ = Is64(f_);
  }
  // Overwrite the d_val of dynamic tag `tag`.
  void SetDyn(uint64_t tag, uint64_t value) {
    uint64_t off = DynamicValueOffset(f_, tag);
    ASSERT_NE(off, 0u) << "fixture has no dynamic tag " << tag;
    WriteWord(&f_, off, is64_, value);
  }
  uint64_t GetDyn(uint64_t tag) { return ReadWord(f_, DynamicValueOffset(f_, tag), is64_); }

  std::vector<uint8_t> original_, f_;
  bool is64_ = false;
};

TEST_F(Malformed, BadMagicClassAndByteOrder) {
  f_[1] = 'X';
  ExpectMalformed(f_, "magic");
  f_ = original_;
  f_[EI_CLASS] = 7;
  ExpectMalformed(f_, "class");
  f_ = original_;
  f_[EI_DATA] = ELFDATA2MSB;
  ExpectMalformed(f_, "little-endian");
  f_ = original_;
  f_[18] = 0x08;  // EM_MIPS
  f_[19] = 0;
  ExpectMalformed(f_, "machine");
}

TEST_F(Malformed, EveryTruncationBeforeTheLastSegmentEndFails) {
  const uint64_t needed = testing::LoadSegmentsFileEnd(original_);
  ASSERT_LE(needed, original_.size());
  const size_t step = std::max<size_t>(1, original_.size() / 1500);
  for (size_t len = 0; len < original_.size(); len += step) {
    std::unique_ptr<ElfImage> image;
    Status st = ElfImage::FromFile(original_.data(), len, &image);
    if (len < needed) {
      ASSERT_EQ(st.code(), JP_PLT_ERR_MALFORMED_ELF) << "length " << len;
      ASSERT_FALSE(st.message().empty());
    } else {
      ASSERT_TRUE(st.ok()) << "length " << len << ": " << st.message();  // section headers are not needed
    }
  }
}

TEST_F(Malformed, ProgramHeadersOutsideTheFile) {
  WriteWord(&f_, is64_ ? 32 : 28, is64_, original_.size() - 8);
  ExpectMalformed(f_, "program headers");
  f_ = original_;
  uint16_t bad_entsize = 12;
  std::memcpy(f_.data() + (is64_ ? 54 : 42), &bad_entsize, 2);
  ExpectMalformed(f_, "e_phentsize");
}

TEST_F(Malformed, DynamicSegmentOutsideTheSegments) {
  const uint64_t phoff = ReadWord(f_, is64_ ? 32 : 28, is64_);
  uint16_t phnum;
  std::memcpy(&phnum, f_.data() + (is64_ ? 56 : 44), 2);
  const uint64_t phent = is64_ ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  bool patched = false;
  for (uint16_t i = 0; i < phnum; ++i) {
    uint64_t p = phoff + i * phent;
    uint32_t type;
    std::memcpy(&type, f_.data() + p, 4);
    if (type != PT_DYNAMIC) continue;
    WriteWord(&f_, p + (is64_ ? 16 : 8), is64_, is64_ ? 0x7fff00000000ull : 0x7fff0000u);  // p_vaddr
    patched = true;
  }
  ASSERT_TRUE(patched);
  ExpectMalformed(f_, "PT_DYNAMIC");
}

TEST_F(Malformed, StringTableBounds) {
  SetDyn(DT_STRSZ, is64_ ? 0x7fffffffffffull : 0x7fffffffu);
  ExpectMalformed(f_, "string table");
  // A string table that ends before the names it holds: the first name crosses DT_STRSZ.
  f_ = original_;
  SetDyn(DT_STRSZ, 2);
  ExpectMalformed(f_, "DT_STRSZ");
}

TEST_F(Malformed, SymbolTableEntrySizeAndHashTables) {
  SetDyn(DT_SYMENT, 12);
  ExpectMalformed(f_, "DT_SYMENT");

  f_ = original_;
  uint64_t gnu = testing::VaddrToFileOffset(f_, GetDyn(DT_GNU_HASH));
  ASSERT_NE(gnu, 0u);
  uint32_t zero = 0;
  std::memcpy(f_.data() + gnu + 8, &zero, 4);  // bloom_size
  ExpectMalformed(f_, "bloom");

  f_ = original_;
  uint32_t huge = 0x3fffffff;
  std::memcpy(f_.data() + gnu, &huge, 4);  // nbuckets
  ExpectMalformed(f_, "DT_GNU_HASH");

  std::vector<uint8_t> sysv = ReadFile(FixturePath("libplt_provider_sysv.so"));
  ASSERT_TRUE(ParseAll(sysv).ok());
  uint64_t hash = testing::VaddrToFileOffset(sysv, ReadWord(sysv, DynamicValueOffset(sysv, DT_HASH), Is64(sysv)));
  ASSERT_NE(hash, 0u);
  std::memcpy(sysv.data() + hash + 4, &huge, 4);  // nchain
  ExpectMalformed(sysv, "DT_HASH");
}

TEST_F(Malformed, RelocationTableSizes) {
  const uint64_t pltrelsz = GetDyn(DT_PLTRELSZ);
  SetDyn(DT_PLTRELSZ, pltrelsz + 1);
  ExpectMalformed(f_, "multiple");
  f_ = original_;
  SetDyn(DT_PLTRELSZ, pltrelsz * 0x100000);
  ExpectMalformed(f_, "DT_JMPREL");
  f_ = original_;
  SetDyn(DT_PLTREL, 99);
  ExpectMalformed(f_, "DT_PLTREL");
}

TEST_F(Malformed, SymbolIndexPastTheSymbolCount) {
  const uint64_t jmprel = testing::VaddrToFileOffset(f_, GetDyn(DT_JMPREL));
  ASSERT_NE(jmprel, 0u);
  const uint64_t word = is64_ ? 8 : 4;
  uint64_t info = ReadWord(f_, jmprel + word, is64_);
  uint64_t bad = is64_ ? ((uint64_t{0xffffff} << 32) | (info & 0xffffffff)) : ((0xffffffu << 8) | (info & 0xff));
  WriteWord(&f_, jmprel + word, is64_, bad);
  ExpectMalformed(f_, "symbol 16777215");
}

TEST_F(Malformed, VersionTablesOutOfRange) {
  SetDyn(DT_VERNEEDNUM, 1000000);
  ExpectMalformed(f_, "DT_VERNEEDNUM");
  f_ = original_;
  SetDyn(DT_VERNEED, is64_ ? 0x7fff00000000ull : 0x7fff0000u);
  ExpectMalformed(f_, "DT_VERNEED");
}

TEST_F(Malformed, RandomCorruptionNeverCrashes) {
  // Mutations concentrated where the parser reads: headers, and the first pages (dynamic tables).
  std::mt19937 rng(1234);
  const uint64_t hot = std::min<uint64_t>(original_.size(), 0x1000);
  int failures = 0;
  for (int i = 0; i < 1500; ++i) {
    f_ = original_;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      uint64_t pos = (rng() % 4 == 0) ? rng() % original_.size() : rng() % hot;
      f_[pos] = static_cast<uint8_t>(rng());
    }
    Status st = ParseAll(f_);
    if (!st.ok()) {
      ++failures;
      ASSERT_FALSE(st.message().empty());
    }
  }
  EXPECT_GT(failures, 0);
}

#ifdef JP_HAVE_LLD_FIXTURES
class MalformedPacked : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = ReadFile(FixturePath("libplt_lld_packed.so"));
    ASSERT_FALSE(original_.empty());
    ASSERT_TRUE(ParseAll(original_).ok());
    is64_ = Is64(original_);
    tag_ = DynamicValueOffset(original_, kDtAndroidRela) ? kDtAndroidRela : kDtAndroidRel;
    size_tag_ = tag_ == kDtAndroidRela ? kDtAndroidRelaSz : kDtAndroidRelSz;
    uint64_t vaddr = ReadWord(original_, DynamicValueOffset(original_, tag_), is64_);
    table_ = testing::VaddrToFileOffset(original_, vaddr);
    ASSERT_NE(table_, 0u);
    f_ = original_;
  }
  std::vector<uint8_t> original_, f_;
  bool is64_ = false;
  uint64_t tag_ = 0, size_tag_ = 0, table_ = 0;
};

TEST_F(MalformedPacked, BadMagic) {
  f_[table_ + 3] = '3';
  ExpectMalformed(f_, "magic");
}

TEST_F(MalformedPacked, NegativeAndForgedCounts) {
  f_[table_ + 4] = 0x7f;  // SLEB128 -1
  ExpectMalformed(f_, "negative");
  f_ = original_;
  const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 0x03};  // ~2^34 relocations
  std::memcpy(f_.data() + table_ + 4, huge, sizeof huge);
  ExpectMalformed(f_, "exceeds");
}

TEST_F(MalformedPacked, TruncatedStream) {
  for (uint64_t size : {4, 5, 6, 8, 10}) {
    f_ = original_;
    WriteWord(&f_, DynamicValueOffset(f_, size_tag_), is64_, size);
    ExpectMalformed(f_, "APS2");
  }
  f_ = original_;
  WriteWord(&f_, DynamicValueOffset(f_, size_tag_), is64_, 0x7fffffff);
  ExpectMalformed(f_, "DT_ANDROID_REL");
}

TEST_F(MalformedPacked, RandomCorruptionOfTheStreamNeverCrashes) {
  const uint64_t size = ReadWord(original_, DynamicValueOffset(original_, size_tag_), is64_);
  std::mt19937 rng(99);
  for (int i = 0; i < 3000; ++i) {
    f_ = original_;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) f_[table_ + 4 + rng() % (size - 4)] = static_cast<uint8_t>(rng());
    Status st = ParseAll(f_);
    if (!st.ok()) {
      ASSERT_FALSE(st.message().empty());
    }
  }
}
#endif

}  // namespace
}  // namespace jp::plt
