// The common event timeline every monitor writes into: a fixed-capacity, lock-free, multi-producer ring of
// fixed-size records, optionally living in a MAP_SHARED file so the records of a process killed with
// SIGKILL (or by the low-memory killer, or an ANR kill) can be read back by the next run.
//
// Writers (Append) never block, allocate or take a lock and are async-signal-safe: a PLT proxy or a signal
// handler may append. A writer claims a ticket with one fetch_add on the head (the only locked instruction
// of an append) and looks at its slot (ticket & (capacity-1)): if the slot shows the previous lap's commit
// (or an older one followed only by skipped tickets, which per-slot skip counts prove), it is the writer's
// alone: no later writer touches a slot before seeing its commit. It writes data and checksum and commits
// with a release store of seq 2t+2. A writer whose slot is still held by a writer stalled (preempted) for
// a whole lap drops its record instead of waiting (rare, counted, announced to readers); the slot is used
// again once the stalled writer commits. When the ring is full the oldest records are overwritten; nobody
// waits for readers.
//
// Readers (Read/Snapshot) run beside the writers without stopping them: they copy a slot, then re-check
// its seq and that the head has not handed out the slot's next ticket (a writer marks nothing in a slot
// before writing it; its ticket in the head is the mark), and its checksum, and so never return a torn
// record. Tickets that were overwritten before the reader got to them, or dropped, are counted as lost.
//
// Threads: the caller passes its thread id (CurrentTid()); the timeline does not cache it in TLS, because
// the first touch of a thread_local in a dlopen'ed library may allocate, which a signal-time path must not.
//
// Lifetime: a Timeline must outlive every writer (the lifecycle unhooks the monitors before destroying it).
#ifndef JANKPROBE_HOOK_TIMELINE_H_
#define JANKPROBE_HOOK_TIMELINE_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hook/string_intern.h"
#include "hook/timeline_layout.h"

namespace jp::hook {

enum class EventKind : uint16_t {
  kNone = 0,
  kInputKey = 1,       // a key event, from delivery (ts) to finished signal (dur)
  kInputMotion = 2,    // a touch/motion event, likewise
  kIdleHandler = 3,    // one IdleHandler.queueIdle() call
  kLooperMessage = 4,  // one Looper message dispatch
  kFrame = 5,          // a Choreographer frame
  kBarrier = 6,        // a sync barrier, from post to removal (or to the verdict if it leaked)
  kVerdict = 7,        // a lag verdict (instant): what was late and why
  kInstant = 8,        // any other instant marker
  kStackSample = 9,    // a main-thread stack was captured (args point at it)
  kMonitorState = 10,  // a monitor was enabled/disabled (name says which, args why)
};
constexpr uint16_t kEventKindCount = 11;
// "input.key", "looper.message", ... ("unknown" for values past the enum, which a newer writer may use).
const char* EventKindName(EventKind kind);

enum class ArgType : uint8_t { kNone = 0, kInt = 1, kDouble = 2, kString = 3 };

constexpr int kMaxArgs = 4;

struct EventArg {
  uint16_t key = 0;  // an interned string id (< 0x4000)
  ArgType type = ArgType::kNone;
  uint64_t bits = 0;

  static EventArg Int(uint16_t key, int64_t v) { return {key, ArgType::kInt, static_cast<uint64_t>(v)}; }
  static EventArg Double(uint16_t key, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return {key, ArgType::kDouble, bits};
  }
  static EventArg String(uint16_t key, uint16_t id) { return {key, ArgType::kString, id}; }

  int64_t as_int() const { return static_cast<int64_t>(bits); }
  double as_double() const {
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
  }
  uint16_t as_string() const { return static_cast<uint16_t>(bits); }
};

// One event as written and as read back (ticket is filled in by the ring).
struct Event {
  uint64_t ticket = 0;
  uint64_t ts_ns = 0;
  uint64_t dur_ns = 0;
  uint32_t tid = 0;
  EventKind kind = EventKind::kNone;
  uint16_t name = 0;  // interned id
  EventArg args[kMaxArgs];
};

// Records returned by one read, in ticket order.
struct TimelineRead {
  std::vector<Event> events;
  uint64_t lost = 0;         // tickets in [from, next_ticket) not returned: overwritten first, dropped, torn
  uint64_t torn = 0;         // of those, slots whose checksum did not match (damaged memory; 0 in practice)
  uint64_t next_ticket = 0;  // pass to the next Read: every ticket below it is returned or counted lost
};

// The previous run's timeline, read back from its file.
struct RecoveredTimeline {
  bool found = false;  // a file with content was there
  bool valid = false;  // and it was a timeline we could read
  std::string error;   // why it was rejected (set when found && !valid)
  int32_t pid = 0;
  uint32_t capacity = 0;
  uint64_t start_monotonic_ns = 0;
  uint64_t start_realtime_ns = 0;
  uint64_t head = 0;       // tickets claimed by the previous run
  uint64_t recovered = 0;  // records committed and intact
  uint64_t torn = 0;       // records in flight at the kill or failing their checksum: dropped
  uint64_t dropped = 0;    // appends the previous run itself dropped (writers stalled for a lap)
  std::vector<Event> events;         // ticket order
  std::vector<std::string> strings;  // by id; ids the file did not hold read as ""

