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

// A packet the app received (KEY or MOTION). n: the bytes recv returned.
Verdict DecodeReceived(const Layout& layout, const void* packet, size_t n, ReceivedEvent* out);
// A packet the app sent (FINISHED).
Verdict DecodeSent(const Layout& layout, const void* packet, size_t n, FinishedSignal* out);

// "DOWN", "MOVE", ... for a valid action, nullptr otherwise. Motion actions carry a pointer index in bits
// 8-15, which is ignored here.
const char* ActionName(EventType type, int32_t action);
// A dense index for action names (for interned ids): key 0..2, motion 3..15; -1 when invalid.
int ActionIndex(EventType type, int32_t action);
constexpr int kActionIndexCount = 16;
const char* ActionNameByIndex(int index);

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_INPUT_MESSAGE_H_
