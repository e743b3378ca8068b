#include "plt/symbol_versions.h"

#include <elf.h>

#include <string>

#include "plt/byte_reader.h"

namespace jp::plt {
namespace {

// Real images have a handful of version entries; anything past this is a corrupted count.
constexpr uint64_t kMaxVersionEntries = 4096;

}  // namespace

Status SymbolVersions::ReadVerneed(const SegmentMap& map, const DynamicInfo& dyn, const SymbolTable& symbols) {
  if (dyn.verneed == 0) return Status::Ok();
  if (dyn.verneednum > kMaxVersionEntries) return Status::Malformed("DT_VERNEEDNUM is implausibly large");
  uint64_t vn = dyn.verneed;
  for (uint64_t i = 0; i < dyn.verneednum; ++i) {
    const uint8_t* p = map.Translate(vn, sizeof(Elf64_Verneed));  // same layout in both classes
    if (p == nullptr) return Status::Malformed("DT_VERNEED entry is outside the readable segments");
    uint16_t cnt = Load<uint16_t>(p + 2);
    uint32_t aux = Load<uint32_t>(p + 8);
    uint32_t next = Load<uint32_t>(p + 12);
    uint64_t va = vn + aux;
    for (uint16_t j = 0; j < cnt; ++j) {
      const uint8_t* a = map.Translate(va, sizeof(Elf64_Vernaux));
      if (a == nullptr) return Status::Malformed("DT_VERNEED auxiliary entry is outside the readable segments");
      uint16_t other = Load<uint16_t>(a + 6);
      uint32_t name = Load<uint32_t>(a + 8);
      uint32_t anext = Load<uint32_t>(a + 12);
      std::string_view s;
      if (!symbols.StringAt(name, &s)) return Status::Malformed("DT_VERNEED version name is outside DT_STRSZ");
      if (names_.size() >= kMaxVersionEntries) return Status::Malformed("too many version entries");
      names_.emplace_back(static_cast<uint16_t>(other & 0x7fff), s);
      if (anext == 0) break;
      va += anext;
    }
    if (next == 0) break;
    vn += next;
  }
  return Status::Ok();
}

Status SymbolVersions::ReadVerdef(const SegmentMap& map, const DynamicInfo& dyn, const SymbolTable& symbols) {
  if (dyn.verdef == 0) return Status::Ok();
  if (dyn.verdefnum > kMaxVersionEntries) return Status::Malformed("DT_VERDEFNUM is implausibly large");
  uint64_t vd = dyn.verdef;
  for (uint64_t i = 0; i < dyn.verdefnum; ++i) {
    const uint8_t* p = map.Translate(vd, sizeof(Elf64_Verdef));
    if (p == nullptr) return Status::Malformed("DT_VERDEF entry is outside the readable segments");
    uint16_t flags = Load<uint16_t>(p + 2);
    uint16_t ndx = Load<uint16_t>(p + 4);
    uint16_t cnt = Load<uint16_t>(p + 6);
    uint32_t aux = Load<uint32_t>(p + 12);
    uint32_t next = Load<uint32_t>(p + 16);
    // The first Verdaux names the version itself; the base entry (VER_FLG_BASE) names the file.
    if (cnt > 0 && !(flags & VER_FLG_BASE)) {
      const uint8_t* a = map.Translate(vd + aux, sizeof(Elf64_Verdaux));
      if (a == nullptr) return Status::Malformed("DT_VERDEF auxiliary entry is outside the readable segments");
      std::string_view s;
      if (!symbols.StringAt(Load<uint32_t>(a), &s)) return Status::Malformed("DT_VERDEF version name is outside DT_STRSZ");
      if (names_.size() >= kMaxVersionEntries) return Status::Malformed("too many version entries");
      names_.emplace_back(static_cast<uint16_t>(ndx & 0x7fff), s);
    }
    if (next == 0) break;
    vd += next;
  }
  return Status::Ok();
}

Status SymbolVersions::Init(const SegmentMap& map, const DynamicInfo& dyn, const SymbolTable& symbols) {
  versym_ = nullptr;
  count_ = symbols.count();
  names_.clear();
  if (dyn.versym == 0) return Status::Ok();
  versym_ = map.Translate(dyn.versym, uint64_t{count_} * 2);
  if (versym_ == nullptr) {
    return Status::Malformed("DT_VERSYM for " + std::to_string(count_) + " symbols is outside the readable segments");
  }
  Status st = ReadVerneed(map, dyn, symbols);
  if (!st.ok()) return st;
  return ReadVerdef(map, dyn, symbols);
}

uint16_t SymbolVersions::RawIndex(uint32_t index) const {
  if (versym_ == nullptr || index >= count_) return 0;
  return Load<uint16_t>(versym_ + uint64_t{index} * 2);
}

std::string_view SymbolVersions::VersionOf(uint32_t index) const {
  uint16_t v = RawIndex(index) & 0x7fff;
  if (v <= VER_NDX_GLOBAL) return {};
  for (const auto& [ndx, name] : names_) {
    if (ndx == v) return name;
  }
  return {};
}

bool SymbolVersions::IsHidden(uint32_t index) const { return (RawIndex(index) & 0x8000) != 0; }

}  // namespace jp::plt
