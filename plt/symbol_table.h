// The dynamic symbol table: bounds-checked symbols and names, the symbol count (DT_HASH nchain, or
// the end of the last DT_GNU_HASH chain) and exported-symbol lookup through either hash table.
#ifndef JANKPROBE_PLT_SYMBOL_TABLE_H_
#define JANKPROBE_PLT_SYMBOL_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "plt/dynamic_section.h"
#include "plt/segment_map.h"
#include "plt/status.h"

namespace jp::plt {

class SymbolVersions;

struct Symbol {
  uint32_t name = 0;   // offset into the string table
  uint8_t info = 0;    // ELF_ST_BIND << 4 | ELF_ST_TYPE
  uint16_t shndx = 0;  // SHN_UNDEF for imports
  uint64_t value = 0;

  uint8_t bind() const { return info >> 4; }
  uint8_t type() const { return info & 0xf; }
};

class SymbolTable {
 public:
  Status Init(const SegmentMap& map, bool is64, const DynamicInfo& dyn);

  size_t count() const { return count_; }
  // Indices Get() accepts: count(), or more when a GNU-hash-only table has unhashed symbols past it.
  size_t readable_count() const { return readable_count_ > count_ ? readable_count_ : count_; }
  // False when index >= count().
  bool Get(uint32_t index, Symbol* out) const;

  // The NUL-terminated string at `offset`; false unless the terminator lies inside DT_STRSZ.
  bool StringAt(uint64_t offset, std::string_view* out) const;
  // Cheaper than StringAt for matching: no scan for the terminator beyond name.size().
  bool StringEquals(uint64_t offset, std::string_view name) const {
    return offset < strsz_ && name.size() < strsz_ - offset && strtab_[offset + name.size()] == '\0' &&
           (name.empty() || std::memcmp(strtab_ + offset, name.data(), name.size()) == 0);
  }

  // Indices of every symbol named `name` (defined or not), found without scanning the relocations:
  // through the DT_GNU_HASH chain plus the unhashed symbols below symoffset (where linkers put the
  // undefined ones), or through the DT_HASH chain, which holds all symbols. Writes up to `cap`
  // indices and returns how many exist (more than `cap` means the caller must compare names itself).
  size_t FindIndices(std::string_view name, uint32_t* out, size_t cap) const;

  // A symbol this image defines (not SHN_UNDEF, not local, not a hidden version), via DT_GNU_HASH when
  // present, else DT_HASH. `versions` may be null.
  bool LookupDefined(std::string_view name, const SymbolVersions* versions, uint64_t* value) const;

 private:
  Status InitSysvHash(const SegmentMap& map, uint64_t vaddr);
  Status InitGnuHash(const SegmentMap& map, uint64_t vaddr);
  bool IsExportMatch(uint32_t index, std::string_view name, const SymbolVersions* versions, uint64_t* value) const;
  bool LookupGnu(std::string_view name, const SymbolVersions* versions, uint64_t* value) const;
  bool LookupSysv(std::string_view name, const SymbolVersions* versions, uint64_t* value) const;

  bool is64_ = false;
  const uint8_t* strtab_ = nullptr;
  uint64_t strsz_ = 0;
  const uint8_t* symtab_ = nullptr;
  uint64_t syment_ = 0;
  size_t count_ = 0;
  size_t readable_count_ = 0;  // Get() bound: count_, or more when only DT_GNU_HASH bounds the table

  // DT_HASH
  const uint8_t* sysv_buckets_ = nullptr;  // uint32[nbucket]
  const uint8_t* sysv_chains_ = nullptr;   // uint32[nchain]
  uint32_t sysv_nbucket_ = 0;
  uint32_t sysv_nchain_ = 0;

  // DT_GNU_HASH
  const uint8_t* gnu_bloom_ = nullptr;    // word[bloom_size]
  const uint8_t* gnu_buckets_ = nullptr;  // uint32[nbuckets]
  uint64_t gnu_chains_vaddr_ = 0;         // uint32 per symbol from symoffset on
  const uint8_t* gnu_chains_ = nullptr;   // valid for symbols [symoffset, gnu_end_)
  uint64_t gnu_end_ = 0;                  // one past the last hashed symbol
  uint32_t gnu_nbuckets_ = 0;
  uint32_t gnu_symoffset_ = 0;
  uint32_t gnu_bloom_size_ = 0;
  uint32_t gnu_bloom_shift_ = 0;
};

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_SYMBOL_TABLE_H_