  std::string_view StringFor(uint16_t id) const;
  // CLOCK_REALTIME ns of a monotonic timestamp of that run.
  uint64_t ToRealtimeNs(uint64_t monotonic_ns) const {
    return start_realtime_ns + (monotonic_ns - start_monotonic_ns);
  }
};

// Reads a timeline file without changing it. Never crashes on a corrupt file: any inconsistency gives
// valid == false and a readable error; bad records are counted as torn.
RecoveredTimeline RecoverPrevious(const std::string& path);

// The calling thread's kernel tid (one syscall; monitors read it once and keep it).
pid_t CurrentTid();

struct PendingRecord;  // an Event packed into record words (below)

class Timeline {
 public:
  struct Options {
    uint32_t capacity = 1024;      // records, a power of two (TimelineConfig's default)
    uint32_t intern_slots = 1024;  // strings, a power of two
    uint32_t arena_bytes = 40960;  // string bytes
  };

  // A timeline in anonymous memory. Null with *error set on failure.
  static std::unique_ptr<Timeline> Create(const Options& options, std::string* error);

  // A timeline in the file at path. Whatever the file held (a previous run's timeline, a corrupt or foreign
  // file) is first read back into previous(), then the file is replaced by a fresh ring. The file stays
  // locked (flock) while this object lives, so a second process cannot share it by mistake.
  static std::unique_ptr<Timeline> Open(const std::string& path, const Options& options, std::string* error);

  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  static constexpr uint64_t kNotCommitted = UINT64_MAX;
  // Hot path: returns the record's ticket. Never blocks or allocates. Returns kNotCommitted only when
  // another writer, stalled (preempted) for a whole lap of the ring, still holds this slot; such drops are
  // counted (dropped()) and still take a ticket (appended() counts every call).
  // Inline: the Event is packed into record words in the caller, where its fields are still in registers.
  // Passing the Event itself out of line made the append load a 64-bit word (tid|kind|name) that the
  // caller had just written with three narrower stores: a failed store-to-load forward, ~1/3 of the
  // append's time under perf.
  uint64_t Append(const Event& event) noexcept;
  // The out-of-line append behind Append: w is complete (SealPayload ran).
  uint64_t AppendEncoded(const PendingRecord& w) noexcept;
  uint64_t dropped() const noexcept { return layout::LoadRelaxed(&header_->dropped); }

  // Records from ticket `from` on (those still in the ring), stopping before the first ticket whose writer
  // has not committed yet. Concurrent appends continue meanwhile.
  TimelineRead Read(uint64_t from) const;
  // Everything still in the ring.
  TimelineRead Snapshot() const { return Read(0); }

  StringTable& strings() { return strings_; }
  const StringTable& strings() const { return strings_; }
  uint16_t Intern(std::string_view s) noexcept { return strings_.Intern(s); }

  uint64_t appended() const noexcept { return layout::LoadAcquire(&header_->head); }
  uint32_t capacity() const noexcept { return mask_ + 1; }
  const std::string& path() const { return path_; }  // "" for an anonymous timeline
  const RecoveredTimeline& previous() const { return previous_; }
  uint64_t start_monotonic_ns() const { return header_->start_monotonic_ns; }
  uint64_t start_realtime_ns() const { return header_->start_realtime_ns; }
  // The mapped region (header, strings, ring), for memory accounting.
  const void* region() const { return header_; }
  uint64_t region_size() const { return region_size_; }

 private:
  static constexpr int kDroppedTicketSlots = 64;

  Timeline() = default;
  bool Map(void* base, uint64_t size, const layout::RegionLayout& l, const Options& options);
  uint64_t Drop(uint64_t ticket, bool announce) noexcept;
  // The slot seq that lets ticket take its slot: the commit of the same slot's previous ticket (0, never
  // written, on the first lap).
  uint64_t FreeSeq(uint64_t ticket) const noexcept { return ticket > mask_ ? 2 * (ticket - mask_ - 1) + 2 : 0; }
  // Slow path: the slot shows an older lap's commit (or none); free if every ticket of the slot since was
  // skipped. Returns this slot's skipped tickets below ticket when free, else kSlotHeld.
  static constexpr uint64_t kSlotHeld = UINT64_MAX;
  __attribute__((noinline, cold)) uint64_t SkipsFreeSlot(uint64_t ticket, uint64_t seq) const noexcept;
  // Takes a ticket without a record (its slot was held): counts and announces it.
  __attribute__((noinline, cold)) uint64_t Skip(uint64_t ticket, uint64_t seq) noexcept;
  bool WasDropped(uint64_t ticket) const noexcept;
  // An append's two steps after its ticket, apart only so that a test can interleave writers that are
  // stalled between them (TimelineRingPeer, tests/hook/timeline_ring_test.cc); AppendEncoded runs them
  // back to back, inlined (same code as before the split). r is ticket's slot. LookAtSlot: the slot's
  // skipped tickets below ticket when the slot is ticket's alone, else kSlotHeld (*seq: what the slot
  // showed, for Skip). WriteSlot: the record and its commit.
  __attribute__((always_inline)) uint64_t LookAtSlot(const layout::Record& r, uint64_t ticket,
                                                     uint64_t* seq) const noexcept;
  __attribute__((always_inline)) static void WriteSlot(layout::Record& r, uint64_t ticket, uint64_t skips_before,
                                                       const PendingRecord& w) noexcept;
  friend class TimelineRingPeer;

