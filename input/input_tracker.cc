#include "input/input_tracker.h"

#include <errno.h>
#include <time.h>

#include <cstddef>
#include <cstring>
#include <new>

#include "hook/caller_tid.h"
#include "hook/clock.h"
#include "hook/json_out.h"
#include "input/hot_path.h"
#include "input/input_layouts.h"

namespace jp::input {

namespace {
// The hot paths leave errno as the original call set it. Only the watchdog's Arm/Disarm (rare: a new
// earliest deadline, a lagged event) can change it, so errno is saved around those alone: saving it
// around every proxy call was two __errno_location calls per call, on the chain the app waits for.
class ErrnoKeeper {
 public:
  ErrnoKeeper() noexcept : saved_(errno) {}
  ~ErrnoKeeper() { errno = saved_; }
  ErrnoKeeper(const ErrnoKeeper&) = delete;
  ErrnoKeeper& operator=(const ErrnoKeeper&) = delete;

 private:
  int saved_;
};
}  // namespace

namespace internal {
// The tracker's memory: zero-initialised data (.bss), which is zero and becomes resident only when written,
// as the anonymous mapping it was until session 8 (and as malloc'd memory was not: every byte stored by
// the constructor, and the chunk in a malloc arena). Its constructor writes its header, the channel table
// and the ring's cursors, and leaves the pending table (16 KiB) and the finished ring's slots (8 KiB) as
// they are (already their initial state), so the app pays for the pages its channels' slots and the
// events in flight touch, not for the whole table. Aligned as the tracker (128: the gate's owner line and
// line A are one aligned pair).
alignas(InputTracker) unsigned char g_tracker_storage[sizeof(InputTracker)];
}  // namespace internal

InputTracker& InputTracker::Get() {
  // The per-event lines (see the members): the gate first, its owner line (its last) and line A one
  // 128-byte aligned pair. offsetof on a class that is not standard-layout: supported by GCC and clang.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(alignof(InputTracker) == 128 && offsetof(InputTracker, gate_) == 0 &&
                    sizeof(hook::InFlightGate) == 3 * 64 && offsetof(InputTracker, received_at_) == 3 * 64 &&
                    offsetof(InputTracker, ring_producer_) + sizeof(FinishedRing::Producer) <= 4 * 64 &&
                    kOwnerLineOffset == 2 * 64,
                "the gate's owner line (its last) and line A are the pair at bytes 128-255");
  static_assert(offsetof(InputTracker, owner_clock_) == kOwnerClockOffset && kOwnerClockOffset == 4 * 64 &&
                    offsetof(InputTracker, events_finished_) >= 5 * 64,
                "line B: the owner's clock copy, and no word other threads write");
  static_assert(offsetof(InputTracker, pending_) == kPendingSlotsOffset && offsetof(PendingEvents, slots_) == 0,
                "PrefetchFinishedSlot's constant: the pending table's first slot");
#pragma GCC diagnostic pop
  // Never destroyed: proxies left in another tool's chain and late watchdog callbacks may still look.
  static InputTracker* tracker = new (internal::g_tracker_storage) InputTracker;
  return *tracker;
}

void InputTracker::Enable(const Settings& s) {
  std::string why;
  fence_note_ = gate_.fence().Init(&why) ? "membarrier" : why;
  // Event timestamps (read and finish) come from the process's event clock (the looper's poll source
  // reads it too); calibrated by whichever monitor starts first. No hot path runs yet: the flag is
  // published below.
  hook::CalibrateProcessEventClock();
  gate_.ProposeOwner(s.context ? s.context->main_tid : 0);
  layout_ = s.layout;
  const int layout_index = LayoutIndex(s.layout);
  // The hot entries compiled for this layout (before the flag is published; a proxy that still holds the
  // entry of an earlier Enable finds layout_index_ changed once inside the gate and takes the general
  // path).
  layout_index_ = layout_index;
  received_at_.store(ReceivedEntryFor(layout_index), std::memory_order_relaxed);
  sent_at_.store(SentEntryFor(layout_index), std::memory_order_relaxed);
  context_ = s.context;
  timeline_ = s.context ? s.context->timeline : nullptr;
  lag_ns_.store(s.lag_ns, std::memory_order_relaxed);
  anr_ns_.store(s.anr_ns, std::memory_order_relaxed);
  hook::Timeline* tl = s.context ? s.context->timeline : nullptr;
  if (tl) {
    for (int i = 0; i < kActionIndexCount; ++i) action_names_[i] = tl->Intern(ActionNameByIndex(i));
    name_fd_timed_ = tl->Intern("unknown");
    key_fd_ = tl->Intern("fd");
    key_seq_ = tl->Intern("seq");
    key_dispatch_ = tl->Intern("dispatch_ms");
    ms_per_ns_ = 1e-6;  // RecordOf's factor (finished_records.cc: why it is not a constant)
    key_consume_ = tl->Intern("consume_ms");
    key_mode_ = tl->Intern("mode");
    value_fd_ = tl->Intern("fd");
  }
  channels_.Clear();
  clean_fd_.store(-1, std::memory_order_relaxed);
  armed_due_ns_.store(UINT64_MAX, std::memory_order_relaxed);
  owner_clock_.limit = 0;  // the owner's next read copies the process anchor (calibrated above) again
  // Reports and exports see the records the ring still holds (registered before any can be pushed).
  lent_to_ = s.context ? s.context->reports : nullptr;
  if (lent_to_) lent_to_->AddInFlightProvider(&LendFinished, this);
  // The flag (the gate's own, read by every entry): a release of all of the above.
  gate_.Open();
}

