// InputMessage as it crosses the app's InputChannel socket, per Android release: where the fields are, and
// the checks a packet must pass before any field of it is believed. Facts: shared/reference/android-input.md
// (AOSP InputTransport.h and StructLayout_test.cpp). Offsets here are from the packet start (header is 8
// bytes), so the decoder never adds anything at run time.
//
// A packet is decoded only when its size is exactly what its type and the layout say (SEQPACKET delivers
// whole messages, so a packet of another size is not ours or not this layout); nothing is guessed.
#ifndef JANKPROBE_INPUT_INPUT_MESSAGE_H_
#define JANKPROBE_INPUT_INPUT_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace jp::input {

enum class FinishedForm : uint8_t {
  kSeqHandledBool,     // 8.0-10: body seq u32 @0, handled bool @4; 16 bytes
  kSeqHandledU32,      // 11: body seq u32 @0, handled u32 @4; 16 bytes
  kHandledConsumeTime  // 12+: seq in the header, body handled bool @0, consumeTime i64 @8; 24 bytes
};

struct Layout {
  const char* name;  // "android-13"
  int min_api;
  int max_api;
  uint32_t type_key;
  uint32_t type_motion;
  uint32_t type_finished;
  bool seq_in_header;          // 12+: header word @4; before: first body word (@8)
  uint32_t event_time_off;     // i64
  uint32_t action_off;         // i32
  uint32_t pointer_count_off;  // u32, motion only
  uint32_t pointers_off;
  uint32_t pointer_size;
  uint32_t key_size;
  uint32_t finished_size;
  uint32_t message_size;  // sizeof(InputMessage): what the consumer passes to recv
  FinishedForm finished_form;

  constexpr uint32_t MotionSize(uint32_t pointers) const { return pointers_off + pointers * pointer_size; }
};

constexpr uint32_t kMaxPointers = 16;  // MAX_POINTERS
constexpr size_t kHeaderSize = 8;

// The layout of an API level, or nullptr when no release we know has it (8.0 = 26 through 16 = 36).
const Layout* LayoutForApi(int api);
// Every layout, oldest first (for tests and for "is this a plausible sizeof(InputMessage)").
const Layout* const* AllLayouts(size_t* count);
// True when len is sizeof(InputMessage) of some release: the consumer's recv length, which tells an
// InputChannel read apart from other traffic of the same library.
bool IsInputMessageCapacity(size_t len);

enum class EventType : uint8_t { kKey, kMotion };

struct ReceivedEvent {
  EventType type = EventType::kKey;
  uint32_t seq = 0;
  int32_t action = 0;
  int64_t event_time_ns = 0;
  uint32_t pointer_count = 0;  // motion only
  int8_t action_index = -1;    // ActionIndex(type, action), which validation computed anyway
};

struct FinishedSignal {
  uint32_t seq = 0;
  bool handled = false;
  int64_t consume_time_ns = 0;  // 0 when the release does not send it
};

enum class Verdict : uint8_t {
  kOk,
  kShort,        // fewer bytes than a header
  kOtherType,    // a known type that is not what we look for (FINISHED received, TIMELINE sent...)
  kUnknownType,  // a type value this release does not have
  kBadSize,      // the size does not match the type
  kBadField,     // seq 0, pointer count out of range, action or flag values impossible
};
constexpr int kVerdictCount = 6;
const char* VerdictName(Verdict verdict);

// The decoders are inline (below): the input monitor's flattened hot paths absorb them.
// A packet the app received (KEY or MOTION). n: the bytes recv returned. Out: ReceivedEvent, or any type
// with its fields (the input tracker decodes straight into a pending slot). Each field is stored as soon
// as it is checked, so that few values are live at once: on any verdict but kOk, *out may be partly
// written.
template <typename Out>
inline Verdict DecodeReceived(const Layout& layout, const void* packet, size_t n, Out* out);
// A packet the app sent (FINISHED).
inline Verdict DecodeSent(const Layout& layout, const void* packet, size_t n, FinishedSignal* out);
// A type that is neither of the ones decoded: kOtherType when the release defines it, else kUnknownType.
// Inline and pure: a caller that only tests for kOk (the tracker's owner path) pays nothing for it.
inline Verdict ClassifyOtherType(const Layout& layout, uint32_t type);

