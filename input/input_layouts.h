// The per-release offset tables as compile-time constants (packet offsets = body offset + 8), from
// shared/reference/android-input.md; input_layouts.cc looks them up by API level.
//
// In a header so that a decoder can be compiled for one layout (DecodeReceivedAs / DecodeSentAs): the
// input tracker binds the layout in use once at Enable (its entries per layout), and its hot paths then
// decode with that layout's offsets, sizes and type values as immediates instead of loading each from the
// table per packet.
#ifndef JANKPROBE_INPUT_INPUT_LAYOUTS_H_
#define JANKPROBE_INPUT_INPUT_LAYOUTS_H_

#include "input/input_message.h"

namespace jp::input {

// name, min_api, max_api, KEY, MOTION, FINISHED, seq_in_header, eventTime, action, pointerCount,
// pointers, sizeof(Pointer), KEY size, FINISHED size, sizeof(InputMessage), FINISHED form
inline constexpr Layout kAndroid8_0{"android-8.0", 26, 26, 1, 2, 3, false, 16, 32, 80, 88, 136,
                                    64, 16, 2264, FinishedForm::kSeqHandledBool};
inline constexpr Layout kAndroid8_1{"android-8.1-10", 27, 29, 1, 2, 3, false, 16, 36, 88, 96, 136,
                                    72, 16, 2272, FinishedForm::kSeqHandledBool};
inline constexpr Layout kAndroid11{"android-11", 30, 30, 0, 1, 2, false, 16, 68, 136, 144, 136,
                                   104, 16, 2320, FinishedForm::kSeqHandledU32};
inline constexpr Layout kAndroid12{"android-12", 31, 31, 0, 1, 2, true, 16, 68, 152, 160, 136,
                                   104, 24, 2336, FinishedForm::kHandledConsumeTime};
inline constexpr Layout kAndroid12L{"android-12L", 32, 32, 0, 1, 2, true, 16, 68, 156, 160, 136,
                                    104, 24, 2336, FinishedForm::kHandledConsumeTime};
inline constexpr Layout kAndroid13{"android-13", 33, 33, 0, 1, 2, true, 16, 68, 12, 168, 136,
                                   104, 24, 2344, FinishedForm::kHandledConsumeTime};
inline constexpr Layout kAndroid14{"android-14-16", 34, 36, 0, 1, 2, true, 16, 68, 12, 168, 144,
                                   104, 24, 2472, FinishedForm::kHandledConsumeTime};

// Oldest first; a layout's index here names its bound decoder (LayoutIndex).
inline constexpr const Layout* kLayoutTable[] = {&kAndroid8_0, &kAndroid8_1, &kAndroid11, &kAndroid12,
                                                 &kAndroid12L, &kAndroid13,  &kAndroid14};
inline constexpr int kLayoutCount = static_cast<int>(sizeof(kLayoutTable) / sizeof(kLayoutTable[0]));

// The index of l in kLayoutTable, or -1 (nullptr, or a layout that is not one of ours: such a layout is
// decoded by the generic decoders, reading its fields per packet).
inline int LayoutIndex(const Layout* l) noexcept {
  for (int i = 0; i < kLayoutCount; ++i) {
    if (kLayoutTable[i] == l) return i;
  }
  return -1;
}

// DecodeReceived / DecodeSent with the layout kLayoutTable[kIndex] compiled in: the same inline decoder
// with a constant layout, so the compiler folds its fields into immediates; results are the generic
// decoder's, bit for bit (tests/input/input_message_test.cc checks every layout against it).
template <int kIndex, typename Out>
inline Verdict DecodeReceivedAs(const void* packet, size_t n, Out* out) {
  static_assert(kIndex >= 0 && kIndex < kLayoutCount, "a layout of the table");
  return DecodeReceived(*kLayoutTable[kIndex], packet, n, out);
}
template <int kIndex>
inline Verdict DecodeSentAs(const void* packet, size_t n, FinishedSignal* out) {
  static_assert(kIndex >= 0 && kIndex < kLayoutCount, "a layout of the table");
  return DecodeSent(*kLayoutTable[kIndex], packet, n, out);
}

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_INPUT_LAYOUTS_H_