std::string InputTracker::FenceMode() const { return fence_note_; }

void InputTracker::Retune(uint64_t lag_ns, uint64_t anr_ns) {
  lag_ns_.store(lag_ns, std::memory_order_relaxed);
  anr_ns_.store(anr_ns, std::memory_order_relaxed);
}

void InputTracker::Disable() {
  gate_.Close();  // seq_cst
  gate_.Drain();  // hot paths and callbacks that got in before the flag fell
  hook::Watchdog* wd = context_ ? context_->watchdog : nullptr;
  // A deadline that fires anyway finds the tracker disabled (or, after a new Enable, scans a table
  // that has nothing overdue for it).
  const uint64_t armed = armed_due_ns_.exchange(UINT64_MAX, std::memory_order_relaxed);
  if (wd && armed != UINT64_MAX) wd->Disarm(DeadlineId(armed));
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    const uint32_t w = pending_.Word(i);
    if (StateOf(w) == kFree) continue;
    if (wd) wd->Disarm(ReportId(i, GenerationOf(w)));
    dropped_at_disable_.fetch_add(1, std::memory_order_relaxed);
    pending_.Free(i);
  }
  stacks_.Release();
  channels_.Clear();
  clean_fd_.store(-1, std::memory_order_relaxed);
  // No hot path pushes any more (the gate is drained): what the ring holds goes into the timeline now,
  // before the provider that lends it is removed, so no report or export in between misses a record.
  DrainFinished();
  if (lent_to_) lent_to_->RemoveInFlightProvider(&LendFinished, this);
  lent_to_ = nullptr;
  context_ = nullptr;
  timeline_ = nullptr;
}

uint64_t InputTracker::DeadlineId(uint64_t due_ns) noexcept {
  // One id per due time, so that lowering the deadline can disarm exactly the one it replaces.
  return 0x4944000000000000ull | (due_ns & 0x0000FFFFFFFFFFFFull);
}
uint64_t InputTracker::ReportId(int index, uint32_t generation) noexcept {
  return 0x4952000000000000ull | (static_cast<uint64_t>(generation) << 8) | static_cast<uint64_t>(index);
}
bool InputTracker::DecodeReportId(uint64_t id, int* index, uint32_t* generation) noexcept {
  *index = static_cast<int>(id & 0xFF);
  *generation = static_cast<uint32_t>((id >> 8) & 0xFFFFFFFFull);
  return *index < PendingEvents::kSlots;
}

JP_INPUT_HOT void InputTracker::LowerDeadline(uint64_t due) noexcept {
  // The caller published a pending slot (or, on the watchdog, reset armed_due_ns_ and ran the heavy
  // fence): this fence pairs with that one, so either the deadline's callback sees the slot in its scan
  // or we see that no deadline covers it and arm one.
  gate_.fence().Light();
  LowerDeadlineFenced(due);
}

JP_INPUT_HOT void InputTracker::LowerDeadlineFenced(uint64_t due) noexcept {
  const uint64_t armed = armed_due_ns_.load(std::memory_order_relaxed);
  if (armed > due) ArmEarlier(armed, due);
}

