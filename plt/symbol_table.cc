#include "plt/symbol_table.h"

#include <elf.h>

#include <string>

#include "plt/byte_reader.h"
#include "plt/symbol_versions.h"

namespace jp::plt {
namespace {

uint32_t GnuHash(std::string_view name) {
  uint32_t h = 5381;
  for (unsigned char c : name) h = h * 33 + c;
  return h;
}

uint32_t SysvHash(std::string_view name) {
  uint32_t h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

}  // namespace

Status SymbolTable::InitSysvHash(const SegmentMap& map, uint64_t vaddr) {
  const uint8_t* hdr = map.Translate(vaddr, 8);
  if (hdr == nullptr) return Status::Malformed("DT_HASH header is outside the readable segments");
  sysv_nbucket_ = Load<uint32_t>(hdr);
  sysv_nchain_ = Load<uint32_t>(hdr + 4);
  uint64_t words = uint64_t{sysv_nbucket_} + sysv_nchain_;
  const uint8_t* body = map.Translate(vaddr + 8, words * 4);
  if (body == nullptr) {
    return Status::Malformed("DT_HASH with nbucket " + std::to_string(sysv_nbucket_) + " and nchain " +
                             std::to_string(sysv_nchain_) + " runs past its segment");
  }
  sysv_buckets_ = body;
  sysv_chains_ = body + uint64_t{sysv_nbucket_} * 4;
  return Status::Ok();
}

Status SymbolTable::InitGnuHash(const SegmentMap& map, uint64_t vaddr) {
  const uint8_t* hdr = map.Translate(vaddr, 16);
  if (hdr == nullptr) return Status::Malformed("DT_GNU_HASH header is outside the readable segments");
  gnu_nbuckets_ = Load<uint32_t>(hdr);
  gnu_symoffset_ = Load<uint32_t>(hdr + 4);
  gnu_bloom_size_ = Load<uint32_t>(hdr + 8);
  gnu_bloom_shift_ = Load<uint32_t>(hdr + 12);
  if (gnu_bloom_size_ == 0) return Status::Malformed("DT_GNU_HASH has an empty bloom filter");
  if (gnu_bloom_shift_ >= 32) return Status::Malformed("DT_GNU_HASH bloom shift is not below 32");
  const uint64_t word = is64_ ? 8 : 4;
  const uint64_t bloom_bytes = uint64_t{gnu_bloom_size_} * word;
  gnu_bloom_ = map.Translate(vaddr + 16, bloom_bytes + uint64_t{gnu_nbuckets_} * 4);
  if (gnu_bloom_ == nullptr) return Status::Malformed("DT_GNU_HASH bloom filter or buckets run past their segment");
  gnu_buckets_ = gnu_bloom_ + bloom_bytes;
  gnu_chains_vaddr_ = vaddr + 16 + bloom_bytes + uint64_t{gnu_nbuckets_} * 4;

  // The symbol count is one past the end of the chain that starts at the highest bucket: GNU hash
  // tables sort hashed symbols by bucket, and each chain ends with a value whose low bit is set.
  uint32_t max_bucket = 0;
  for (uint32_t i = 0; i < gnu_nbuckets_; ++i) {
    uint32_t b = Load<uint32_t>(gnu_buckets_ + uint64_t{i} * 4);
    if (b == 0) continue;
    if (b < gnu_symoffset_) return Status::Malformed("DT_GNU_HASH bucket points below symoffset");
    if (b > max_bucket) max_bucket = b;
  }
  if (max_bucket == 0) {
    if (count_ == 0) count_ = gnu_symoffset_;
    return Status::Ok();
  }
  uint64_t index = max_bucket;
  for (;;) {
    const uint8_t* c = map.Translate(gnu_chains_vaddr_ + (index - gnu_symoffset_) * 4, 4);
    if (c == nullptr) return Status::Malformed("DT_GNU_HASH chain runs past its segment without an end marker");
    if (Load<uint32_t>(c) & 1) break;
    ++index;
  }
  uint64_t gnu_count = index + 1;
  gnu_chains_ = map.Translate(gnu_chains_vaddr_, (gnu_count - gnu_symoffset_) * 4);
  gnu_end_ = gnu_count;
  if (count_ == 0) count_ = static_cast<size_t>(gnu_count);
  return Status::Ok();
}

Status SymbolTable::Init(const SegmentMap& map, bool is64, const DynamicInfo& dyn) {
  *this = SymbolTable();
  is64_ = is64;
  strsz_ = dyn.strsz;
  strtab_ = map.Translate(dyn.strtab, dyn.strsz);
  if (strtab_ == nullptr) {
    return Status::Malformed("string table (DT_STRTAB + DT_STRSZ " + std::to_string(dyn.strsz) +
                             ") is outside the readable segments");
  }
  syment_ = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  if (dyn.syment != 0 && dyn.syment != syment_) {
    return Status::Malformed("DT_SYMENT is " + std::to_string(dyn.syment) + ", expected " + std::to_string(syment_));
  }
  if (dyn.hash != 0) {
    Status st = InitSysvHash(map, dyn.hash);
    if (!st.ok()) return st;
    count_ = sysv_nchain_;  // DT_HASH states the count outright
  }
  if (dyn.gnu_hash != 0) {
    Status st = InitGnuHash(map, dyn.gnu_hash);
    if (!st.ok()) return st;
  }
  if (dyn.hash == 0 && dyn.gnu_hash == 0) {
    return Status::Malformed("neither DT_HASH nor DT_GNU_HASH: the symbol count is unknown");
  }
  if (gnu_chains_ != nullptr && count_ < gnu_symoffset_) {
    return Status::Malformed("DT_HASH nchain is smaller than DT_GNU_HASH symoffset");
  }
  if (dyn.hash == 0 && dyn.strtab > dyn.symtab) {
    // DT_GNU_HASH only bounds the *hashed* symbols. Some linkers leave symbols past the last hashed one
    // (libgrpc++_error_details on Debian 12: symoffset 1, no hashed symbols, relocations naming 1-4),
    // which glibc loads fine. Such indices are still read, up to where .dynstr starts (the table cannot
    // run into it), while count() keeps the hash's figure: the gap may also hold other sections (lld
    // puts .gnu.version there).
    const uint64_t gap_count = (dyn.strtab - dyn.symtab) / syment_;
    if (gap_count > count_ && gap_count <= (uint64_t{1} << 24) &&
        map.Translate(dyn.symtab, gap_count * syment_) != nullptr) {
      readable_count_ = static_cast<size_t>(gap_count);
    }
  }
  uint64_t bytes;
  if (MulOverflows(count_, syment_, &bytes) || (symtab_ = map.Translate(dyn.symtab, bytes)) == nullptr) {
    return Status::Malformed("symbol table of " + std::to_string(count_) + " entries is outside the readable segments");
  }
  return Status::Ok();
}

bool SymbolTable::Get(uint32_t index, Symbol* out) const {
  if (index >= count_ && index >= readable_count_) return false;
  const uint8_t* p = symtab_ + uint64_t{index} * syment_;
  if (is64_) {
    out->name = Load<uint32_t>(p);
    out->info = p[4];
    out->shndx = Load<uint16_t>(p + 6);
    out->value = Load<uint64_t>(p + 8);
  } else {
    out->name = Load<uint32_t>(p);
    out->value = Load<uint32_t>(p + 4);
    out->info = p[12];
    out->shndx = Load<uint16_t>(p + 14);
  }
  return true;
}

bool SymbolTable::StringAt(uint64_t offset, std::string_view* out) const {
  if (offset >= strsz_) return false;
  const void* nul = std::memchr(strtab_ + offset, 0, strsz_ - offset);
  if (nul == nullptr) return false;
  *out = std::string_view(reinterpret_cast<const char*>(strtab_ + offset),
                          static_cast<const uint8_t*>(nul) - (strtab_ + offset));
  return true;
}

bool SymbolTable::IsExportMatch(uint32_t index, std::string_view name, const SymbolVersions* versions,
                                uint64_t* value) const {
  Symbol s;
  if (!Get(index, &s) || s.shndx == SHN_UNDEF || s.bind() == STB_LOCAL) return false;
  if (!StringEquals(s.name, name)) return false;
  if (versions != nullptr && versions->IsHidden(index)) return false;
  *value = s.value;
  return true;
}

bool SymbolTable::LookupGnu(std::string_view name, const SymbolVersions* versions, uint64_t* value) const {
  if (gnu_nbuckets_ == 0) return false;
  const uint32_t h = GnuHash(name);
  const uint32_t bits = is64_ ? 64 : 32;
  const uint64_t word = LoadWord(gnu_bloom_ + uint64_t{(h / bits) % gnu_bloom_size_} * (bits / 8), is64_);
  const uint64_t mask = (uint64_t{1} << (h % bits)) | (uint64_t{1} << ((h >> gnu_bloom_shift_) % bits));
  if ((word & mask) != mask) return false;
  uint32_t index = Load<uint32_t>(gnu_buckets_ + uint64_t{h % gnu_nbuckets_} * 4);
  if (index == 0 || gnu_chains_ == nullptr) return false;
  for (; index < gnu_end_ && index >= gnu_symoffset_; ++index) {
    uint32_t chain = Load<uint32_t>(gnu_chains_ + uint64_t{index - gnu_symoffset_} * 4);
    if ((chain | 1) == (h | 1) && IsExportMatch(index, name, versions, value)) return true;
    if (chain & 1) break;
  }
  return false;
}

bool SymbolTable::LookupSysv(std::string_view name, const SymbolVersions* versions, uint64_t* value) const {
  if (sysv_nbucket_ == 0) return false;
  uint32_t index = Load<uint32_t>(sysv_buckets_ + uint64_t{SysvHash(name) % sysv_nbucket_} * 4);
  // A chain visits each symbol at most once; more steps than nchain means a cycle.
  for (uint32_t steps = 0; index != STN_UNDEF && index < sysv_nchain_ && steps < sysv_nchain_; ++steps) {
    if (IsExportMatch(index, name, versions, value)) return true;
    index = Load<uint32_t>(sysv_chains_ + uint64_t{index} * 4);
  }
  return false;
}

size_t SymbolTable::FindIndices(std::string_view name, uint32_t* out, size_t cap) const {
  size_t n = 0;
  auto add = [&](uint32_t index) {
    if (n < cap) out[n] = index;
    ++n;
  };
  auto matches = [&](uint32_t index) {
    Symbol s;
    return Get(index, &s) && StringEquals(s.name, name);
  };
  if (gnu_bloom_ != nullptr) {
    const uint64_t unhashed_end = gnu_symoffset_ < count_ ? gnu_symoffset_ : count_;
    for (uint32_t i = 1; i < unhashed_end; ++i) {
      if (matches(i)) add(i);
    }
    // Symbols past the hashed ones (see readable_count_) are in no chain: look at them one by one.
    for (uint64_t i = gnu_end_ > count_ ? gnu_end_ : count_; i < readable_count_; ++i) {
      if (matches(static_cast<uint32_t>(i))) add(static_cast<uint32_t>(i));
    }
    if (gnu_nbuckets_ == 0 || gnu_chains_ == nullptr) return n;
    const uint32_t h = GnuHash(name);
    uint32_t index = Load<uint32_t>(gnu_buckets_ + uint64_t{h % gnu_nbuckets_} * 4);
    if (index == 0) return n;
    for (; index < gnu_end_ && index >= gnu_symoffset_; ++index) {
      uint32_t chain = Load<uint32_t>(gnu_chains_ + uint64_t{index - gnu_symoffset_} * 4);
      if ((chain | 1) == (h | 1) && matches(index)) add(index);
      if (chain & 1) break;
    }
    return n;
  }
  if (sysv_nbucket_ == 0) return n;
  uint32_t index = Load<uint32_t>(sysv_buckets_ + uint64_t{SysvHash(name) % sysv_nbucket_} * 4);
  for (uint32_t steps = 0; index != STN_UNDEF && index < sysv_nchain_ && steps < sysv_nchain_; ++steps) {
    if (matches(index)) add(index);
    index = Load<uint32_t>(sysv_chains_ + uint64_t{index} * 4);
  }
  return n;
}

bool SymbolTable::LookupDefined(std::string_view name, const SymbolVersions* versions, uint64_t* value) const {
  if (gnu_bloom_ != nullptr) return LookupGnu(name, versions, value);
  return LookupSysv(name, versions, value);
}

}  // namespace jp::plt
