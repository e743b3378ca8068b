#include "plt/dynamic_section.h"

#include <elf.h>

#include <string>

#include "plt/byte_reader.h"

namespace jp::plt {
namespace {

// The d_ptr tags the parser follows. Only these are rebased; d_val tags (sizes, counts) never are.
uint64_t* PointerField(uint64_t tag, DynamicInfo* d) {
  switch (tag) {
    case DT_STRTAB: return &d->strtab;
    case DT_SYMTAB: return &d->symtab;
    case DT_HASH: return &d->hash;
    case DT_GNU_HASH: return &d->gnu_hash;
    case DT_JMPREL: return &d->jmprel;
    case DT_REL: return &d->rel;
    case DT_RELA: return &d->rela;
    case kDtAndroidRel: return &d->android_rel;
    case kDtAndroidRela: return &d->android_rela;
    case DT_VERSYM: return &d->versym;
    case DT_VERNEED: return &d->verneed;
    case DT_VERDEF: return &d->verdef;
    default: return nullptr;
  }
}

uint64_t* ValueField(uint64_t tag, DynamicInfo* d) {
  switch (tag) {
    case DT_STRSZ: return &d->strsz;
    case DT_SYMENT: return &d->syment;
    case DT_PLTRELSZ: return &d->pltrelsz;
    case DT_PLTREL: return &d->pltrel;
    case DT_RELSZ: return &d->relsz;
    case DT_RELENT: return &d->relent;
    case DT_RELASZ: return &d->relasz;
    case DT_RELAENT: return &d->relaent;
    case kDtAndroidRelSz: return &d->android_relsz;
    case kDtAndroidRelaSz: return &d->android_relasz;
    case DT_VERNEEDNUM: return &d->verneednum;
    case DT_VERDEFNUM: return &d->verdefnum;
    default: return nullptr;
  }
}

// Whether a loaded module's .dynamic was relocated by its loader at all. Decided from DT_STRTAB,
// which every dynamic object has and glibc always rewrites; the other d_ptr tags are then classified
// one by one (see ParseDynamic), because glibc leaves some of them alone.
enum class PointerMode { kVaddr, kAbsolute };

bool InRange(uint64_t v, uint64_t lo, uint64_t hi) { return v >= lo && v < hi; }

Status ChoosePointerMode(const SegmentMap& map, const DynamicSource& src, uint64_t strtab, PointerMode* mode) {
  *mode = PointerMode::kVaddr;
  if (!src.loaded || src.bias == 0) return Status::Ok();  // file image, or a module mapped at its vaddrs
  uint64_t lo = map.min_vaddr(), hi = map.max_vaddr();
  uint64_t abs_lo, abs_hi;
  bool abs_possible = !AddOverflows(src.bias, lo, &abs_lo) && !AddOverflows(src.bias, hi, &abs_hi) &&
                      InRange(strtab, abs_lo, abs_hi);
  bool vaddr_possible = InRange(strtab, lo, hi);
  if (abs_possible && !vaddr_possible) {
    *mode = PointerMode::kAbsolute;
  } else if (abs_possible && vaddr_possible) {
    // Both readings land inside the module (a bias smaller than the module's span). Only a writable
    // .dynamic can have been rewritten, and only glibc rewrites it.
#if defined(__GLIBC__)
    if (map.InWritableSegment(src.vaddr)) *mode = PointerMode::kAbsolute;
#endif
  } else if (!vaddr_possible) {
    return Status::Malformed("DT_STRTAB is neither a vaddr of the module nor an address inside it");
  }
  return Status::Ok();
}

}  // namespace

Status ParseDynamic(const SegmentMap& map, const DynamicSource& src, DynamicInfo* out) {
  *out = DynamicInfo();
  const uint64_t entsize = src.is64 ? 16 : 8;
  if (src.size < entsize) return Status::Malformed("PT_DYNAMIC is smaller than one entry");
  const uint64_t count = src.size / entsize;
  const uint8_t* p = map.Translate(src.vaddr, count * entsize);
  if (p == nullptr) return Status::Malformed("PT_DYNAMIC is not inside a readable PT_LOAD segment");

  // First pass: raw values. Duplicate tags keep the first, as both loaders effectively do for these.
  uint64_t seen_strtab = 0;
  DynamicInfo raw;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* e = p + i * entsize;
    uint64_t tag = LoadWord(e, src.is64);
    uint64_t val = LoadWord(e + entsize / 2, src.is64);
    if (tag == DT_NULL) break;  // a table that fills PT_DYNAMIC without DT_NULL is still well-defined
    if (uint64_t* f = PointerField(tag, &raw)) {
      if (*f == 0) *f = val;
      if (tag == DT_STRTAB) seen_strtab = val;
    } else if (uint64_t* v = ValueField(tag, &raw)) {
      if (*v == 0) *v = val;
    }
  }
  if (seen_strtab == 0) return Status::Malformed("no DT_STRTAB in the dynamic section");

  PointerMode mode;
  Status st = ChoosePointerMode(map, src, seen_strtab, &mode);
  if (!st.ok()) return st;
  *out = raw;
  if (mode == PointerMode::kAbsolute) {
    out->pointers_were_absolute = true;
    // glibc rewrites only the tags it uses itself (DT_HASH, DT_STRTAB, DT_SYMTAB, DT_REL(A), DT_JMPREL,
    // DT_VERSYM, DT_GNU_HASH...) and leaves DT_VERNEED, DT_VERDEF and tags it does not know (Android's)
    // as they were. So each entry is classified on its own: rebased when it is an address inside the
    // module, kept when it is a vaddr inside the module, and, when both readings fit, rebased only if
    // it is one of the tags glibc rewrites.
    const uint64_t lo = map.min_vaddr(), hi = map.max_vaddr();
    for (uint64_t tag : {uint64_t{DT_STRTAB}, uint64_t{DT_SYMTAB}, uint64_t{DT_HASH}, uint64_t{DT_GNU_HASH},
                         uint64_t{DT_JMPREL}, uint64_t{DT_REL}, uint64_t{DT_RELA}, kDtAndroidRel, kDtAndroidRela,
                         uint64_t{DT_VERSYM}, uint64_t{DT_VERNEED}, uint64_t{DT_VERDEF}}) {
      uint64_t* f = PointerField(tag, out);
      if (*f == 0) continue;
      const bool as_vaddr = InRange(*f, lo, hi);
      const bool as_address = *f >= src.bias && InRange(*f - src.bias, lo, hi);
      const bool glibc_rewrites = tag != DT_VERNEED && tag != DT_VERDEF && tag != kDtAndroidRel &&
                                  tag != kDtAndroidRela;
      if (as_address && (!as_vaddr || glibc_rewrites)) *f -= src.bias;
      // Neither reading inside the module: left as is, and the table lookup reports it.
    }
  }
  if (out->symtab == 0) return Status::Malformed("no DT_SYMTAB in the dynamic section");
  if (out->strsz == 0) return Status::Malformed("no DT_STRSZ (or a zero-sized string table)");
  return Status::Ok();
}

}  // namespace jp::plt
