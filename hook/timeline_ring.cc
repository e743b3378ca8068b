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
  const uint64_t writing = 2 * ticket + 1;

  // Take the slot only forwards. A writer stalled for a whole lap finds a later ticket there and drops its
  // record instead of rolling the slot back (which would hide the later record and stall readers). A
  // slot left odd by an older stalled writer is taken over: never waiting is the point.
  uint64_t seq = layout::LoadRelaxed(&r.seq);
  do {
    if (seq >= writing) {
      __atomic_fetch_add(&header_->dropped, 1, __ATOMIC_RELAXED);
      return kNotCommitted;
    }
  } while (!__atomic_compare_exchange_n(&r.seq, &seq, writing, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  // Seqlock writer: the odd seq must be visible before any data word, so a reader that saw new data
  // also sees a seq that no longer matches the one it started with.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  layout::StoreRelaxed(&r.ts_ns, w.ts_ns);
  layout::StoreRelaxed(&r.dur_ns, w.dur_ns);
  layout::StoreRelaxed(&r.arg_value[0], w.v0);
  layout::StoreRelaxed(&r.arg_value[1], w.v1);
  layout::StoreRelaxed(&r.ids, w.ids);
  layout::StoreRelaxed(&r.keys, uint64_t{w.checksum} << 32 | w.arg_words);
  // Commit, unless a later lap took the slot over meanwhile (then the data may be mixed; the checksum
  // makes readers reject it, and this record is dropped).
  uint64_t expected = writing;
  if (!__atomic_compare_exchange_n(&r.seq, &expected, writing + 1, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    __atomic_fetch_add(&header_->dropped, 1, __ATOMIC_RELAXED);
    return kNotCommitted;
  }
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
    // Ticket t claimed but not committed yet (seq only grows, so its writer is still on the way and will
    // either commit or be overtaken): stop, the next read resumes here.
    if (seq1 < committed) break;
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
