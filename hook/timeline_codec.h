// Packing of an Event into a Record's words and back; shared by the live ring and by file recovery.
#ifndef JANKPROBE_HOOK_TIMELINE_CODEC_H_
#define JANKPROBE_HOOK_TIMELINE_CODEC_H_

#include "hook/timeline.h"
#include "hook/timeline_layout.h"

namespace jp::hook {

// A record's payload as plain values (what the checksum covers, minus the ticket).
struct RecordWords {
  uint64_t ts_ns;
  uint64_t dur_ns;
  uint64_t v[4];
  uint64_t ids;
  uint64_t arg_words;
  uint32_t checksum;
};

inline bool ChecksumMatches(const RecordWords& w, uint64_t ticket) {
  return w.checksum == layout::RecordChecksum(ticket, w.ts_ns, w.dur_ns, w.v, w.ids, w.arg_words);
}

inline Event DecodeEvent(const RecordWords& w, uint64_t ticket) {
  Event e;
  e.ticket = ticket;
  e.ts_ns = w.ts_ns;
  e.dur_ns = w.dur_ns;
  e.tid = static_cast<uint32_t>(w.ids);
  e.kind = static_cast<EventKind>(static_cast<uint16_t>(w.ids >> 32));
  e.name = static_cast<uint16_t>(w.ids >> 48);
  for (int i = 0; i < kMaxArgs; ++i) {
    uint16_t word = static_cast<uint16_t>(w.arg_words >> (16 * i));
    e.args[i].key = word & layout::kArgKeyMask;
    e.args[i].type = static_cast<ArgType>(word >> layout::kArgTypeShift);
    e.args[i].bits = w.v[i];
  }
  return e;
}

// Copies a record's payload with relaxed atomic loads (the seqlock reader re-checks seq afterwards).
inline RecordWords LoadRecordWords(const layout::Record& r) {
  RecordWords w;
  w.ts_ns = layout::LoadRelaxed(&r.ts_ns);
  w.dur_ns = layout::LoadRelaxed(&r.dur_ns);
  for (int i = 0; i < 4; ++i) w.v[i] = layout::LoadRelaxed(&r.arg_value[i]);
  w.ids = layout::LoadRelaxed(&r.ids);
  w.arg_words = layout::LoadRelaxed(&r.keys);
  w.checksum = static_cast<uint32_t>(layout::LoadRelaxed(&r.check));
  return w;
}

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_TIMELINE_CODEC_H_
