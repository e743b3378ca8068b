// Unaligned little-endian loads. Images come from files read at arbitrary buffer offsets and from
// mappings whose tables need not be aligned for the host (an ELFCLASS64 file parsed on armhf), so every
// multi-byte field goes through memcpy instead of a typed pointer.
#ifndef JANKPROBE_PLT_BYTE_READER_H_
#define JANKPROBE_PLT_BYTE_READER_H_

#include <cstdint>
#include <cstring>

namespace jp::plt {

// All four Android ABIs are little-endian, and the parser rejects ELFDATA2MSB images, so a host-order
// load is a little-endian load.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ELF parser assumes a little-endian host");

template <typename T>
inline T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// A word of the image's class: 4 bytes for ELFCLASS32, 8 for ELFCLASS64.
inline uint64_t LoadWord(const uint8_t* p, bool is64) {
  return is64 ? Load<uint64_t>(p) : Load<uint32_t>(p);
}

// Overflow-checked a + b.
inline bool AddOverflows(uint64_t a, uint64_t b, uint64_t* sum) { return __builtin_add_overflow(a, b, sum); }
inline bool MulOverflows(uint64_t a, uint64_t b, uint64_t* product) {
  return __builtin_mul_overflow(a, b, product);
}

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_BYTE_READER_H_
