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
  // Relaxed is enough for the ticket: it only picks the slot; the slot's seq carries the ordering.
  const uint64_t ticket = __atomic_fetch_add(&header_->head, 1, __ATOMIC_RELAXED);
  layout::Record& r = ring_[ticket & mask_];
  const RecordWords w = EncodeEvent(event, ticket);
  const uint64_t writing = 2 * ticket + 1;

  // Take the slot with a CAS, only from an even (committed or empty) seq of an older ticket:
  // - seq already at or past ours: a later lap owns the slot (this writer was preempted for a whole lap).
  //   Writing would roll the slot back and hide that later record, so drop ours; readers count it lost.
  // - seq odd: an older writer stalled mid-record still owns it. Taking over would let its late stores
  //   scribble over our record, so drop ours and say so in the drop list, or readers would wait for it.
  // While the seq is our odd value nobody else changes it, so the data and the commit need no CAS.
  uint64_t seq = layout::LoadRelaxed(&r.seq);
  do {
    if (seq >= writing) return Drop(ticket, /*announce=*/false);
    if (seq & 1) return Drop(ticket, /*announce=*/true);
  } while (!__atomic_compare_exchange_n(&r.seq, &seq, writing, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  // Seqlock writer: the odd seq must be visible before any data word, so a reader that saw new data
  // also sees a seq that no longer matches the one it started with.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  layout::StoreRelaxed(&r.ts_ns, w.ts_ns);
  layout::StoreRelaxed(&r.dur_ns, w.dur_ns);
  for (int i = 0; i < 4; ++i) layout::StoreRelaxed(&r.arg_value[i], w.v[i]);
  layout::StoreRelaxed(&r.ids, w.ids);
  layout::StoreRelaxed(&r.keys, w.arg_words);
  layout::StoreRelaxed(&r.check, w.checksum);
  layout::StoreRelease(&r.seq, writing + 1);  // commit
  return ticket;
}

uint64_t Timeline::Drop(uint64_t ticket, bool announce) noexcept {
  __atomic_fetch_add(&header_->dropped, 1, __ATOMIC_RELAXED);
  if (!announce) return kNotCommitted;
  // Reuse an entry whose ticket is a lap old: readers count such tickets lost by the head rule anyway.
  const uint64_t head = layout::LoadRelaxed(&header_->head);
  for (std::atomic<uint64_t>& entry : dropped_tickets_) {
    uint64_t v = entry.load(std::memory_order_relaxed);
    if (v != 0 && v - 1 + capacity() >= head) continue;
    if (entry.compare_exchange_strong(v, ticket + 1, std::memory_order_release, std::memory_order_relaxed)) {
      return kNotCommitted;
    }
  }
  // More writers stalled mid-record at once than entries: readers wait at this ticket until it is a lap old.
  return kNotCommitted;
}

bool Timeline::WasDropped(uint64_t ticket) const noexcept {
  for (const std::atomic<uint64_t>& entry : dropped_tickets_) {
    if (entry.load(std::memory_order_acquire) == ticket + 1) return true;
  }
  return false;
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
    // Ticket t not committed yet: its writer is on the way (seq only grows, so it will commit or drop
    // and announce it). Stop; the next read resumes here.
    if (seq1 < committed) {
      if (WasDropped(t)) {  // its writer gave up (the slot was held by a stalled older writer)
        ++out.lost;
        continue;
      }
      break;
    }
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
    if (!ChecksumMatches(w, t)) {  // cannot happen between live writers; guards against memory damage
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
