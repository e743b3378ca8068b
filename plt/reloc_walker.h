// Walks an image's dynamic relocation tables in the order the loader applies them: DT_ANDROID_REL(A)
// (APS2 packed) or DT_REL(A), then DT_JMPREL. Plain tables are located and size-checked once at Init,
// so the walk itself is a tight loop without allocation; the packed table is decoded on the fly.
#ifndef JANKPROBE_PLT_RELOC_WALKER_H_
#define JANKPROBE_PLT_RELOC_WALKER_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "plt/aps2_decoder.h"
#include "plt/byte_reader.h"
#include "plt/dynamic_section.h"
#include "plt/elf_image.h"
#include "plt/segment_map.h"
#include "plt/status.h"

namespace jp::plt {

struct Reloc {
  uint64_t offset = 0;  // r_offset: link-time vaddr of the patched word
  uint32_t type = 0;
  uint32_t sym = 0;
  int64_t addend = 0;   // 0 for REL tables
  RelocTable table = RelocTable::kJmpRel;
};

class RelocWalker {
 public:
  // `max_packed_count`: upper bound for an APS2 table's declared relocation count.
  Status Init(const SegmentMap& map, bool is64, const DynamicInfo& dyn, uint64_t max_packed_count);

  // Calls fn(const Reloc&) -> bool for every relocation; false from fn stops the walk (still Ok).
  template <typename Fn>
  Status ForEach(Fn&& fn) const;

 private:
  struct Table {
    const uint8_t* data = nullptr;
    uint64_t size = 0;
    bool rela = false;
  };
  Status LocatePlain(const SegmentMap& map, uint64_t vaddr, uint64_t size, uint64_t ent, bool rela,
                     const char* what, Table* out);
  // Returns false when fn asked to stop.
  template <typename Fn>
  bool WalkPlain(const Table& t, RelocTable which, Fn& fn) const;
  void Split(uint64_t info, Reloc* r) const {
    if (is64_) {
      r->sym = static_cast<uint32_t>(info >> 32);
      r->type = static_cast<uint32_t>(info & 0xffffffffu);
    } else {
      r->sym = static_cast<uint32_t>((info & 0xffffffffu) >> 8);
      r->type = static_cast<uint32_t>(info & 0xff);
    }
  }

  bool is64_ = false;
  Table jmprel_, rel_, rela_, packed_;
  uint64_t max_packed_count_ = 0;
};

// The entry layout is fixed per table, so the loop is instantiated per (class, REL/RELA) and carries
// no per-entry branches on either.
template <bool Is64, bool Rela, typename Fn>
bool WalkPlainTable(const uint8_t* data, uint64_t size, RelocTable which, Fn& fn) {
  using Word = std::conditional_t<Is64, uint64_t, uint32_t>;
  constexpr uint64_t kEnt = sizeof(Word) * (Rela ? 3 : 2);
  Reloc r;
  r.table = which;
  for (uint64_t off = 0; off + kEnt <= size; off += kEnt) {
    const uint8_t* e = data + off;
    r.offset = Load<Word>(e);
    const uint64_t info = Load<Word>(e + sizeof(Word));
    if constexpr (Is64) {
      r.sym = static_cast<uint32_t>(info >> 32);
      r.type = static_cast<uint32_t>(info & 0xffffffffu);
    } else {
      r.sym = static_cast<uint32_t>(info >> 8);
      r.type = static_cast<uint32_t>(info & 0xff);
    }
    if constexpr (Rela) r.addend = static_cast<std::make_signed_t<Word>>(Load<Word>(e + 2 * sizeof(Word)));
    if (!fn(static_cast<const Reloc&>(r))) return false;
  }
  return true;
}

template <typename Fn>
bool RelocWalker::WalkPlain(const Table& t, RelocTable which, Fn& fn) const {
  if (t.data == nullptr) return true;
  if (is64_) {
    return t.rela ? WalkPlainTable<true, true>(t.data, t.size, which, fn)
                  : WalkPlainTable<true, false>(t.data, t.size, which, fn);
  }
  return t.rela ? WalkPlainTable<false, true>(t.data, t.size, which, fn)
                : WalkPlainTable<false, false>(t.data, t.size, which, fn);
}

template <typename Fn>
Status RelocWalker::ForEach(Fn&& fn) const {
  if (packed_.data != nullptr) {
    Aps2Decoder dec(packed_.data, packed_.size, is64_, packed_.rela, max_packed_count_);
    Status st = dec.Start();
    if (!st.ok()) return st;
    PackedReloc p;
    Reloc r;
    r.table = RelocTable::kAndroidDyn;
    while (dec.Next(&p)) {
      r.offset = p.offset;
      Split(p.info, &r);
      r.addend = packed_.rela ? p.addend : 0;
      if (!fn(static_cast<const Reloc&>(r))) return Status::Ok();
    }
    if (!dec.status().ok()) return dec.status();
  }
  if (!WalkPlain(rel_, RelocTable::kDyn, fn)) return Status::Ok();
  if (!WalkPlain(rela_, RelocTable::kDyn, fn)) return Status::Ok();
  WalkPlain(jmprel_, RelocTable::kJmpRel, fn);
  return Status::Ok();
}

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_RELOC_WALKER_H_
