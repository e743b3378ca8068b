// Bounds-checked translation of link-time virtual addresses to readable bytes, over an image's
// readable PT_LOAD segments. A file image maps [p_vaddr, p_vaddr + p_filesz) onto the file bytes at
// p_offset; a loaded module maps [p_vaddr, p_vaddr + p_memsz) onto bias + p_vaddr. Every other part of
// the parser reads through Translate(), so no read ever leaves a segment.
#ifndef JANKPROBE_PLT_SEGMENT_MAP_H_
#define JANKPROBE_PLT_SEGMENT_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plt/elf_image.h"
#include "plt/status.h"

namespace jp::plt {

class SegmentMap {
 public:
  // `data`/`size`: the whole file. Segments whose file range leaves the file are malformed.
  static Status ForFile(const uint8_t* data, size_t size, const std::vector<Segment>& segments, SegmentMap* out);
  // Segments of a module mapped at `bias` in this process.
  static Status ForLoaded(uintptr_t bias, const std::vector<Segment>& segments, SegmentMap* out);

  // Pointer to `len` readable bytes at `vaddr`, or nullptr unless all of them lie in one segment.
  const uint8_t* Translate(uint64_t vaddr, uint64_t len) const;

  // Lowest p_vaddr and highest p_vaddr + p_memsz over all PT_LOAD segments (readable or not).
  uint64_t min_vaddr() const { return min_vaddr_; }
  uint64_t max_vaddr() const { return max_vaddr_; }
  // Is `vaddr` inside some PT_LOAD segment's memory range (readable or not)?
  bool InAnySegment(uint64_t vaddr) const;
  // Is `vaddr` inside a writable PT_LOAD segment?
  bool InWritableSegment(uint64_t vaddr) const;

 private:
  struct Range {
    uint64_t vaddr = 0;
    uint64_t size = 0;  // readable bytes
    const uint8_t* base = nullptr;
  };
  std::vector<Range> readable_;
  std::vector<Segment> all_;
  uint64_t min_vaddr_ = 0;
  uint64_t max_vaddr_ = 0;

  Status SetBounds(const std::vector<Segment>& segments);
};

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_SEGMENT_MAP_H_