// "DOWN", "MOVE", ... for a valid action, nullptr otherwise. Motion actions carry a pointer index in bits
// 8-15, which is ignored here.
const char* ActionName(EventType type, int32_t action);
// A dense index for action names (for interned ids): key 0..2, motion 3..15; -1 when invalid.
inline int ActionIndex(EventType type, int32_t action) {
  if (type == EventType::kKey) return action >= 0 && action <= 2 ? action : -1;
  // Motion: masked action in bits 0-7, pointer index in bits 8-15, nothing above.
  if (action < 0 || (action & ~0xFFFF) != 0) return -1;
  const int masked = action & 0xFF;
  return masked <= 12 ? 3 + masked : -1;
}
constexpr int kActionIndexCount = 16;
const char* ActionNameByIndex(int index);

namespace wire {
// Packets come from a socket buffer with no alignment promise: read fields with memcpy.
inline uint32_t U32(const uint8_t* p, uint32_t off) {
  uint32_t v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}
inline int64_t I64(const uint8_t* p, uint32_t off) {
  int64_t v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}
}  // namespace wire

inline Verdict ClassifyOtherType(const Layout& l, uint32_t type) {
  // The largest type value each release defines (TOUCH_MODE on 13+, TIMELINE on 12, FOCUS on 11, FINISHED
  // before), so that "a type we do not look for" and "garbage" are counted apart.
  const uint32_t max_type =
      l.finished_form == FinishedForm::kHandledConsumeTime ? (l.min_api >= 33 ? 7u : 6u) : 3u;
  return type >= l.type_key && type <= max_type ? Verdict::kOtherType : Verdict::kUnknownType;
}

template <typename Out>
inline Verdict DecodeReceived(const Layout& l, const void* packet, size_t n, Out* out) {
  if (packet == nullptr || n < kHeaderSize) return Verdict::kShort;
  const uint8_t* p = static_cast<const uint8_t*>(packet);
  const uint32_t type = wire::U32(p, 0);
  EventType et;
  if (type == l.type_motion) {  // first: touches are most of what a channel carries
    if (n < l.pointers_off) return Verdict::kBadSize;
    const uint32_t count = wire::U32(p, l.pointer_count_off);
    if (count == 0 || count > kMaxPointers) return Verdict::kBadField;
    if (n != l.MotionSize(count)) return Verdict::kBadSize;
    et = EventType::kMotion;
    out->pointer_count = count;
  } else if (type == l.type_key) {
    if (n != l.key_size) return Verdict::kBadSize;
    et = EventType::kKey;
    out->pointer_count = 0;
  } else {
    return ClassifyOtherType(l, type);
  }
  // Any of these is kBadField, so their order is free: each field is stored once it is checked.
  const uint32_t seq = l.seq_in_header ? wire::U32(p, 4) : wire::U32(p, kHeaderSize);
  if (seq == 0) return Verdict::kBadField;
  out->seq = seq;
  const int64_t event_time = wire::I64(p, l.event_time_off);
  if (event_time <= 0) return Verdict::kBadField;
  out->event_time_ns = event_time;
  int32_t action;
  std::memcpy(&action, p + l.action_off, sizeof action);
  const int action_index = ActionIndex(et, action);
  if (action_index < 0) return Verdict::kBadField;
  out->type = et;
  out->action_index = static_cast<int8_t>(action_index);
  out->action = action;
  return Verdict::kOk;
}

inline Verdict DecodeSent(const Layout& l, const void* packet, size_t n, FinishedSignal* out) {
  if (packet == nullptr || n < kHeaderSize) return Verdict::kShort;
  const uint8_t* p = static_cast<const uint8_t*>(packet);
  const uint32_t type = wire::U32(p, 0);
  if (type != l.type_finished) return ClassifyOtherType(l, type);
  if (n != l.finished_size) return Verdict::kBadSize;
  uint32_t seq;
  uint32_t handled;
  int64_t consume = 0;
  switch (l.finished_form) {
    case FinishedForm::kSeqHandledBool:
      seq = wire::U32(p, kHeaderSize);
      handled = p[kHeaderSize + 4];
      break;
    case FinishedForm::kSeqHandledU32:
      seq = wire::U32(p, kHeaderSize);
      handled = wire::U32(p, kHeaderSize + 4);
      break;
    case FinishedForm::kHandledConsumeTime:
    default:
      seq = wire::U32(p, 4);
      handled = p[kHeaderSize];
      consume = wire::I64(p, kHeaderSize + 8);
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

#endif  // JANKPROBE_INPUT_INPUT_MESSAGE_H_