JP_INPUT_COLD void InputTracker::ArmEarlier(uint64_t armed, uint64_t due) noexcept {
  while (armed > due) {
    if (!armed_due_ns_.compare_exchange_weak(armed, due, std::memory_order_relaxed)) continue;
    const ErrnoKeeper keep_errno;
    hook::Watchdog* wd = context_->watchdog;
    if (!wd->Arm(DeadlineId(due), due, &OnMonitorDeadline, this, 0)) {
      arm_failures_.fetch_add(1, std::memory_order_relaxed);
      uint64_t mine = due;  // let the next event try again
      armed_due_ns_.compare_exchange_strong(mine, armed, std::memory_order_relaxed);
      return;
    }
    // The later one it replaces; if it is firing right now, its callback finds itself replaced.
    if (armed != UINT64_MAX) wd->Disarm(DeadlineId(armed));
    return;
  }
}

namespace {
// The slot as one opaque pointer: the compiler otherwise keeps two forms of its address (the tracker
// plus the slot's offset for the fields, the slot itself for its word), one register more on a path that
// has none to spare. An empty asm, no instruction.
inline PendingEvent& SlotRegister(PendingEvent& slot) noexcept {
  PendingEvent* p = &slot;
  __asm__("" : "+r"(p));
  return *p;
}
}  // namespace

// The owner's usual event, per side, written so that it makes no call: every rare branch leaves by a
// tail call into a cold function that finishes the work (and leaves the gate), so the hot entries need no
// saved registers, no stack frame and no spills (in situ every instruction of the chain counts:
// input/hot_path.h). Whatever is checked before the first store can still go to the general path whole.
template <int kLayout>
inline ssize_t InputTracker::ReceivedAtBody(InputTracker* self, int fd, const void* buf, ssize_t n, uint64_t now,
                                            size_t capacity) noexcept {
  // Another thread, the owner before it is known here, a nested entry (a signal handler on the owner
  // thread: it may not use the owner's private parts), the generic entry (fd mode, a layout from outside
  // the table) and a stale one (loaded before a new Enable bound another layout): the gated general path.
  if (kLayout < 0 || __builtin_expect(!self->IsOwnerThread(), 0)) {
    JP_INPUT_RARE_EXIT return self->ReceivedGated(fd, buf, n, now, capacity);
  }
  const int in = self->gate_.EnterOwnerOutermost();
  if (__builtin_expect(in < 0, 0)) { JP_INPUT_RARE_EXIT return self->ReceivedGated(fd, buf, n, now, capacity); }
  if (__builtin_expect(in == 0, 0)) { JP_INPUT_RARE_EXIT return self->LeaveAsOwner(n); }
  if (__builtin_expect(self->layout_index_ != kLayout, 0)) {
    JP_INPUT_RARE_EXIT return self->ReceivedOwnerGeneral(fd, buf, n, now, capacity);
  }
  if constexpr (kLayout >= 0) {
    // The owner's first probe (Claim's usual case) without the kClaimed step: no other thread claims or
    // takes in the owner's part, so the fields are written while the slot still reads kFree (every reader
    // skips a free slot, and one that copied it while it was still the previous occupant's sees the
    // generation moved) and one release store makes it pending. So the fields known before decoding
    // go in first: a packet that then fails leaves a free slot with stale fields, which nothing reads.
    // Touches only (a MOTION is never shorter than its pointers' offset; a KEY always is): the decoder
    // is then compiled without its KEY branch and keeps fewer values live.
    constexpr const Layout& kL = *kLayoutTable[kLayout];
    constexpr size_t kMinMotion = kL.pointers_off;
    static_assert(kL.key_size < kMinMotion, "a KEY is shorter than any MOTION");
    if (__builtin_expect(static_cast<size_t>(n) < kMinMotion, 0)) {
      JP_INPUT_RARE_EXIT return self->ReceivedOwnerGeneral(fd, buf, n, now, capacity);
    }
    // The probe is the event's (fd, seq): the seq read before decoding (a packet that then fails leaves
    // its slot free, as below), where the decoder reads it.
    static_assert(kMinMotion >= kHeaderSize + sizeof(uint32_t), "the seq is inside any MOTION");
    const uint32_t seq = wire::U32(static_cast<const uint8_t*>(buf), kL.seq_in_header ? 4 : kHeaderSize);
    PendingEvent& e = SlotRegister(self->pending_.at(PendingEvents::OwnerFirstProbe(fd, seq)));
    // The next read of a batch (the app reads until the channel is empty) claims the next lane: asked
    // for now, as the send side does for the next FINISHED.
    PendingEvents::PrefetchNextLane(e);
    const uint32_t word = e.word.load(std::memory_order_acquire);  // pairs with Free's release
    if (__builtin_expect(StateOf(word) != kFree, 0)) {
      JP_INPUT_RARE_EXIT return self->ReceivedOwnerGeneral(fd, buf, n, now, capacity);
    }
    e.fd = fd;
    e.tid = self->OwnerTid();  // the caller's: it is the owner
    e.fd_mode = false;
    e.read_ns = now;
    // Decoded straight into the slot (each field stored once checked: few values live at once).
    if (__builtin_expect(DecodeReceivedAs<kLayout>(buf, static_cast<size_t>(n), &e) != Verdict::kOk, 0)) {
      JP_INPUT_RARE_EXIT return self->ReceivedOwnerGeneral(fd, buf, n, now, capacity);
    }
    // The word again rather than kept from the probe (a register less across the decoding; nobody else
    // writes an owner-part slot). A free word's state bits are 0.
    static_assert(kFree == 0, "a free word's state bits are 0");
    e.word.store(e.word.load(std::memory_order_relaxed) | kPending, std::memory_order_release);
    self->events_read_owner_.store(self->events_read_owner_.load(std::memory_order_relaxed) + 1,
                                   std::memory_order_relaxed);
    // LowerDeadline and NoteValid, their usual case inline (nothing to do), the rest in ReceivedRest.
    const uint64_t due = now + self->lag_ns_.load(std::memory_order_relaxed);
    self->gate_.fence().Light();
    // The channel's "validated, nothing to note" look: the fd it last held for (one compare); another fd
    // (a first read, a second channel) goes to ReceivedRest for the table's own look, which moves that hint.
    if (__builtin_expect(self->armed_due_ns_.load(std::memory_order_relaxed) > due, 0)) {
      JP_INPUT_RARE_EXIT return self->ReceivedRest(fd, due, n);
    }
    if (__builtin_expect(fd != self->clean_fd_.load(std::memory_order_relaxed), 0)) {
      JP_INPUT_RARE_EXIT return self->ReceivedRest(fd, due, n);
    }
    return self->LeaveAsOwner(n);
  }
}

