// The per-release offset tables (packet offsets = body offset + 8), from shared/reference/android-input.md.
#include "input/input_message.h"

namespace jp::input {
namespace {

// name, min_api, max_api, KEY, MOTION, FINISHED, seq_in_header, eventTime, action, pointerCount,
// pointers, sizeof(Pointer), KEY size, FINISHED size, sizeof(InputMessage), FINISHED form
constexpr Layout kAndroid8_0{"android-8.0", 26, 26, 1, 2, 3, false, 16, 32, 80, 88, 136,
                             64, 16, 2264, FinishedForm::kSeqHandledBool};
constexpr Layout kAndroid8_1{"android-8.1-10", 27, 29, 1, 2, 3, false, 16, 36, 88, 96, 136,
                             72, 16, 2272, FinishedForm::kSeqHandledBool};
constexpr Layout kAndroid11{"android-11", 30, 30, 0, 1, 2, false, 16, 68, 136, 144, 136,
                            104, 16, 2320, FinishedForm::kSeqHandledU32};
constexpr Layout kAndroid12{"android-12", 31, 31, 0, 1, 2, true, 16, 68, 152, 160, 136,
                            104, 24, 2336, FinishedForm::kHandledConsumeTime};
constexpr Layout kAndroid12L{"android-12L", 32, 32, 0, 1, 2, true, 16, 68, 156, 160, 136,
                             104, 24, 2336, FinishedForm::kHandledConsumeTime};
constexpr Layout kAndroid13{"android-13", 33, 33, 0, 1, 2, true, 16, 68, 12, 168, 136,
                            104, 24, 2344, FinishedForm::kHandledConsumeTime};
constexpr Layout kAndroid14{"android-14-16", 34, 36, 0, 1, 2, true, 16, 68, 12, 168, 144,
                            104, 24, 2472, FinishedForm::kHandledConsumeTime};

constexpr const Layout* kLayouts[] = {&kAndroid8_0, &kAndroid8_1, &kAndroid11, &kAndroid12,
                                      &kAndroid12L, &kAndroid13,  &kAndroid14};

// Each table row must agree with the sheet's wire sizes: a MOTION of 16 pointers fills sizeof(InputMessage).
constexpr bool Consistent(const Layout& l) { return l.MotionSize(kMaxPointers) == l.message_size; }
static_assert(Consistent(kAndroid8_0) && Consistent(kAndroid8_1) && Consistent(kAndroid11) &&
                  Consistent(kAndroid12) && Consistent(kAndroid12L) && Consistent(kAndroid13) &&
                  Consistent(kAndroid14),
              "a layout's MOTION size with MAX_POINTERS must equal its sizeof(InputMessage)");

}  // namespace

const Layout* LayoutForApi(int api) {
  for (const Layout* l : kLayouts) {
    if (api >= l->min_api && api <= l->max_api) return l;
  }
  return nullptr;
}

const Layout* const* AllLayouts(size_t* count) {
  *count = sizeof(kLayouts) / sizeof(kLayouts[0]);
  return kLayouts;
}

bool IsInputMessageCapacity(size_t len) {
  for (const Layout* l : kLayouts) {
    if (len == l->message_size) return true;
  }
  return false;
}

}  // namespace jp::input
