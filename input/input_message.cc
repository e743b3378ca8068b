#include "input/input_message.h"

namespace jp::input {
namespace {

// The largest type value each release defines (TOUCH_MODE on 13+, TIMELINE on 12, FOCUS on 11, FINISHED
// before), so that "a type we do not look for" and "garbage" are counted apart.
uint32_t MaxType(const Layout& l) {
  if (l.finished_form == FinishedForm::kHandledConsumeTime) return l.min_api >= 33 ? 7 : 6;
  if (l.finished_form == FinishedForm::kSeqHandledU32) return 3;
  return 3;
}
uint32_t MinType(const Layout& l) { return l.type_key; }

constexpr const char* kActionNames[kActionIndexCount] = {
    "DOWN", "UP", "MULTIPLE",  // key: 0..2
    "DOWN", "UP", "MOVE", "CANCEL", "OUTSIDE", "POINTER_DOWN", "POINTER_UP", "HOVER_MOVE", "SCROLL",
    "HOVER_ENTER", "HOVER_EXIT", "BUTTON_PRESS", "BUTTON_RELEASE"};  // motion: 0..12

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk: return "ok";
    case Verdict::kShort: return "short";
    case Verdict::kOtherType: return "other_type";
    case Verdict::kUnknownType: return "unknown_type";
    case Verdict::kBadSize: return "bad_size";
    case Verdict::kBadField: return "bad_field";
  }
  return "?";
}

const char* ActionNameByIndex(int index) {
  return index >= 0 && index < kActionIndexCount ? kActionNames[index] : nullptr;
}

const char* ActionName(EventType type, int32_t action) { return ActionNameByIndex(ActionIndex(type, action)); }

Verdict ClassifyOtherType(const Layout& l, uint32_t type) {
  return type >= MinType(l) && type <= MaxType(l) ? Verdict::kOtherType : Verdict::kUnknownType;
}

}  // namespace jp::input