// Also the channel's look when the read's fd is not the one the hint holds (a first read, a second
// channel): inline in ReceivedAt it lay between the usual path's instructions (one code line more per read).
JP_INPUT_COLD ssize_t InputTracker::ReceivedRest(int fd, uint64_t due, ssize_t n) noexcept {
  LowerDeadlineFenced(due);  // after the caller's Light()
  if (channels_.IsCleanValid(fd)) {
    clean_fd_.store(fd, std::memory_order_relaxed);
  } else {
    channels_.NoteValid(fd);
  }
  return LeaveAsOwner(n);
}

JP_INPUT_COLD ssize_t InputTracker::ReceivedOwnerGeneral(int fd, const void* buf, ssize_t n, uint64_t now,
                                                         size_t capacity) noexcept {
  owner_general_reads_.Add(true);
  Received(true, OwnerTid(), fd, buf, n, capacity, now);
  return LeaveAsOwner(n);
}

JP_INPUT_COLD ssize_t InputTracker::ReceivedGated(int fd, const void* buf, ssize_t n, uint64_t now,
                                                  size_t capacity) noexcept {
  const uint32_t tid = hook::CallerTid();
  const hook::InFlightGate::Pass pass = EnterGated(tid);
  if (pass.open) Received(pass.exclusive(), tid, fd, buf, n, capacity, now);
  LeaveGated(pass);
  return n;
}

JP_INPUT_COLD hook::InFlightGate::Pass InputTracker::EnterGated(uint32_t tid) noexcept {
  const hook::InFlightGate::Pass pass = gate_.Enter(tid, gate_.own_flag());
  if (pass.exclusive()) {
    // The gate's owner never changes once set: from now on its events take IsOwnerThread's way in.
    gate_.owner_word(kOwnerTidWord).store(tid, std::memory_order_relaxed);
    gate_.owner_word(kOwnerTpWord)
        .store(reinterpret_cast<uintptr_t>(__builtin_thread_pointer()), std::memory_order_relaxed);
  }
  return pass;
}

JP_INPUT_COLD void InputTracker::Received(bool owner, uint32_t tid, int fd, const void* buf, ssize_t n,
                                          size_t capacity, uint64_t now) noexcept {
  if (layout_ == nullptr) {
    ReceivedFdMode(owner, tid, fd, now);
    return;
  }
  ReceivedEvent ev;
  const Verdict v = DecodeReceived(*layout_, buf, static_cast<size_t>(n), &ev);
  if (__builtin_expect(v != Verdict::kOk, 0)) {
    RejectReceived(owner, tid, fd, v, capacity, now);
    return;
  }
  Track(owner, tid, fd, &ev, now);
  channels_.NoteValid(fd);
}

