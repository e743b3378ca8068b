// Decoder for Android's packed relocation format ("APS2", sections SHT_ANDROID_REL/RELA, emitted by
// lld --pack-dyn-relocs=android and Android's relocation_packer). Written for the libelf side of the
// differential check, independently of the engine's decoder, so the two can disagree when one is wrong.
//
// Layout after the 4-byte magic, every number SLEB128:
//   count, initial r_offset, then groups of:
//     group_size, group_flags, [offset delta if GROUPED_BY_OFFSET_DELTA], [r_info if GROUPED_BY_INFO],
//     [addend delta if GROUPED_BY_ADDEND and GROUP_HAS_ADDEND], and per relocation the fields the group
//     did not fix: offset delta, r_info, addend delta. Offsets and addends accumulate; a group without
//     HAS_ADDEND resets the addend to 0.
#ifndef JANKPROBE_TOOLS_JANKPROBE_ELF_APS2_DECODER_H_
#define JANKPROBE_TOOLS_JANKPROBE_ELF_APS2_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace jp::elftool {

inline constexpr uint32_t kShtAndroidRel = 0x60000001;
inline constexpr uint32_t kShtAndroidRela = 0x60000002;

struct PackedRelocation {
  uint64_t offset = 0;
  uint64_t info = 0;  // r_info in the image's class: (sym << 32 | type) for ELF64, (sym << 8 | type) for ELF32
  int64_t addend = 0;
};

// Decodes a whole APS2 section. `is_rela` says whether addends may appear. False with a reason on a bad
// magic, a truncated number, a count that does not fit the bytes, or addends in a REL section.
bool DecodeAps2(const uint8_t* data, size_t size, bool is_rela, std::vector<PackedRelocation>* out,
                std::string* error);

}  // namespace jp::elftool

#endif  // JANKPROBE_TOOLS_JANKPROBE_ELF_APS2_DECODER_H_
