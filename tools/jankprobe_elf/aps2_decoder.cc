#include "tools/jankprobe_elf/aps2_decoder.h"

#include <cstring>

namespace jp::elftool {
namespace {

constexpr uint64_t kGroupedByInfo = 1;
constexpr uint64_t kGroupedByOffsetDelta = 2;
constexpr uint64_t kGroupedByAddend = 4;
constexpr uint64_t kGroupHasAddend = 8;

class Sleb128Reader {
 public:
  Sleb128Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  bool Next(int64_t* value) {
    uint64_t result = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      if (p_ == end_ || shift >= 64) return false;
      byte = *p_++;
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) result |= ~uint64_t{0} << shift;  // sign-extend
    *value = static_cast<int64_t>(result);
    return true;
  }

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace

bool DecodeAps2(const uint8_t* data, size_t size, bool is_rela, std::vector<PackedRelocation>* out,
                std::string* error) {
  out->clear();
  if (size < 4 || std::memcmp(data, "APS2", 4) != 0) {
    *error = "packed relocation section does not start with \"APS2\"";
    return false;
  }
  Sleb128Reader in(data + 4, size - 4);
  int64_t count = 0;
  int64_t offset = 0;
  if (!in.Next(&count) || !in.Next(&offset)) {
    *error = "packed relocation header truncated";
    return false;
  }
  // A group that fixes offset delta and info encodes any number of relocations in a few bytes, so the
  // count cannot be checked against the section size; cap it instead so that a hostile count cannot
  // drive the tool out of memory (real libraries have well under a million dynamic relocations).
  constexpr int64_t kMaxRelocations = int64_t{1} << 24;
  if (count < 0 || count > kMaxRelocations) {
    *error = "packed relocation count " + std::to_string(count) + " is out of range";
    return false;
  }
  PackedRelocation current;
  current.offset = static_cast<uint64_t>(offset);
  out->reserve(static_cast<size_t>(count));
  int64_t done = 0;
  while (done < count) {
    int64_t group_size = 0;
    int64_t flags_value = 0;
    if (!in.Next(&group_size) || !in.Next(&flags_value)) {
      *error = "packed relocation group header truncated after " + std::to_string(done) + " relocations";
      return false;
    }
    if (group_size <= 0 || group_size > count - done) {
      *error = "packed relocation group size " + std::to_string(group_size) + " is invalid";
      return false;
    }
    const uint64_t flags = static_cast<uint64_t>(flags_value);
    int64_t group_offset_delta = 0;
    if ((flags & kGroupedByOffsetDelta) && !in.Next(&group_offset_delta)) {
      *error = "packed relocation group offset delta truncated";
      return false;
    }
    if (flags & kGroupedByInfo) {
      int64_t info = 0;
      if (!in.Next(&info)) {
        *error = "packed relocation group info truncated";
        return false;
      }
      current.info = static_cast<uint64_t>(info);
    }
    const bool has_addend = (flags & kGroupHasAddend) != 0;
    if (has_addend && !is_rela) {
      *error = "packed REL section has a group with addends";
      return false;
    }
    if (has_addend && (flags & kGroupedByAddend)) {
      int64_t delta = 0;
      if (!in.Next(&delta)) {
        *error = "packed relocation group addend truncated";
        return false;
      }
      current.addend = static_cast<int64_t>(static_cast<uint64_t>(current.addend) + static_cast<uint64_t>(delta));
    } else if (!has_addend) {
      current.addend = 0;
    }
    for (int64_t i = 0; i < group_size; ++i) {
      int64_t delta = group_offset_delta;
      if (!(flags & kGroupedByOffsetDelta) && !in.Next(&delta)) {
        *error = "packed relocation offset truncated";
        return false;
      }
      current.offset += static_cast<uint64_t>(delta);
      if (!(flags & kGroupedByInfo)) {
        int64_t info = 0;
        if (!in.Next(&info)) {
          *error = "packed relocation info truncated";
          return false;
        }
        current.info = static_cast<uint64_t>(info);
      }
      if (has_addend && !(flags & kGroupedByAddend)) {
        int64_t addend_delta = 0;
        if (!in.Next(&addend_delta)) {
          *error = "packed relocation addend truncated";
          return false;
        }
        current.addend =
            static_cast<int64_t>(static_cast<uint64_t>(current.addend) + static_cast<uint64_t>(addend_delta));
      }
      out->push_back(current);
    }
    done += group_size;
  }
  return true;
}

}  // namespace jp::elftool
