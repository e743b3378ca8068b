#include "plt/segment_map.h"

#include <elf.h>

#include <string>

#include "plt/byte_reader.h"

namespace jp::plt {

Status SegmentMap::SetBounds(const std::vector<Segment>& segments) {
  if (segments.empty()) return Status::Malformed("no PT_LOAD segment");
  all_ = segments;
  min_vaddr_ = UINT64_MAX;
  max_vaddr_ = 0;
  for (const Segment& s : segments) {
    uint64_t end;
    if (AddOverflows(s.vaddr, s.memsz, &end)) return Status::Malformed("PT_LOAD p_vaddr + p_memsz overflows");
    if (s.filesz > s.memsz) return Status::Malformed("PT_LOAD p_filesz is larger than p_memsz");
    if (s.vaddr < min_vaddr_) min_vaddr_ = s.vaddr;
    if (end > max_vaddr_) max_vaddr_ = end;
  }
  return Status::Ok();
}

Status SegmentMap::ForFile(const uint8_t* data, size_t size, const std::vector<Segment>& segments,
                           SegmentMap* out) {
  Status st = out->SetBounds(segments);
  if (!st.ok()) return st;
  out->readable_.clear();
  for (const Segment& s : segments) {
    uint64_t file_end;
    if (AddOverflows(s.offset, s.filesz, &file_end) || file_end > size) {
      return Status::Malformed("PT_LOAD file range [" + std::to_string(s.offset) + ", +" + std::to_string(s.filesz) +
                               ") is outside the " + std::to_string(size) + "-byte file");
    }
    if (!(s.flags & PF_R) || s.filesz == 0) continue;
    out->readable_.push_back(Range{s.vaddr, s.filesz, data + s.offset});
  }
  return Status::Ok();
}

Status SegmentMap::ForLoaded(uintptr_t bias, const std::vector<Segment>& segments, SegmentMap* out) {
  Status st = out->SetBounds(segments);
  if (!st.ok()) return st;
  out->readable_.clear();
  for (const Segment& s : segments) {
    uint64_t start, end;
    if (AddOverflows(bias, s.vaddr, &start) || AddOverflows(start, s.memsz, &end) || end > UINTPTR_MAX) {
      return Status::Malformed("PT_LOAD segment does not fit the address space at this load bias");
    }
    if (!(s.flags & PF_R) || s.memsz == 0) continue;
    out->readable_.push_back(Range{s.vaddr, s.memsz, reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(start))});
  }
  return Status::Ok();
}

const uint8_t* SegmentMap::Translate(uint64_t vaddr, uint64_t len) const {
  for (const Range& r : readable_) {
    if (vaddr < r.vaddr) continue;
    uint64_t off = vaddr - r.vaddr;
    if (off > r.size || len > r.size - off) continue;
    return r.base + off;
  }
  return nullptr;
}

bool SegmentMap::InAnySegment(uint64_t vaddr) const {
  for (const Segment& s : all_) {
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.memsz) return true;
  }
  return false;
}

bool SegmentMap::InWritableSegment(uint64_t vaddr) const {
  for (const Segment& s : all_) {
    if ((s.flags & PF_W) && vaddr >= s.vaddr && vaddr - s.vaddr < s.memsz) return true;
  }
  return false;
}

}  // namespace jp::plt
