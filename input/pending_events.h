// Events the app has read and not finished yet, keyed by (fd, seq): a fixed table written from the hooked
// recv/send paths and read by the watchdog thread, with no lock and no allocation.
//
// Each slot has a state word (generation << 8 | state) and a marks word (generation << 8 | flags). Slot life: kFree -> kClaimed (the reader
// fills it) -> kPending -> kFinishing (the FINISHED send took it) -> freed right away when it was quick, or
// kFinished until the watchdog thread has reported it. The fields below the word are written only by the
// slot's holder before it publishes the next state (release) and stay constant until the slot is freed;
// the generation moves on at every free, so a CAS or an id taken for an earlier occupant fails or is
// recognised as stale.
//
// Who writes the state word, and why most writes need no read-modify-write:
// - claim: the owner thread (InFlightGate) claims in the first kOwnerSlots with plain stores, since no one
//   else ever claims there; other threads (and the owner when its part is full) claim in the rest by CAS.
//   Claim and Take start probing at the same slot, picked by the fd and the seq's low bits (Hash): a
//   channel's events in flight at once (a batch of MOVEs read before the first is finished) each find
//   their own slot at the first probe, in whatever order they are finished;
//   The input tracker's owner path skips kClaimed in its first probe: it fills a slot that still reads
//   kFree (every reader skips a free slot; one that copied the previous occupant sees the generation
//   moved) and publishes kPending from there; a packet that fails on the way leaves stale fields in a
//   free slot, which nothing reads;
// - take: the owner takes a slot of its own part with a plain store; everything else by CAS from the
//   exact word it matched. A plain take could only collide with a second thread finishing the same
//   (fd, seq) at the same moment, i.e. two threads driving one InputConsumer at once, which is not
//   thread-safe in Android either;
// - publish, mark finished, free: plain release stores by the holder (nobody else writes a slot that is
//   claimed, finishing or finished).
// The watchdog never writes the state word: it marks an overdue event in the marks word (lag fired, ANR
// reported) and then, after an AsymmetricFence::Heavy(), checks that the slot is still pending; the
// finisher stores kFinishing, runs Light() and reads the marks. Dekker: either the finisher sees the mark
// (and reports the lag with the watchdog's stack) or the watchdog sees the slot taken (and withdraws).
// The watchdog reads the fields of slots it does not hold seqlock-style: copied, then the state word
// re-checked, and a copy whose word changed meanwhile is thrown away.
#ifndef JANKPROBE_INPUT_PENDING_EVENTS_H_
#define JANKPROBE_INPUT_PENDING_EVENTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "input/input_message.h"

namespace jp::input {

enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kPending = 2, kFinishing = 3, kFinished = 4 };
// Marks the watchdog sets on a pending slot, read by whoever takes it.
enum SlotFlags : uint32_t { kLagFired = 1u << 4, kAnrReported = 2u << 4, kStackCaptured = 4u << 4 };
constexpr uint32_t kStateMask = 0xFu;
constexpr uint32_t kFlagMask = 0xF0u;
constexpr int kGenerationShift = 8;

inline SlotState StateOf(uint32_t word) { return static_cast<SlotState>(word & kStateMask); }
inline uint32_t GenerationOf(uint32_t word) { return word >> kGenerationShift; }

// Two lines: what every event reads and writes is in the first (the finish side touches only it unless
// the event lagged); the second holds what only reports read.
// No default member initialisers: a free slot is all zero (kFree, generation 0, no marks; nothing reads the
// fields of a free slot), so a table on fresh anonymous pages is in its initial state without a store, and
// its pages become resident only when an event first uses a slot there (PendingEvents(OnZeroedMemory)).
// Value-initialise one that is not (`PendingEvent e{}`, PendingEvents()).
struct alignas(64) PendingEvent {
  std::atomic<uint32_t> word;
  std::atomic<uint32_t> marks;  // the watchdog's (and Disable's) only
  // Reader-side fields (constant while the slot is taken).
  int32_t fd;
  uint32_t seq;
  uint32_t tid;
  EventType type;
  bool fd_mode;
  int8_t action_index;
  int64_t event_time_ns;
  uint64_t read_ns;
  int32_t action;
  uint32_t pointer_count;
  // Finisher-side fields (written before kFinished is published; only for an event that lagged).
  alignas(64) int64_t consume_time_ns;
  bool handled;
  uint64_t finish_ns;
};
static_assert(sizeof(PendingEvent) == 128, "two lines per slot");
// C++17's std::atomic default constructor is trivial (C++20's value-initialises: correct, it only writes
// the zeros the pages already hold).
static_assert(__cplusplus >= 202002L || std::is_trivially_default_constructible_v<PendingEvent>,
              "constructing a table on zeroed pages must not write to them");

