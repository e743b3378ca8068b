#include "input/input_message.h"

#include <cstring>

#include "input/hot_path.h"

namespace jp::input {
namespace {

// Packets come from a socket buffer with no alignment promise: read fields with memcpy.
uint32_t U32(const uint8_t* p, uint32_t off) {
  uint32_t v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}
int64_t I64(const uint8_t* p, uint32_t off) {
  int64_t v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}

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

JP_INPUT_HOT int ActionIndex(EventType type, int32_t action) {
  if (type == EventType::kKey) return action >= 0 && action <= 2 ? action : -1;
  // Motion: masked action in bits 0-7, pointer index in bits 8-15, nothing above.
  if (action < 0 || (action & ~0xFFFF) != 0) return -1;
  const int masked = action & 0xFF;
  return masked <= 12 ? 3 + masked : -1;
}

const char* ActionNameByIndex(int index) {
  return index >= 0 && index < kActionIndexCount ? kActionNames[index] : nullptr;
}

const char* ActionName(EventType type, int32_t action) { return ActionNameByIndex(ActionIndex(type, action)); }

JP_INPUT_HOT Verdict DecodeReceived(const Layout& l, const void* packet, size_t n, ReceivedEvent* out) {
  if (packet == nullptr || n < kHeaderSize) return Verdict::kShort;
  const uint8_t* p = static_cast<const uint8_t*>(packet);
  const uint32_t type = U32(p, 0);
  EventType et;
  if (type == l.type_key) {
    if (n != l.key_size) return Verdict::kBadSize;
    et = EventType::kKey;
  } else if (type == l.type_motion) {
    if (n < l.pointers_off) return Verdict::kBadSize;
    const uint32_t count = U32(p, l.pointer_count_off);
    if (count == 0 || count > kMaxPointers) return Verdict::kBadField;
    if (n != l.MotionSize(count)) return Verdict::kBadSize;
    et = EventType::kMotion;
    out->pointer_count = count;
  } else {
    return type >= MinType(l) && type <= MaxType(l) ? Verdict::kOtherType : Verdict::kUnknownType;
  }
  const uint32_t seq = l.seq_in_header ? U32(p, 4) : U32(p, kHeaderSize);
  const int64_t event_time = I64(p, l.event_time_off);
  int32_t action;
  std::memcpy(&action, p + l.action_off, sizeof action);
  const int action_index = ActionIndex(et, action);
  if (seq == 0 || event_time <= 0 || action_index < 0) return Verdict::kBadField;
  out->type = et;
  out->action_index = static_cast<int8_t>(action_index);
  out->seq = seq;
  out->action = action;
  out->event_time_ns = event_time;
  if (et == EventType::kKey) out->pointer_count = 0;
  return Verdict::kOk;
}

JP_INPUT_HOT Verdict DecodeSent(const Layout& l, const void* packet, size_t n, FinishedSignal* out) {
  if (packet == nullptr || n < kHeaderSize) return Verdict::kShort;
  const uint8_t* p = static_cast<const uint8_t*>(packet);
  const uint32_t type = U32(p, 0);
  if (type != l.type_finished) {
    return type >= MinType(l) && type <= MaxType(l) ? Verdict::kOtherType : Verdict::kUnknownType;
  }
  if (n != l.finished_size) return Verdict::kBadSize;
  uint32_t seq;
  uint32_t handled;
  int64_t consume = 0;
  switch (l.finished_form) {
    case FinishedForm::kSeqHandledBool:
      seq = U32(p, kHeaderSize);
      handled = p[kHeaderSize + 4];
      break;
    case FinishedForm::kSeqHandledU32:
      seq = U32(p, kHeaderSize);
      handled = U32(p, kHeaderSize + 4);
      break;
    case FinishedForm::kHandledConsumeTime:
    default:
      seq = U32(p, 4);
      handled = p[kHeaderSize];
      consume = I64(p, kHeaderSize + 8);
      if (consume <= 0) return Verdict::kBadField;
      break;
  }
  if (seq == 0 || handled > 1) return Verdict::kBadField;
  out->seq = seq;
  out->handled = handled != 0;
  out->consume_time_ns = consume;
  return Verdict::kOk;
}

}  // namespace jp::input
