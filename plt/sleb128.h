// Signed LEB128, the integer encoding of Android's APS2 packed relocations.
#ifndef JANKPROBE_PLT_SLEB128_H_
#define JANKPROBE_PLT_SLEB128_H_

#include <cstdint>

namespace jp::plt {

// Decodes one value from [*p, end) and advances *p. False (and *p unchanged) when the input ends
// inside the value or the value does not fit 64 bits (more than 10 bytes, or a 10th byte whose
// payload would overflow).
inline bool ReadSleb128(const uint8_t** p, const uint8_t* end, int64_t* out) {
  const uint8_t* q = *p;
  uint64_t result = 0;
  unsigned shift = 0;
  uint8_t byte;
  do {
    if (q == end) return false;
    byte = *q++;
    if (shift == 63) {
      // Last possible byte: one payload bit left. It must be a pure sign extension (0x00 or 0x7f).
      if ((byte & 0x80) || (byte != 0x00 && byte != 0x7f)) return false;
    }
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  if (shift < 64 && (byte & 0x40)) result |= ~uint64_t{0} << shift;  // sign-extend
  *out = static_cast<int64_t>(result);
  *p = q;
  return true;
}

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_SLEB128_H_