// The fields that name an event (fd .. action_index, 16 bytes in PendingEvent) as the finish side copies
// them into the finished ring: two word loads and two word stores, no per-field packing on the app's
// thread. EventIdentView reads them back (fd_mode as a byte: a lent copy torn by a concurrent push is
// thrown away later, but must not be a bool with another value than 0 or 1 meanwhile).
struct EventIdentWords {
  uint64_t w[2];
};
struct EventIdentView {
  int32_t fd;
  uint32_t seq;
  uint32_t tid;
  EventType type;
  uint8_t fd_mode;
  int8_t action_index;
  uint8_t unused;
};
static_assert(sizeof(EventIdentView) == sizeof(EventIdentWords), "16 bytes");
static_assert(offsetof(PendingEvent, seq) - offsetof(PendingEvent, fd) == offsetof(EventIdentView, seq) &&
                  offsetof(PendingEvent, tid) - offsetof(PendingEvent, fd) == offsetof(EventIdentView, tid) &&
                  offsetof(PendingEvent, type) - offsetof(PendingEvent, fd) == offsetof(EventIdentView, type) &&
                  offsetof(PendingEvent, fd_mode) - offsetof(PendingEvent, fd) == offsetof(EventIdentView, fd_mode) &&
                  offsetof(PendingEvent, action_index) - offsetof(PendingEvent, fd) == offsetof(EventIdentView, action_index) &&
                  offsetof(PendingEvent, event_time_ns) - offsetof(PendingEvent, fd) >= sizeof(EventIdentWords) &&
                  sizeof(bool) == 1,
              "PendingEvent's fd .. action_index are laid out as EventIdentView");
inline EventIdentWords IdentWordsOf(const PendingEvent& e) noexcept {
  EventIdentWords w;
  std::memcpy(&w, reinterpret_cast<const char*>(&e) + offsetof(PendingEvent, fd), sizeof w);
  return w;
}
inline EventIdentView IdentViewOf(const EventIdentWords& w) noexcept {
  EventIdentView v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}

class PendingEvents {
 public:
  static constexpr int kSlots = 128;
  static constexpr int kOwnerSlots = 64;  // claimed by the owner thread only

  // Every slot free.
  PendingEvents() noexcept : slots_() {}
  // For a table on memory that is already all zero (fresh anonymous pages, InputTracker::Get): every slot
  // is free without a store, so constructing it touches none of its 16 KiB; a page becomes resident when
  // an event first claims a slot in it (one channel: one page).
  struct OnZeroedMemory {};
  explicit PendingEvents(OnZeroedMemory) noexcept {}