  layout::Header* header_ = nullptr;
  layout::Record* ring_ = nullptr;
  uint32_t mask_ = 0;
  uint64_t region_size_ = 0;
  int fd_ = -1;
  std::string path_;
  StringTable strings_;
  RecoveredTimeline previous_;
  // Tickets (+1) whose writers skipped them because a stalled older writer held their slot: the slot shows
  // an older ticket, and without this list a reader could not tell them from writers still on their way.
  // Process-local (recovery needs no cursor). Entries a lap old are reused.
  std::atomic<uint64_t> dropped_tickets_[kDroppedTicketSlots] = {};
  // Per slot, how many of its tickets were skipped so far (see SkipsFreeSlot). Process-local like the list
  // above: recovery needs only seq and head. Its own anonymous mapping, so pages nobody skipped in stay
  // untouched.
  std::atomic<uint32_t>* skip_counts_ = nullptr;
};

// Packing of an Event into a record's words (the decoding half is in timeline_codec.h).
inline uint16_t ArgWord(const EventArg& a) {
  return static_cast<uint16_t>((static_cast<uint16_t>(a.type) & 3u) << layout::kArgTypeShift |
                               (a.key & layout::kArgKeyMask));
}

// Everything but the ticket: checksum holds the payload hash until FinishEncoding mixes the ticket in.
struct PendingRecord {
  uint64_t ts_ns;
  uint64_t dur_ns;
  uint64_t v[4];
  uint64_t ids;
  uint64_t arg_words;
  uint64_t payload_hash;
};

// An Event's fields into record words: PackRecord, then PackArg per argument (unset arguments stay kNone),
// then SealPayload.
inline PendingRecord PackRecord(uint64_t ts_ns, uint64_t dur_ns, uint32_t tid, EventKind kind, uint16_t name) {
  PendingRecord w{};
  w.ts_ns = ts_ns;
  w.dur_ns = dur_ns;
  w.ids = uint64_t{tid} | uint64_t{static_cast<uint16_t>(kind)} << 32 | uint64_t{name} << 48;
  return w;
}
inline void PackArg(PendingRecord* w, int i, const EventArg& a) {
  w->v[i] = a.bits;
  w->arg_words |= uint64_t{ArgWord(a)} << (16 * i);
}
inline void SealPayload(PendingRecord* w) {
  w->payload_hash = layout::PayloadHash(w->ts_ns, w->dur_ns, w->v, w->ids, w->arg_words);
}

inline PendingRecord EncodePayload(const Event& e) {
  static_assert(kMaxArgs == 4, "the record holds four argument words");
  PendingRecord w = PackRecord(e.ts_ns, e.dur_ns, e.tid, e.kind, e.name);
  for (int i = 0; i < kMaxArgs; ++i) PackArg(&w, i, e.args[i]);
  SealPayload(&w);
  return w;
}

inline uint64_t Timeline::Append(const Event& event) noexcept { return AppendEncoded(EncodePayload(event)); }

inline uint64_t Timeline::LookAtSlot(const layout::Record& r, uint64_t ticket, uint64_t* seq) const noexcept {
  *seq = layout::LoadAcquire(&r.seq);
  // This slot's skipped tickets below ours (kept in the check word's high half), or kSlotHeld.
  return __builtin_expect(*seq == FreeSeq(ticket), 1) ? layout::LoadRelaxed(&r.check) >> 32
                                                      : SkipsFreeSlot(ticket, *seq);
}

inline void Timeline::WriteSlot(layout::Record& r, uint64_t ticket, uint64_t skips_before,
                                const PendingRecord& w) noexcept {
  // No odd "writing" seq: the head already says the ticket is taken, and readers and recovery check the
  // head after copying a slot. The release fence orders the fetch_add before every data word, so whoever
  // sees any of our data also sees our ticket in the head.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  layout::StoreRelaxed(&r.ts_ns, w.ts_ns);
  layout::StoreRelaxed(&r.dur_ns, w.dur_ns);
  layout::StoreRelaxed(&r.arg_value[0], w.v[0]);
  layout::StoreRelaxed(&r.arg_value[1], w.v[1]);
  layout::StoreRelaxed(&r.arg_value[2], w.v[2]);
  layout::StoreRelaxed(&r.arg_value[3], w.v[3]);
  layout::StoreRelaxed(&r.ids, w.ids);
  layout::StoreRelaxed(&r.keys, w.arg_words);
  layout::StoreRelaxed(&r.check, skips_before << 32 | layout::FinishChecksum(w.payload_hash, ticket));
  layout::StoreRelease(&r.seq, 2 * ticket + 2);  // commit
}

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_TIMELINE_H_
