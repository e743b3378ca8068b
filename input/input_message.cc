#include "input/input_message.h"

namespace jp::input {
namespace {

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

}  // namespace jp::input