  // Takes a free slot (state kClaimed) for a new event, or -1 when the table is full. owner: the caller
  // is the InFlightGate owner.
  // Inline (with Take and Free): the flattened hot paths absorb the usual first-probe case, the
  // rest of the search is out of line.
  inline int Claim(bool owner, int fd, uint32_t seq) noexcept;
  void Publish(int index) noexcept { SetState(index, kPending); }
  // Takes the pending event (fd, seq) for finishing (kPending -> kFinishing), or -1 if there is none.
  // The caller then runs the hot side of the fence and reads Marks().
  inline int Take(bool owner, int fd, uint32_t seq) noexcept;
  // fd-mode: the pending fd-timed read of fd, taken for finishing; or -1.
  int TakeFdMode(bool owner, int fd) noexcept;
  // True if fd already has an fd-timed read pending.
  bool HasFdMode(int fd) const noexcept;
  void MarkFinished(int index) noexcept { SetState(index, kFinished); }
  // Frees a slot its holder holds (the generation moves on).
  void Free(int index) noexcept {
    std::atomic<uint32_t>& w = slots_[index].word;
    const uint32_t next_generation = GenerationOf(w.load(std::memory_order_relaxed)) + 1;
    w.store(next_generation << kGenerationShift | kFree, std::memory_order_release);
  }
  // Free for a holder that knows the slot's word (`word`: any state of the current occupant).
  static void FreeFrom(PendingEvent& slot, uint32_t word) noexcept {
    slot.word.store((GenerationOf(word) + 1) << kGenerationShift | kFree, std::memory_order_release);
  }
  // The marks of the slot's current occupant (`word` is its state word).
  uint32_t Marks(int index, uint32_t word) const noexcept { return MarksOf(slots_[index], word); }
  static uint32_t MarksOf(const PendingEvent& slot, uint32_t word) noexcept {
    const uint32_t m = slot.marks.load(std::memory_order_relaxed);
    return GenerationOf(m) == GenerationOf(word) ? (m & kFlagMask) : 0;
  }
  // MarksOf(slot, word) != 0, with the usual case (no flags at all) first: one load and one test.
  static bool HasMarks(const PendingEvent& slot, uint32_t word) noexcept {
    const uint32_t m = slot.marks.load(std::memory_order_relaxed);
    return (m & kFlagMask) != 0 && GenerationOf(m ^ word) == 0;
  }
  int IndexOf(const PendingEvent* slot) const noexcept { return static_cast<int>(slot - slots_); }
  // Watchdog: sets the marks of the occupant in `word`.
  void SetMarks(int index, uint32_t word, uint32_t flags) noexcept {
    slots_[index].marks.store((word & ~(kStateMask | kFlagMask)) | flags, std::memory_order_relaxed);
  }

  // The owner's first probe for the event (fd, seq) (Claim's and Take's usual slot).
  static int OwnerFirstProbe(int fd, uint32_t seq) noexcept { return static_cast<int>(Hash(fd, seq)); }
  // Asks for the first line (its word and everything the finish side reads) of the slot after `slot`, an
  // owner-part slot: the first probe of its channel's next seq (Hash), except when `slot` is the channel's
  // last lane (1 in kLanes seqs: the hint then goes to another channel's first lane, wasted). The slot
  // after, not Hash(fd, seq + 1): one instruction with no register of its own (the hash again cost ten
  // instructions and a saved register in ReceivedAt). In bounds: the owner part is the table's first half.
  // Always inline: GCC finds a function whose only effect is a prefetch "const" and drops calls to it
  // that are not inlined first (the entries' bodies, ReceivedAtBody / SentAtBody, lost theirs).
  __attribute__((always_inline)) static void PrefetchNextLane(const PendingEvent& slot) noexcept {
    static_assert(kOwnerSlots < kSlots, "an owner-part slot has a slot after it");
    __builtin_prefetch(&slot + 1);
  }
  // A channel's lanes: the slots its events start probing at (Hash).
  static constexpr int kLaneBits = 3;
  static constexpr uint32_t kLanes = 1u << kLaneBits;

  PendingEvent& at(int index) noexcept { return slots_[index]; }
  const PendingEvent& at(int index) const noexcept { return slots_[index]; }
  uint32_t Word(int index) const noexcept { return slots_[index].word.load(std::memory_order_acquire); }
  int Occupied() const noexcept;

