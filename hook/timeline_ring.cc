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

uint64_t Timeline::AppendEncoded(const PendingRecord& encoded) noexcept {
  // One locked instruction per append: the fetch_add on the head that hands out the ticket. The slot is
  // then taken with no atomic read-modify-write, only if it shows that all its earlier tickets are
  // finished: the previous lap's commit, or an older commit followed only by skipped tickets
  // (SkipsFreeSlot). That makes the slot ours alone until we commit: a later lap's writer needs our commit
  // value (or a skip we never count) before it touches the slot, and an older writer is done or skipped.
  // A writer that finds its slot held by a writer stalled mid-record for a whole lap (or, in a damaged
  // ring, already past its lap) skips its ticket: its record is dropped (counted) instead of waiting.
  PendingRecord w = encoded;
  // The hash is only used after the fetch_add, and the compiler would sink it there, behind the locked
  // instruction; computed before, it overlaps it.
  __asm__("" : "+r"(w.payload_hash));
  // Relaxed: WriteSlot's release fence orders the ticket before our data (what readers rely on).
  const uint64_t ticket = __atomic_fetch_add(&header_->head, 1, __ATOMIC_RELAXED);
  layout::Record& r = ring_[ticket & mask_];
  uint64_t seq;
  const uint64_t skips_before = LookAtSlot(r, ticket, &seq);
  if (__builtin_expect(skips_before == kSlotHeld, 0)) return Skip(ticket, seq);
  WriteSlot(r, ticket, skips_before, w);
  // The next append's slot was last written a whole lap ago; whatever the caller did since (a hooked
  // syscall) pushed it out of the near caches. Fetched now, it arrives while the caller does something else.
  const char* next = reinterpret_cast<const char*>(&ring_[(ticket + 1) & mask_]);
  __builtin_prefetch(next, 1, 3);
  __builtin_prefetch(next + sizeof(layout::Record) - 1, 1, 3);  // 80-byte records straddle lines
  return ticket;
}

uint64_t Timeline::SkipsFreeSlot(uint64_t ticket, uint64_t seq) const noexcept {
  // The slot shows the commit of ticket w older than the previous lap (or no commit at all). Its tickets
  // between w and ours never wrote it (seq only grows), so each was skipped or was taken by a writer that
  // has not committed yet, which we cannot see. The per-slot skip count tells them apart: w's record holds
  // the number of this slot's skips below w, and if the count now is that plus every ticket in between,
  // there is no such writer. Skippers count after deciding to skip, so a count can lag (we then skip
  // too, wrongly but safely). Counts are 32-bit and compared modulo 2^32.
  // The count can also run ahead, by skips of this slot's later tickets (ours + capacity on): taken while
  // we were stalled between our ticket and this look, by writers that found us on our way. One of those
  // could make up for a ticket between w and ours that is still on its way too, and we would share the
  // slot with it: two records mixed, and a count one off the slot's record from then on, which keeps the
  // slot held for good (every later lap drops its ticket). So a count is trusted only if no later ticket
  // of this slot was handed out yet: a skipper takes its ticket before it counts (the acquire load of the
  // count then makes the head show it). Otherwise we skip: ticket + capacity was handed out, so readers
  // count ours lost by the head rule anyway.
  const uint64_t capacity = uint64_t{mask_} + 1;
  const uint32_t slot = static_cast<uint32_t>(ticket & mask_);
  uint64_t base_skips = 0, between = 0;
  if (seq == 0) {
    between = ticket / capacity;  // every earlier ticket of this slot
  } else {
    if (seq & 1) return kSlotHeld;  // a writer is mid-record (only a damaged ring or an older layout has this)
    const uint64_t w = seq / 2 - 1;
    if ((w & mask_) != slot || w + capacity >= ticket) return kSlotHeld;  // not an older lap: damaged
    const layout::Record& r = ring_[slot];
    base_skips = layout::LoadRelaxed(&r.check) >> 32;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (layout::LoadRelaxed(&r.seq) != seq) return kSlotHeld;  // moved on meanwhile: look again next time
    between = (ticket - w) / capacity - 1;
  }
  const uint32_t counted = skip_counts_[slot].load(std::memory_order_acquire);
  if (counted != static_cast<uint32_t>(base_skips + between)) return kSlotHeld;
  if (layout::LoadRelaxed(&header_->head) > ticket + capacity) return kSlotHeld;  // lapped: see above
  return counted;
}

uint64_t Timeline::Skip(uint64_t ticket, uint64_t seq) noexcept {
  skip_counts_[ticket & mask_].fetch_add(1, std::memory_order_release);
  // A slot already showing a later lap needs no announcement: readers count that ticket lost by its seq.
  return Drop(ticket, /*announce=*/seq < 2 * ticket + 1);
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
  // More skipped tickets at once than entries: readers wait at this ticket until it is a lap old.
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
    // Overwritten while we copied: the next lap's writer took the slot (it stores no mark before its data,
    // but it took its ticket before: if we saw any of its data, the head shows that ticket; see Append).
    if (layout::LoadRelaxed(&r.seq) != seq1 || layout::LoadRelaxed(&header_->head) > t + capacity) {
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
