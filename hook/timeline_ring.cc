// The ring itself: the append (writer) and read (reader) halves of the seqlock protocol described in
// timeline.h. Mapping and files are in timeline_file.cc.
#include <sys/syscall.h>
#include <unistd.h>

#include "hook/timeline.h"
#include "hook/timeline_codec.h"

namespace jp::hook {

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kNone: return "none";
    case EventKind::kInputKey: return "input.key";
    case EventKind::kInputMotion: return "input.motion";
    case EventKind::kIdleHandler: return "idle.handler";
    case EventKind::kLooperMessage: return "looper.message";
    case EventKind::kFrame: return "frame";
    case EventKind::kBarrier: return "barrier";
    case EventKind::kVerdict: return "verdict";
    case EventKind::kInstant: return "instant";
    case EventKind::kStackSample: return "stack.sample";
    case EventKind::kMonitorState: return "monitor.state";
  }
  return "unknown";
}

pid_t CurrentTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

uint64_t Timeline::Append(const Event& event) noexcept {
  // Relaxed is enough for the claim: the ticket only picks the slot; the slot's seq carries the ordering.
  const uint64_t ticket = __atomic_fetch_add(&header_->head, 1, __ATOMIC_RELAXED);
  layout::Record& r = ring_[ticket & mask_];
  const RecordWords w = EncodeEvent(event, ticket);

  layout::StoreRelaxed(&r.seq, 2 * ticket + 1);
  // Seqlock writer: the odd seq must be visible before any data word, so a reader that saw new data
  // also sees a seq that no longer matches the one it started with.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  layout::StoreRelaxed(&r.ts_ns, w.ts_ns);
  layout::StoreRelaxed(&r.dur_ns, w.dur_ns);
  layout::StoreRelaxed(&r.arg_value[0], w.v0);
  layout::StoreRelaxed(&r.arg_value[1], w.v1);
  layout::StoreRelaxed(&r.ids, w.ids);
  layout::StoreRelaxed(&r.keys, uint64_t{w.checksum} << 32 | w.arg_words);
  // Commit: ticket-derived even seq, published after the data and the checksum.
  layout::StoreRelease(&r.seq, 2 * ticket + 2);
  return ticket;
}

TimelineRead Timeline::Read(uint64_t from) const {
  TimelineRead out;
  const uint64_t head = layout::LoadAcquire(&header_->head);
  const uint64_t capacity = uint64_t{mask_} + 1;
  uint64_t t = from > head ? head : from;
  if (head > capacity && t < head - capacity) {
    out.lost += head - capacity - t;  // lapped before this read began
    t = head - capacity;
  }
  out.events.reserve(static_cast<size_t>(head - t));
  for (; t < head; ++t) {
    const layout::Record& r = ring_[t & mask_];
    const uint64_t committed = 2 * t + 2;
    const uint64_t seq1 = layout::LoadAcquire(&r.seq);
    if (seq1 < committed) break;  // ticket t claimed but not committed yet: stop, the next read resumes here
    if (seq1 > committed) {       // a later lap already took the slot
      ++out.lost;
      continue;
    }
    const RecordWords w = LoadRecordWords(r);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (layout::LoadRelaxed(&r.seq) != seq1) {  // overwritten while we copied
      ++out.lost;
      continue;
    }
    if (!ChecksumMatches(w, t)) {  // two writers a lap apart interleaved in this slot
      ++out.lost;
      ++out.torn;
      continue;
    }
    out.events.push_back(DecodeEvent(w, t));
  }
  out.next_ticket = t;
  return out;
}

}  // namespace jp::hook
