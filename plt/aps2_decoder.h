// Android packed relocations (DT_ANDROID_REL / DT_ANDROID_RELA, lld --pack-dyn-relocs=android):
// "APS2" then a SLEB128 stream: relocation count, initial r_offset, then groups of
//   group size, group flags,
//   [offset delta  if GROUPED_BY_OFFSET_DELTA], [r_info if GROUPED_BY_INFO],
//   [addend delta  if GROUP_HAS_ADDEND and GROUPED_BY_ADDEND],
// followed by one record per relocation holding the fields the group does not share:
//   [offset delta], [r_info], [addend delta if GROUP_HAS_ADDEND and not GROUPED_BY_ADDEND].
// Offsets and addends are running sums; a group without GROUP_HAS_ADDEND resets the addend to 0.
#ifndef JANKPROBE_PLT_APS2_DECODER_H_
#define JANKPROBE_PLT_APS2_DECODER_H_

#include <cstddef>
#include <cstdint>

#include "plt/status.h"

namespace jp::plt {

struct PackedReloc {
  uint64_t offset = 0;
  uint64_t info = 0;  // r_info of the image's class (use the class's ELF_R_SYM / ELF_R_TYPE split)
  int64_t addend = 0;
};

class Aps2Decoder {
 public:
  static constexpr uint64_t kGroupedByInfo = 1;
  static constexpr uint64_t kGroupedByOffsetDelta = 2;
  static constexpr uint64_t kGroupedByAddend = 4;
  static constexpr uint64_t kGroupHasAddend = 8;

  // `rela`: DT_ANDROID_RELA (addends allowed) rather than DT_ANDROID_REL. `max_count` bounds the
  // declared relocation count, because a fully grouped relocation costs no stream bytes and a forged
  // count would otherwise make the walk as long as the attacker likes.
  Aps2Decoder(const uint8_t* data, size_t size, bool is64, bool rela, uint64_t max_count)
      : p_(data), end_(data + size), is64_(is64), rela_(rela), max_count_(max_count) {}

  // Checks the magic and reads the header.
  Status Start();
  // Decodes the next relocation into *out. False at the end of the table or on error; tell the two
  // apart with status().
  bool Next(PackedReloc* out);
  const Status& status() const { return status_; }
  uint64_t count() const { return count_; }

 private:
  bool Read(int64_t* v, const char* what);
  bool ReadGroup();
  bool Fail(std::string why);
  uint64_t Truncate(uint64_t v) const { return is64_ ? v : (v & 0xffffffffu); }

  const uint8_t* p_;
  const uint8_t* end_;
  bool is64_;
  bool rela_;
  uint64_t max_count_;
  Status status_;

  uint64_t count_ = 0;
  uint64_t index_ = 0;
  uint64_t group_size_ = 0;
  uint64_t group_index_ = 0;
  uint64_t group_flags_ = 0;
  uint64_t group_offset_delta_ = 0;
  PackedReloc current_;
};

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_APS2_DECODER_H_