 private:
  // The probe start: the fd picks a channel's kLanes slots, the seq's low bits one of them. One channel's
  // events then reuse the same few slots (one line per event in flight) instead of walking the owner
  // part's 64 lines one event after the other, each cold again after the syscalls in between (~4 ns per
  // event in the round trip). The seq's bits, not the fd alone (as until session 7): the dispatcher
  // numbers a channel's events consecutively (or every other one, when a second window gets the same
  // stream), so up to kLanes events in flight at once (the MOVEs read for one frame: 2-3 in the demo, up
  // to 8 after a main-thread stall; 2-4 on a phone, 240 Hz touch at 60 Hz frames) sit each in the slot
  // their FINISHED looks at first, in any order. With the fd alone, the second of a batch was claimed past
  // the first probe and its FINISHED searched: both took the general path, 47 % of the demo's events; with
  // 4 lanes 9 %, with 8 ~0.2 % (uprobe counts, BENCHMARKS.md "Session 7 (input7)"). Also tried: a
  // region of 8 slots per channel filled from its start (claims the first free one, both entries probe
  // the region inline; any seqs): +9 instructions per FINISHED and, in situ, more of the demo's main
  // thread than the lanes (SentAt<6> higher in 4 of 4 interleaved runs), although its lines are the ones
  // the last batch just used.
  // The fd's low bits: file descriptors are small numbers, so these spread a process's channels over the
  // owner part without collisions up to 64 / kLanes = 8 of them (a multiplicative hash could not do
  // better, and cost two instructions more per side); a collision only means a longer probe. One channel's
  // lanes are 1 KiB, in one page.
  static uint32_t Hash(int fd, uint32_t seq) noexcept {
    return ((static_cast<uint32_t>(fd) << kLaneBits) | (seq & (kLanes - 1))) & (kOwnerSlots - 1);
  }
  void SetState(int index, SlotState st) noexcept {
    std::atomic<uint32_t>& w = slots_[index].word;
    w.store((w.load(std::memory_order_relaxed) & ~kStateMask) | st, std::memory_order_release);
  }
  int ClaimShared() noexcept;
  // Claim past the first probe (first: the probe Claim looked at, Hash(fd, seq)). The probe, not fd and
  // seq: the name and signature the ordered text (lib/startup_order.ld) knows.
  int ClaimSearch(bool owner, int first) noexcept;
  int TakeSearch(bool owner, int fd, uint32_t seq) noexcept;  // Take past the first probe
  int TakeIf(bool plain, int index, uint32_t seen) noexcept {
    std::atomic<uint32_t>& w = slots_[index].word;
    const uint32_t taken = (seen & ~kStateMask) | kFinishing;
    if (plain) {
      w.store(taken, std::memory_order_relaxed);
      return index;
    }
    // The fields were checked under `seen`: take the slot only while it holds that same occupant.
    uint32_t cur = seen;
    return w.compare_exchange_strong(cur, taken, std::memory_order_acq_rel) ? index : -1;
  }

  friend class InputTracker;  // its slots' offset, for a prefetch by a constant base (checked in Get())
  PendingEvent slots_[kSlots];
};

inline int PendingEvents::Claim(bool owner, int fd, uint32_t seq) noexcept {
  if (owner) {
    // Probing from the event's hash keeps Take's search short: the event is usually in the first slot.
    const int index = static_cast<int>(Hash(fd, seq));
    std::atomic<uint32_t>& w = slots_[index].word;
    const uint32_t cur = w.load(std::memory_order_acquire);  // pairs with Free's release
    if (__builtin_expect(StateOf(cur) == kFree, 1)) {
      w.store((cur & ~kStateMask) | kClaimed, std::memory_order_relaxed);
      return index;
    }
  }
  return ClaimSearch(owner, static_cast<int>(Hash(fd, seq)));
}

inline int PendingEvents::Take(bool owner, int fd, uint32_t seq) noexcept {
  const int index = static_cast<int>(Hash(fd, seq));
  const PendingEvent& s = slots_[index];
  const uint32_t seen = s.word.load(std::memory_order_acquire);
  if (__builtin_expect(StateOf(seen) == kPending && s.fd == fd && s.seq == seq && !s.fd_mode, 1) &&
      TakeIf(owner, index, seen) >= 0) {
    return index;
  }
  return TakeSearch(owner, fd, seq);
}

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_PENDING_EVENTS_H_