void InputTracker::RejectReceived(bool owner, uint32_t tid, int fd, Verdict v, size_t capacity,
                                  uint64_t now) noexcept {
  rejected_received_[static_cast<int>(v)].Add(owner);
  // Only a read of exactly an InputMessage is a channel read whose layout may be unknown to us;
  // other traffic of the library is just counted.
  if (v != Verdict::kOtherType && IsInputMessageCapacity(capacity) && channels_.NoteInvalid(fd)) {
    ReceivedFdMode(owner, tid, fd, now);
  }
}

void InputTracker::ReceivedFdMode(bool owner, uint32_t tid, int fd, uint64_t now) noexcept {
  // Read -> next send: a second read before that send keeps the first one's time.
  if (pending_.HasFdMode(fd)) return;
  Track(owner, tid, fd, nullptr, now);
}

void InputTracker::Track(bool owner, uint32_t tid, int fd, const ReceivedEvent* ev, uint64_t now) noexcept {
  const int index = pending_.Claim(owner, fd, ev ? ev->seq : 0);
  if (__builtin_expect(index < 0, 0)) {
    table_full_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  PendingEvent& e = pending_.at(index);
  e.fd = fd;
  e.tid = tid;
  e.fd_mode = ev == nullptr;  // fd mode: no fields are known, only the fd and the time
  e.seq = ev ? ev->seq : 0;
  e.action = ev ? ev->action : 0;
  e.pointer_count = ev ? ev->pointer_count : 0;
  e.type = ev ? ev->type : EventType::kMotion;
  e.action_index = ev ? ev->action_index : int8_t{-1};
  e.event_time_ns = ev ? ev->event_time_ns : 0;
  e.read_ns = now;
  pending_.Publish(index);
  if (owner) {
    events_read_owner_.store(events_read_owner_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    events_read_shared_.fetch_add(1, std::memory_order_relaxed);
  }
  LowerDeadline(now + lag_ns_.load(std::memory_order_relaxed));
}

template <int kLayout>
inline ssize_t InputTracker::SentAtBody(InputTracker* self, int fd, const void* buf, ssize_t n,
                                        uint64_t now) noexcept {
  if (kLayout < 0 || __builtin_expect(!self->IsOwnerThread(), 0)) {
    JP_INPUT_RARE_EXIT return self->SentGated(fd, buf, n, now);
  }
  const int in = self->gate_.EnterOwnerOutermost();
  if (__builtin_expect(in < 0, 0)) { JP_INPUT_RARE_EXIT return self->SentGated(fd, buf, n, now); }
  if (__builtin_expect(in == 0, 0)) { JP_INPUT_RARE_EXIT return self->LeaveAsOwner(n); }
  // A FINISHED is exactly finished_size bytes: checked first, the decoder's own size checks fold away.
  // (No fd-mode look here: a channel in fd mode never validated a packet, so its only pending events are
  // fd-mode ones, seq 0, which the take below never matches; the general path then times it.)
  if (__builtin_expect(self->layout_index_ != kLayout, 0) ||
      __builtin_expect(static_cast<size_t>(n) != kLayoutTable[kLayout < 0 ? 0 : kLayout]->finished_size, 0)) {
    JP_INPUT_RARE_EXIT return self->SentOwnerGeneral(fd, buf, n, now);
  }
  if constexpr (kLayout >= 0) {
    FinishedSignal f;
    if (__builtin_expect(DecodeSentAs<kLayout>(buf, static_cast<size_t>(n), &f) != Verdict::kOk, 0)) {
      JP_INPUT_RARE_EXIT return self->SentOwnerGeneral(fd, buf, n, now);
    }
    // Take's usual case (the event is in the first probe: its (fd, seq) slot, where the read put it
    // unless more than PendingEvents::kLanes of its channel were in flight) and a ring with room (by the
    // producer's cached tail, refreshed here when it says full); otherwise nothing is written yet and the
    // general path does it all (Take's search).
    // (No fd_mode test: an fd-mode slot has seq 0, which no decoded FINISHED has.)
    PendingEvent& e = SlotRegister(self->pending_.at(PendingEvents::OwnerFirstProbe(fd, f.seq)));
    // The next FINISHED of a batch (a frame finishes the events it drew one after the other, seqs
    // consecutive) takes the next lane: asked for now, its line arrives while this one's send is in the
    // kernel. The slot's word is the fast path's largest stall (perf annotate in situ): written at the
    // read, one or more wakes earlier, and cold by the frame. A hint: no fault, nothing stored.
    PendingEvents::PrefetchNextLane(e);
    const uint32_t seen = e.word.load(std::memory_order_acquire);
    const uint64_t head = FinishedRing::Head(self->ring_producer_);
    if (__builtin_expect(StateOf(seen) != kPending || e.fd != fd || e.seq != f.seq, 0) ||
        __builtin_expect(!self->finished_.HasRoomAt(self->ring_producer_, head), 0)) {
      JP_INPUT_RARE_EXIT return self->SentOwnerGeneral(fd, buf, n, now);
    }
    static_assert(kFinishing == kPending + 1, "the take adds one to a pending word");
    e.word.store(seen + 1, std::memory_order_relaxed);  // the owner's plain take: kPending -> kFinishing
    self->finished_.PushFrom(self->ring_producer_, head, e, now, f.consume_time_ns);  // e is ours since the take: final fields
    // One fence for both Dekker pairs (Finish says why), then Finish's usual case inline: not lagged (no
    // mark of this occupant, a short duration), a deadline armed within the drain period; the rest in
    // FinishRest.
    self->gate_.fence().Light();
    // (now > read + lag is Finish's dur > lag: dur is now - read, or 0 when now is not past read.)
    if (__builtin_expect(PendingEvents::HasMarks(e, seen), 0) ||
        __builtin_expect(now > e.read_ns + self->lag_ns_.load(std::memory_order_relaxed), 0) ||
        __builtin_expect(self->armed_due_ns_.load(std::memory_order_relaxed) > now + kDrainPeriodNs, 0)) {
      JP_INPUT_RARE_EXIT return self->FinishRest(&e, now, f.consume_time_ns, f.handled, n);
    }
    PendingEvents::FreeFrom(e, seen);
    return self->LeaveAsOwner(n);
  }
}

JP_INPUT_COLD ssize_t InputTracker::FinishRest(const PendingEvent* slot, uint64_t now, int64_t consume_time,
                                               bool handled, ssize_t n) noexcept {
  // Finish after its push and fence (the owner's; what Finish does from there).
  const int index = pending_.IndexOf(slot);
  const PendingEvent& e = *slot;
  const uint64_t dur = now > e.read_ns ? now - e.read_ns : 0;
  const uint32_t word = pending_.Word(index);
  const uint32_t flags = pending_.Marks(index, word);
  LowerDeadlineFenced(now + kDrainPeriodNs);
  if ((flags & kLagFired) != 0 || dur > lag_ns_.load(std::memory_order_relaxed)) {
    FinishLagged(index, word, now, consume_time, handled);
  } else {
    pending_.Free(index);
  }
  return LeaveAsOwner(n);
}

JP_INPUT_COLD ssize_t InputTracker::SentOwnerGeneral(int fd, const void* buf, ssize_t n, uint64_t now) noexcept {
  owner_general_sends_.Add(true);
  Sent(true, fd, buf, n, now);
  return LeaveAsOwner(n);
}

JP_INPUT_COLD ssize_t InputTracker::SentGated(int fd, const void* buf, ssize_t n, uint64_t now) noexcept {
  const hook::InFlightGate::Pass pass = EnterGated(hook::CallerTid());
  if (pass.open) Sent(pass.exclusive(), fd, buf, n, now);
  LeaveGated(pass);
  return n;
}

// The entries (input_tracker.h, ReceivedAt / SentAt): each side's body for one layout index.
#define JP_INPUT_DEFINE_ENTRIES(kLayout)                                                                        \
  template <>                                                                                                  \
  JP_INPUT_HOT_ENTRY ssize_t InputTracker::ReceivedAt<kLayout>(InputTracker * self, int fd, const void* buf,  \
                                                               ssize_t n, uint64_t now, size_t capacity) noexcept { \
    return ReceivedAtBody<kLayout>(self, fd, buf, n, now, capacity);                                           \
  }                                                                                                            \
  template <>                                                                                                  \
  JP_INPUT_HOT_ENTRY ssize_t InputTracker::SentAt<kLayout>(InputTracker * self, int fd, const void* buf,      \
                                                           ssize_t n, uint64_t now) noexcept {                 \
    return SentAtBody<kLayout>(self, fd, buf, n, now);                                                         \
  }
JP_INPUT_DEFINE_ENTRIES(-1)
JP_INPUT_DEFINE_ENTRIES(0)
JP_INPUT_DEFINE_ENTRIES(1)
JP_INPUT_DEFINE_ENTRIES(2)
JP_INPUT_DEFINE_ENTRIES(3)
JP_INPUT_DEFINE_ENTRIES(4)
JP_INPUT_DEFINE_ENTRIES(5)
JP_INPUT_DEFINE_ENTRIES(6)
#undef JP_INPUT_DEFINE_ENTRIES
static_assert(kLayoutCount == 7, "one JP_INPUT_DEFINE_ENTRIES (and DECLARE, input_tracker.h) per layout index");

InputTracker::ReceivedEntry InputTracker::ReceivedEntryFor(int layout_index) noexcept {
  switch (layout_index) {
    case 0: return &ReceivedAt<0>;
    case 1: return &ReceivedAt<1>;
    case 2: return &ReceivedAt<2>;
    case 3: return &ReceivedAt<3>;
    case 4: return &ReceivedAt<4>;
    case 5: return &ReceivedAt<5>;
    case 6: return &ReceivedAt<6>;
    default: return &ReceivedAt<-1>;
  }
}

InputTracker::SentEntry InputTracker::SentEntryFor(int layout_index) noexcept {
  switch (layout_index) {
    case 0: return &SentAt<0>;
    case 1: return &SentAt<1>;
    case 2: return &SentAt<2>;
    case 3: return &SentAt<3>;
    case 4: return &SentAt<4>;
    case 5: return &SentAt<5>;
    case 6: return &SentAt<6>;
    default: return &SentAt<-1>;
  }
}
static_assert(kLayoutCount == 7, "ReceivedEntryFor / SentEntryFor have one entry per layout");

JP_INPUT_COLD void InputTracker::Sent(bool owner, int fd, const void* buf, ssize_t n, uint64_t now) noexcept {
  if (__builtin_expect(layout_ == nullptr || (channels_.AnyFdMode() && channels_.IsFdMode(fd)), 0)) {
    SentFdMode(owner, fd, now);
    return;
  }
  FinishedSignal f;
  const Verdict v = DecodeSent(*layout_, buf, static_cast<size_t>(n), &f);
  if (__builtin_expect(v != Verdict::kOk, 0)) {
    rejected_sent_[static_cast<int>(v)].Add(owner);
    return;
  }
  const int index = pending_.Take(owner, fd, f.seq);
  if (__builtin_expect(index < 0, 0)) {
    unmatched_finished_.Add(owner);
    return;
  }
  Finish(owner, index, now, f.consume_time_ns, f.handled);
}

JP_INPUT_COLD void InputTracker::SentFdMode(bool owner, int fd, uint64_t now) noexcept {
  const int index = pending_.TakeFdMode(owner, fd);
  if (index < 0) return;
  fd_timed_.Add(owner);
  Finish(owner, index, now, 0, false);
}

void InputTracker::Finish(bool owner, int index, uint64_t now, int64_t consume_time,
                                       bool handled) noexcept {
  const PendingEvent& e = pending_.at(index);  // ours since the take: its fields are final
  const uint64_t dur = now > e.read_ns ? now - e.read_ns : 0;
  // The record is built and appended by the watchdog (DrainFinished): here only what it is made of goes
  // into the ring, in one line. Only the owner's outermost entry may push (single producer).
  const bool pushed = owner && finished_.HasRoom(ring_producer_);
  if (__builtin_expect(pushed, 1)) {
    finished_.PushChecked(ring_producer_, FinishedEvent{e.read_ns, dur, e.event_time_ns, consume_time, IdentWordsOf(e)});
  }
  // One fence for two pairs, both "our store, then their flag": the take stored kFinishing, the
  // watchdog stores its marks and then checks the state (Heavy): one of the two sides sees the other,
  // and what we read of the marks is final for this occupant; the push stored the ring's head, a
  // deadline's callback resets armed_due_ns_ and fences before it drains: either it sees this item, or
  // we see no deadline armed below and arm one.
  gate_.fence().Light();
  const uint32_t word = pending_.Word(index);
  const uint32_t flags = pending_.Marks(index, word);
  if (__builtin_expect(pushed, 1)) {
    // The drain deadline: whatever monitor deadline is armed drains the ring when it fires; if none is,
    // or it is due later than a drain period from now, this arms one (a push right after a drain, with
    // lag_ms above the drain period).
    LowerDeadlineFenced(now + kDrainPeriodNs);
  } else {
    AppendNow(index, dur, consume_time, owner);
    events_finished_.Add(owner);  // the ring's pushes count themselves (counters())
  }

  // A lag the watchdog saw is in flags; one it marks from now on it will find already taken.
  const bool lagged = (flags & kLagFired) != 0 || dur > lag_ns_.load(std::memory_order_relaxed);
  if (__builtin_expect(!lagged, 1)) {
    pending_.Free(index);
    return;
  }
  FinishLagged(index, word, now, consume_time, handled);
}

JP_INPUT_COLD void InputTracker::AppendNow(int index, uint64_t dur, int64_t consume_time, bool owner) noexcept {
  if (owner) ring_full_.Add(true);
  const PendingEvent& e = pending_.at(index);  // still ours: freed after this
  timeline_->Append(RecordOf(FinishedEvent{e.read_ns, dur, e.event_time_ns, consume_time, IdentWordsOf(e)}));
}

JP_INPUT_COLD void InputTracker::FinishLagged(int index, uint32_t word, uint64_t now, int64_t consume_time,
                                              bool handled) noexcept {
  // A lag: the report is built on the watchdog thread, from the slot.
  PendingEvent& e = pending_.at(index);
  e.consume_time_ns = consume_time;
  e.handled = handled;
  e.finish_ns = now;
  const uint32_t gen = GenerationOf(word);
  pending_.MarkFinished(index);
  const ErrnoKeeper keep_errno;
  if (!context_->watchdog->Arm(ReportId(index, gen), now, &OnReportDue, this, 0)) {
    arm_failures_.fetch_add(1, std::memory_order_relaxed);  // swept by the next callback or Disable
  }
}

InputTracker::Counters InputTracker::counters() const {
  Counters c;
  c.events_read = events_read_owner_.load(std::memory_order_relaxed) + events_read_shared_.load(std::memory_order_relaxed);
  c.events_finished = events_finished_.Load() + FinishedRing::pushed(ring_producer_);
  c.fd_timed = fd_timed_.Load();
  for (int i = 0; i < kVerdictCount; ++i) {
    c.rejected_received[i] = rejected_received_[i].Load();
    c.rejected_sent[i] = rejected_sent_[i].Load();
  }
  c.unmatched_finished = unmatched_finished_.Load();
  c.owner_general_reads = owner_general_reads_.Load();
  c.owner_general_sends = owner_general_sends_.Load();
  c.table_full = table_full_.load();
  c.arm_failures = arm_failures_.load();
  c.lag_reports = lag_reports_.load();
  c.anr_reports = anr_reports_.load();
  c.abandoned = abandoned_.load();
  c.dropped_at_disable = dropped_at_disable_.load();
  c.deadline_scans = deadline_scans_.load();
  c.records_ring_full = ring_full_.Load();
  // The ring is never reset and only a drain moves its tail: the tail is the number of records drained.
  const uint64_t drained = finished_.drained();
  c.records_drained = drained;
  const uint64_t pushed = FinishedRing::pushed(ring_producer_);
  c.records_in_ring = pushed > drained ? pushed - drained : 0;
  c.pending = pending_.Occupied();
  c.fd_mode_channels = channels_.FdModeCount();
  return c;
}

void InputTracker::WriteCounters(hook::JsonOut& w) const {
  const Counters c = counters();
  w.StartObject();
  w.Field("events_read", c.events_read);
  w.Field("events_finished", c.events_finished);
  w.Field("fd_timed", c.fd_timed);
  w.Field("unmatched_finished", c.unmatched_finished);
  w.Field("owner_general_reads", c.owner_general_reads);
  w.Field("owner_general_sends", c.owner_general_sends);
  w.Field("table_full", c.table_full);
  w.Field("arm_failures", c.arm_failures);
  w.Field("lag_reports", c.lag_reports);
  w.Field("anr_reports", c.anr_reports);
  w.Field("abandoned", c.abandoned);
  w.Field("dropped_at_disable", c.dropped_at_disable);
  w.Field("deadline_scans", c.deadline_scans);
  w.Field("records_drained", c.records_drained);
  w.Field("records_ring_full", c.records_ring_full);
  w.Field("records_in_ring", c.records_in_ring);
  w.Field("pending", static_cast<uint64_t>(c.pending));
  w.Field("fd_mode_channels", static_cast<uint64_t>(c.fd_mode_channels));
  for (int i = 1; i < kVerdictCount; ++i) {
    const std::string name = VerdictName(static_cast<Verdict>(i));
    w.Field(("received_" + name).c_str(), c.rejected_received[i]);
    w.Field(("sent_" + name).c_str(), c.rejected_sent[i]);
  }
  w.EndObject();
}

}  // namespace jp::input
