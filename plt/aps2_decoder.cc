#include "plt/aps2_decoder.h"

#include <cstring>
#include <string>

#include "plt/sleb128.h"

namespace jp::plt {

bool Aps2Decoder::Fail(std::string why) {
  status_ = Status::Malformed("APS2 packed relocations: " + why);
  index_ = count_;  // any further Next() ends at once
  return false;
}

bool Aps2Decoder::Read(int64_t* v, const char* what) {
  if (!ReadSleb128(&p_, end_, v)) return Fail(std::string("stream ends or overflows inside ") + what);
  return true;
}

Status Aps2Decoder::Start() {
  if (end_ - p_ < 4 || std::memcmp(p_, "APS2", 4) != 0) {
    Fail("table does not start with the \"APS2\" magic");
    return status_;
  }
  p_ += 4;
  int64_t count, offset;
  if (!Read(&count, "the relocation count") || !Read(&offset, "the initial offset")) return status_;
  if (count < 0) {
    Fail("negative relocation count " + std::to_string(count));
    return status_;
  }
  if (static_cast<uint64_t>(count) > max_count_) {
    Fail("relocation count " + std::to_string(count) + " exceeds what the image can hold (" +
         std::to_string(max_count_) + ")");
    return status_;
  }
  count_ = static_cast<uint64_t>(count);
  current_.offset = Truncate(static_cast<uint64_t>(offset));
  return Status::Ok();
}

bool Aps2Decoder::ReadGroup() {
  int64_t size, flags;
  if (!Read(&size, "a group size") || !Read(&flags, "group flags")) return false;
  if (size <= 0 || static_cast<uint64_t>(size) > count_ - index_) {
    return Fail("group size " + std::to_string(size) + " with " + std::to_string(count_ - index_) +
                " relocations left");
  }
  if (flags & ~int64_t{kGroupedByInfo | kGroupedByOffsetDelta | kGroupedByAddend | kGroupHasAddend}) {
    return Fail("unknown group flags " + std::to_string(flags));
  }
  group_size_ = static_cast<uint64_t>(size);
  group_index_ = 0;
  group_flags_ = static_cast<uint64_t>(flags);
  if (group_flags_ & kGroupHasAddend) {
    if (!rela_) return Fail("addend in a DT_ANDROID_REL table, which has none");
  } else {
    current_.addend = 0;
  }
  int64_t v;
  if (group_flags_ & kGroupedByOffsetDelta) {
    if (!Read(&v, "a group offset delta")) return false;
    group_offset_delta_ = static_cast<uint64_t>(v);
  }
  if (group_flags_ & kGroupedByInfo) {
    if (!Read(&v, "a group r_info")) return false;
    current_.info = Truncate(static_cast<uint64_t>(v));
  }
  if ((group_flags_ & kGroupHasAddend) && (group_flags_ & kGroupedByAddend)) {
    if (!Read(&v, "a group addend")) return false;
    current_.addend = static_cast<int64_t>(static_cast<uint64_t>(current_.addend) + static_cast<uint64_t>(v));
  }
  return true;
}

bool Aps2Decoder::Next(PackedReloc* out) {
  if (index_ >= count_) return false;
  if (group_index_ == group_size_ && !ReadGroup()) return false;
  int64_t v;
  if (group_flags_ & kGroupedByOffsetDelta) {
    current_.offset = Truncate(current_.offset + group_offset_delta_);
  } else {
    if (!Read(&v, "an offset delta")) return false;
    current_.offset = Truncate(current_.offset + static_cast<uint64_t>(v));
  }
  if (!(group_flags_ & kGroupedByInfo)) {
    if (!Read(&v, "an r_info")) return false;
    current_.info = Truncate(static_cast<uint64_t>(v));
  }
  if ((group_flags_ & kGroupHasAddend) && !(group_flags_ & kGroupedByAddend)) {
    if (!Read(&v, "an addend delta")) return false;
    current_.addend = static_cast<int64_t>(static_cast<uint64_t>(current_.addend) + static_cast<uint64_t>(v));
  }
  ++index_;
  ++group_index_;
  *out = current_;
  return true;
}

}  // namespace jp::plt
