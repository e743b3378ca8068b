// Lookups in the per-release offset tables (input/input_layouts.h).
#include "input/input_layouts.h"

namespace jp::input {
namespace {

// Each table row must agree with the sheet's wire sizes: a MOTION of 16 pointers fills sizeof(InputMessage).
constexpr bool Consistent(const Layout& l) { return l.MotionSize(kMaxPointers) == l.message_size; }
static_assert(Consistent(kAndroid8_0) && Consistent(kAndroid8_1) && Consistent(kAndroid11) &&
                  Consistent(kAndroid12) && Consistent(kAndroid12L) && Consistent(kAndroid13) &&
                  Consistent(kAndroid14),
              "a layout's MOTION size with MAX_POINTERS must equal its sizeof(InputMessage)");

}  // namespace

const Layout* LayoutForApi(int api) {
  for (const Layout* l : kLayoutTable) {
    if (api >= l->min_api && api <= l->max_api) return l;
  }
  return nullptr;
}

const Layout* const* AllLayouts(size_t* count) {
  *count = sizeof(kLayoutTable) / sizeof(kLayoutTable[0]);
  return kLayoutTable;
}

bool IsInputMessageCapacity(size_t len) {
  for (const Layout* l : kLayoutTable) {
    if (len == l->message_size) return true;
  }
  return false;
}

}  // namespace jp::input
