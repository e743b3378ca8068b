#include "plt/reloc_walker.h"

#include <elf.h>

#include <string>

namespace jp::plt {

Status RelocWalker::LocatePlain(const SegmentMap& map, uint64_t vaddr, uint64_t size, uint64_t ent, bool rela,
                                const char* what, Table* out) {
  *out = Table();
  if (vaddr == 0 && size == 0) return Status::Ok();
  if (vaddr == 0) return Status::Malformed(std::string(what) + " has a size but no table");
  const uint64_t expected = (is64_ ? 8 : 4) * (rela ? 3 : 2);
  if (ent != 0 && ent != expected) {
    return Status::Malformed(std::string(what) + " entry size " + std::to_string(ent) + ", expected " +
                             std::to_string(expected));
  }
  if (size % expected != 0) {
    return Status::Malformed(std::string(what) + " size " + std::to_string(size) + " is not a multiple of " +
                             std::to_string(expected));
  }
  out->data = map.Translate(vaddr, size);
  if (out->data == nullptr && size != 0) {
    return Status::Malformed(std::string(what) + " (" + std::to_string(size) +
                             " bytes) is outside the readable segments");
  }
  out->size = size;
  out->rela = rela;
  return Status::Ok();
}

Status RelocWalker::Init(const SegmentMap& map, bool is64, const DynamicInfo& dyn, uint64_t max_packed_count) {
  is64_ = is64;
  max_packed_count_ = max_packed_count;
  bool plt_rela;
  if (dyn.pltrel == DT_RELA) {
    plt_rela = true;
  } else if (dyn.pltrel == DT_REL) {
    plt_rela = false;
  } else if (dyn.pltrel == 0) {
    plt_rela = is64;  // absent DT_PLTREL: the form the four ABIs use (RELA on 64-bit, REL on 32-bit)
  } else {
    return Status::Malformed("DT_PLTREL is " + std::to_string(dyn.pltrel) + ", neither DT_REL nor DT_RELA");
  }
  Status st = LocatePlain(map, dyn.jmprel, dyn.pltrelsz, 0, plt_rela, "DT_JMPREL", &jmprel_);
  if (st.ok()) st = LocatePlain(map, dyn.rel, dyn.relsz, dyn.relent, false, "DT_REL", &rel_);
  if (st.ok()) st = LocatePlain(map, dyn.rela, dyn.relasz, dyn.relaent, true, "DT_RELA", &rela_);
  if (!st.ok()) return st;

  packed_ = Table();
  if (dyn.android_rel != 0 && dyn.android_rela != 0) {
    return Status::Malformed("both DT_ANDROID_REL and DT_ANDROID_RELA are present");
  }
  uint64_t vaddr = dyn.android_rel ? dyn.android_rel : dyn.android_rela;
  uint64_t size = dyn.android_rel ? dyn.android_relsz : dyn.android_relasz;
  if (vaddr != 0) {
    packed_.data = map.Translate(vaddr, size);
    if (packed_.data == nullptr || size == 0) {
      return Status::Malformed("DT_ANDROID_REL(A) table (" + std::to_string(size) +
                               " bytes) is empty or outside the readable segments");
    }
    packed_.size = size;
    packed_.rela = dyn.android_rela != 0;
  }
  return Status::Ok();
}

}  // namespace jp::plt
