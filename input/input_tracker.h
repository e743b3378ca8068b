// The input monitor's state behind the proxies: decodes what the app reads and sends on its channels,
// matches FINISHED to its event by (fd, seq), writes the timeline record, and keeps one watchdog deadline
// armed while events are pending, so that an event still unfinished at lag_ms gets the main-thread stack
// captured while the app is stuck.
//
// One process-wide instance that is never destroyed: a proxy may still sit in a hook chain after Stop
// (another tool hooked over us), so everything it reads must stay valid. Enable/Disable are control
// paths (the plugin's mutex serialises them); ProxyReceived/ProxySent (OnReceived/OnSent for callers
// that hold the tracker) and the entries they call are the hot paths; the deadline callbacks and all
// report building run on the watchdog thread.
//
// Hot-path cost, and why it is what it is (BENCHMARKS.md, "Input monitor"): per event the owner thread
// (InFlightGate) pays two clock reads (EventClock: the CPU counter, not clock_gettime), taken by the
// proxies; everything else is plain loads and stores, ordered against the watchdog by an AsymmetricFence.
// The layout is bound once per Enable: the proxies call the entry compiled for it (its decoders with the
// offsets as immediates), the owner is recognised by its thread pointer and enters the gate as its owner,
// and the owner's usual event runs without a call, every rare branch leaving by a tail call into a cold
// function (what is live in registers is all the hot path keeps). The owner does not append the event's
// record to the shared timeline: it pushes what the record is made of into a FinishedRing, and the
// watchdog appends it (DrainFinished) within kDrainPeriodNs; until then reports and exports get the
// record lent (LendFinished, a hook::InFlightProvider). Other threads append their records themselves. In
// situ (between syscalls) what counts is also how many code and data lines an event touches: see
// input/hot_path.h. The tracker sits at a link-time address (Instance()), and the proxies ask for the two
// lines of it its entries will miss on first before they make the original call (PrefetchPerEventLines):
// the kernel's time in the call hides their fetch. The deadline is armed lazily (only when no earlier one
// is armed) and the watchdog scans the table when it fires, instead of an arm + disarm per event.
#ifndef JANKPROBE_INPUT_INPUT_TRACKER_H_
#define JANKPROBE_INPUT_INPUT_TRACKER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "hook/monitor.h"
#include "hook/asymmetric_fence.h"
#include "hook/caller_tid.h"
#include "input/channel_table.h"
#include "hook/event_clock.h"
#include "input/finished_ring.h"
#include "hook/in_flight_gate.h"
#include "input/input_message.h"
#include "input/pending_events.h"
#include "hook/split_counter.h"
#include "input/hot_path.h"

namespace jp::hook {
class JsonOut;
}

namespace jp::input {

namespace internal {
// The tracker's storage (input_tracker.cc; Get() constructs the tracker in it): in .bss, so zero pages
// until written, as the anonymous mapping it had until session 8, and at an address the code reaches
// PC-relative. Hidden: a default-visibility declaration would be reached through the GOT (one load).
extern __attribute__((visibility("hidden"))) unsigned char g_tracker_storage[];
}  // namespace internal

class InputTracker {
 public:
  static InputTracker& Get();
  // The instance Get() constructed, at its address in the library's zero-initialised data (a constant:
  // PC-relative, no load). Only after a Get() (the proxies: see ProxyReceived).
  static InputTracker& Instance() noexcept;

  struct Settings {
    const Layout* layout = nullptr;  // nullptr: unknown release, every fd is timed read -> next send
    uint64_t lag_ns = 100000000;
    uint64_t anr_ns = 5000000000;
    const hook::PluginContext* context = nullptr;
  };

  // Control paths.
  void Enable(const Settings& settings);
  void Retune(uint64_t lag_ns, uint64_t anr_ns);
  // After it returns no hot path and no deadline callback of ours touches the context any more; pending
  // events are dropped (counted) and their deadlines disarmed.
  void Disable();
  bool enabled() const noexcept { return gate_.own_flag().load(std::memory_order_acquire); }
  // "membarrier" when the owner's hot path runs without fences, else why it uses full fences.
  std::string FenceMode() const;
  // The event clock's source, why it is clock_gettime if it is, and its checks (JSON object).
  std::string ClockJson() const { return hook::ProcessEventClock().StatusJson(); }

  // Hot paths: called by the proxies after the original call returned (errno is preserved: nothing on
  // them sets it but the watchdog calls on their rare branches, which save it). capacity: the length the
  // caller asked recv for. Both return n, so that a proxy ends in a tail call.
  // Inline, so that the proxies read the clock (the read's time: first, closest to the read's return;
  // the finish time likewise) while they hold their arguments anyway, and the tracker's entry for the
  // bound layout gets it as an argument: nothing of the tracker is live across the clock's slow half.
  // No look at the flag here: the entry's way into the gate checks it anyway, and the proxies are only
  // installed while the monitor is on (one left in another tool's chain after a stop reads a clock for
  // nothing). A send that is not a FINISHED (a TIMELINE on 12+: per drawn frame that had input, not per
  // event) pays a clock read it does not use (~18 instructions). A send that failed (EAGAIN: the socket
  // is full) finished nothing; the retry that succeeds does.
  ssize_t OnReceived(int fd, const void* buf, ssize_t n, size_t capacity) noexcept {
    if (n <= 0) return n;
    const uint64_t now = EventNowNs();
    return ReceivedAtNow(this, fd, buf, n, now, capacity);
  }
  ssize_t OnSent(int fd, const void* buf, ssize_t n) noexcept {
    if (n <= 0) return n;
    const uint64_t now = EventNowNs();
    return SentAtNow(this, fd, buf, n, now);
  }
  // The same for the proxies, on the instance at its link-time address (Instance()): no load before the
  // tracker's lines, so the loads of line A, the gate's owner line and the clock's line do not wait for
  // one (until session 8 the proxies loaded the tracker's address from their previous-target cache line
  // after the call: on the chain of every load after it). Valid in a proxy because InstallProxies calls
  // Get() (which constructs it) before it installs anything; it is never destroyed.
  static ssize_t ProxyReceived(int fd, const void* buf, ssize_t n, size_t capacity) noexcept {
    if (n <= 0) return n;
    const uint64_t now = Instance().EventNowNs();
    return ReceivedAtNow(&Instance(), fd, buf, n, now, capacity);
  }
  static ssize_t ProxySent(int fd, const void* buf, ssize_t n) noexcept {
    if (n <= 0) return n;
    const uint64_t now = Instance().EventNowNs();
    return SentAtNow(&Instance(), fd, buf, n, now);
  }

  // The event's time for the proxies (OnReceived / OnSent too): on the owner thread (the app's main thread)
  // its own copy of the event clock's anchor (owner_clock_, line B, asked for with the pair before the
  // call: PrefetchPerEventLines), elsewhere the process clock. Why: the process clock's line is written by
  // every re-anchor (the watchdog's and the other threads'), and since the looper's poll source reads its
  // own copy (jni::g_main_gap.poll_clock) nothing else of the main thread's brought that line in, so each
  // read after a wake was a miss of its own; the copy is refilled from it about once per
  // EventClock::kReanchorNs while events come. Same values as NowNs() from the same anchor: within
  // kBoundNs of clock_gettime (hook/event_clock.h, NowNsFrom). Not the poll source's copy, although it is
  // warm at the same wakes: StartPollSource resets it from the control thread while only the poll gate
  // keeps the main thread out of it, and the input proxies read outside that gate; and the poll source's
  // main thread and this gate's owner need not be one thread (a copy has one writer). The owner test is
  // the entries' own (one load of the owner line, asked for too). Inline: no function of its own outside
  // the ordered text (lib/startup_order.ld); the refill is a cold branch of the proxies.
  // The copy's usual read (EventClock::ReadCopy) is tested here and the rest, the refill (NowNsFrom: the
  // process clock's read, maybe its re-anchor, and the copy) and another thread's read (NowNs), are rare
  // exits: GCC moves them into the proxy's cold part (input/hot_path.h). Inline in the proxies' usual path,
  // the refill's code lay between its instructions, and the clock's address it keeps across Slow()'s call
  // took a saved register: one push and pop more, and the stack realigned (ProxySendtoChk's usual path ran
  // 199 bytes, 4 code lines, at db4fcc4).
  __attribute__((always_inline)) uint64_t EventNowNs() noexcept {
    if (__builtin_expect(IsOwnerThread(), 1)) {
      uint64_t now;
      if (__builtin_expect(hook::EventClock::ReadCopy(owner_clock_, &now), 1)) return now;
      JP_INPUT_RARE_EXIT return hook::ProcessEventClock().NowNsFrom(&owner_clock_);
    }
    JP_INPUT_RARE_EXIT return hook::ProcessEventClock().NowNs();
  }
  // Tests: the owner's copy as it is now (read it on the owner thread, or once the owner is quiet).
  hook::EventClock::Anchor OwnerClockForTest() const noexcept { return owner_clock_; }

  // For the proxies, before the original call: asks for the tracker's per-event pair (the gate's owner
  // line and line A), whose addresses are constants. After the app's work since its last event (a frame
  // between a read and its FINISHED) they are likely misses, on the chain of the entry that follows the
  // call; the call's time in the kernel hides their fetch. Hints only: no fault, no store, harmless if the
  // tracker is not constructed yet. (The event clock's line too made GCC keep its address in a saved
  // register across the call: one push and pop more per proxy. The pending slot a FINISHED will take was
  // tried as well, its seq read before the send from where the bound layout has it: SentAt<6>'s largest
  // stall left went, but the send proxy grew by a code line and ~13 instructions, and their sum in situ
  // was no lower: BENCHMARKS.md, session 8 input8. Since session 10 the send proxies ask for it
  // (PrefetchFinishedSlot) from the seq's one place in every release since 12, with no load of the
  // layout: nothing before the call waits for a line.)
  // Since clock8 (session 8): line B too, the owner's clock copy (EventNowNs), in place of the process clock's
  // line, which the proxies read after the call without asking for it.
  static void PrefetchPerEventLines() noexcept {
    const char* const t = reinterpret_cast<const char*>(internal::g_tracker_storage);
    __builtin_prefetch(t + kOwnerLineOffset);
    __builtin_prefetch(t + kOwnerLineOffset + 64);
    __builtin_prefetch(t + kOwnerClockOffset);
  }

  // For the send proxies, before the original call: asks for the pending slot the owner's fast path will
  // take if this send is a FINISHED (its first probe, PendingEvents::OwnerFirstProbe(fd, seq)), the seq read
  // from the message itself where every release since 12 has it (the header's second word, @4; before 12
  // that word is padding: a lane of the same channel is asked for in vain). The slot was written at the
  // read, a frame earlier, and its word was SentAt's largest stall after the call (the next lane's
  // prefetch covers only the second and later FINISHEDs of a frame). Only constants, the arguments and the
  // message (just written by the app: in L1) are read: nothing waits for a line before the call. A hint:
  // no fault (a message shorter than the word is not read), nothing stored.
  __attribute__((always_inline)) static void PrefetchFinishedSlot(int fd, const void* buf, size_t len) noexcept {
    if (len < 8) return;
    uint32_t seq;
    __builtin_memcpy(&seq, static_cast<const char*>(buf) + 4, sizeof seq);
    const char* const t = reinterpret_cast<const char*>(internal::g_tracker_storage);
    __builtin_prefetch(t + kPendingSlotsOffset +
                       static_cast<size_t>(PendingEvents::OwnerFirstProbe(fd, seq)) * sizeof(PendingEvent));
  }

  struct Counters {
    uint64_t events_read = 0;
    uint64_t events_finished = 0;
    uint64_t fd_timed = 0;               // fd-mode records
    uint64_t rejected_received[kVerdictCount] = {};
    uint64_t rejected_sent[kVerdictCount] = {};
    uint64_t unmatched_finished = 0;     // FINISHED for an event we never saw read
    // The owner's reads and sends its entry left to the general path (the fast path's slot was taken, a
    // FINISHED's event was not in its first probe, a send that is no FINISHED, a full ring, ...): how
    // often the main thread pays the slow way (a read or send of another thread is not counted here).
    uint64_t owner_general_reads = 0;
    uint64_t owner_general_sends = 0;
    uint64_t table_full = 0;
    uint64_t arm_failures = 0;
    uint64_t lag_reports = 0;
    uint64_t anr_reports = 0;
    uint64_t abandoned = 0;              // unfinished at anr_ms on a channel the app had closed: no ANR
    uint64_t dropped_at_disable = 0;
    uint64_t deadline_scans = 0;         // monitor deadline callbacks (the watchdog's wakes for us)
    uint64_t records_drained = 0;        // records the watchdog appended for the main thread (the ring)
    uint64_t records_ring_full = 0;      // records the main thread appended itself: the ring was full
    uint64_t records_in_ring = 0;        // finished, record not appended yet (lent to reports)
    int pending = 0;
    int fd_mode_channels = 0;
  };
  Counters counters() const;
  // The counters as one JSON object, the next value in `w` (the monitor's status "counters").
  void WriteCounters(hook::JsonOut& w) const;

  // The longest a finished event's record waits in the ring before the watchdog appends it to the
  // timeline: the first push after a drain makes sure a deadline fires within this (usually the lag
  // deadline its event armed, lag_ms after it was read, is already earlier). So a process killed
  // outright (kill -9, the low-memory killer) loses at most the records of its last 200 ms from the
  // timeline file; reports and exports before that see them lent. An ANR kill comes seconds into a
  // stuck event, long after the records before it were appended.
  static constexpr uint64_t kDrainPeriodNs = 200000000;
  // Appends the records of the finished events still in the ring (any thread but a hot path; the
  // watchdog's deadlines call it, Disable does, tests may). Returns how many it appended.
  uint64_t DrainFinished();

 private:
  // Only Get() constructs it, on zeroed pages (see there): the pending table is left as they are. Inline,
  // so that it is part of Get(), whose place in the start-up text is fixed (lib/startup_order.ld): an
  // out-of-line constructor landed in another 64 KiB text window, which start then faulted in.
  // Defined below the class: its entries are the -1 specializations, declared there.
  InputTracker() noexcept;

  // The hot paths are split so that what every event runs is dense code (input/hot_path.h) and makes no
  // call: the entries per layout (ReceivedAt / SentAt, kLayout the bound layout's index in kLayoutTable,
  // its decoders compiled in; -1 the generic entry for fd mode or a layout from outside the table) run the
  // owner's usual event inline, and leave by a tail call into a cold function for anything else: another
  // thread, the owner before it is known, a nested entry (ReceivedGated / SentGated: through the gate's
  // own Enter), a stale entry, a rejected or KEY packet, a busy first probe, a full ring by the cached tail
  // (ReceivedOwnerGeneral / SentOwnerGeneral: the general path, from scratch, before anything was
  // written), or work left after the stores (ReceivedRest: a deadline to arm, a channel to note;
  // FinishRest: a lag, a deadline). Each of those leaves the gate and returns n.
  // now: the event's time (event clock), read by the inline ProxyReceived / ProxySent (OnReceived /
  // OnSent).
  using ReceivedEntry = ssize_t (*)(InputTracker*, int, const void*, ssize_t, uint64_t, size_t) noexcept;
  using SentEntry = ssize_t (*)(InputTracker*, int, const void*, ssize_t, uint64_t) noexcept;
  static ReceivedEntry ReceivedEntryFor(int layout_index) noexcept;
  // The entry is loaded after the clock: C++17 evaluates a callee before the arguments, which kept it
  // live across the clock's rare call (one saved register more in every proxy).
  static ssize_t ReceivedAtNow(InputTracker* t, int fd, const void* buf, ssize_t n, uint64_t now,
                               size_t capacity) noexcept {
    const ReceivedEntry entry = t->received_at_.load(std::memory_order_relaxed);
    return entry(t, fd, buf, n, now, capacity);
  }
  static ssize_t SentAtNow(InputTracker* t, int fd, const void* buf, ssize_t n, uint64_t now) noexcept {
    const SentEntry entry = t->sent_at_.load(std::memory_order_relaxed);
    return entry(t, fd, buf, n, now);
  }
  static SentEntry SentEntryFor(int layout_index) noexcept;
  // The entries are explicit specializations (input_tracker.cc, one per layout index, -1 to
  // kLayoutCount - 1: declared below the class), each the always-inline body of its side (ReceivedAtBody
  // / SentAtBody) compiled for its layout. Not implicit instantiations: those are COMDAT, and GCC never
  // splits a COMDAT function into hot and cold parts, so the blocks of the rare exits (JP_INPUT_RARE_EXIT)
  // stayed between the hot instructions. Their names are the template's, which lib/startup_order.ld lists.
  template <int kLayout>
  static ssize_t ReceivedAt(InputTracker* self, int fd, const void* buf, ssize_t n, uint64_t now,
                            size_t capacity) noexcept;
  template <int kLayout>
  static ssize_t SentAt(InputTracker* self, int fd, const void* buf, ssize_t n, uint64_t now) noexcept;
  template <int kLayout>
  __attribute__((always_inline)) static inline ssize_t ReceivedAtBody(InputTracker* self, int fd, const void* buf,
                                                                      ssize_t n, uint64_t now,
                                                                      size_t capacity) noexcept;
  template <int kLayout>
  __attribute__((always_inline)) static inline ssize_t SentAtBody(InputTracker* self, int fd, const void* buf,
                                                                  ssize_t n, uint64_t now) noexcept;
  ssize_t ReceivedRest(int fd, uint64_t due, ssize_t n) noexcept;
  ssize_t ReceivedOwnerGeneral(int fd, const void* buf, ssize_t n, uint64_t now, size_t capacity) noexcept;
  ssize_t ReceivedGated(int fd, const void* buf, ssize_t n, uint64_t now, size_t capacity) noexcept;
  ssize_t FinishRest(const PendingEvent* slot, uint64_t now, int64_t consume_time_ns, bool handled, ssize_t n) noexcept;
  ssize_t SentOwnerGeneral(int fd, const void* buf, ssize_t n, uint64_t now) noexcept;
  ssize_t SentGated(int fd, const void* buf, ssize_t n, uint64_t now) noexcept;

  // The owner's way in, without the gate's owner lookup and without the caller's tid: the caller is the
  // gate's owner when its thread pointer (one register) is the one EnterGated learnt when the gate let the
  // owner in exclusively (the gate's owner never changes once set; the tid recorded is the one learnt with
  // it); the entries then go in by InFlightGate::EnterOwnerOutermost, which refuses (-1) when the owner is
  // already inside: a signal handler that interrupted the owner's pass, which then takes the gated path
  // (the gate's Enter counts it nested). A thread pointer belongs to one live thread: only an owner that is
  // not the main thread (the plugin did not know it) and exited could pass its pointer, and with it the
  // owner's place, to a new thread, whose records would then carry the old owner's tid.
  bool IsOwnerThread() noexcept {
    return reinterpret_cast<uintptr_t>(__builtin_thread_pointer()) ==
           gate_.owner_word(kOwnerTpWord).load(std::memory_order_relaxed);
  }
  // Leaves the pass EnterOwnerOutermost opened (0 or 1) and returns n (the entries' tail).
  ssize_t LeaveAsOwner(ssize_t n) noexcept {
    gate_.LeaveOwner();  // a release store: the owner's work stays before it
    return n;
  }
  // The gate's own Enter / Leave for everyone else (the owner until it is known, a nested pass); an
  // exclusive pass teaches the owner's tid and thread pointer (kOwnerTidWord, kOwnerTpWord).
  hook::InFlightGate::Pass EnterGated(uint32_t tid) noexcept;
  void LeaveGated(hook::InFlightGate::Pass pass) noexcept { gate_.Leave(pass); }
  // The general path (any thread, any packet; owner: the caller may use the owner's private parts).
  void Received(bool owner, uint32_t tid, int fd, const void* buf, ssize_t n, size_t capacity, uint64_t now) noexcept;
  void RejectReceived(bool owner, uint32_t tid, int fd, Verdict v, size_t capacity, uint64_t now) noexcept;
  void Sent(bool owner, int fd, const void* buf, ssize_t n, uint64_t now) noexcept;
  void SentFdMode(bool owner, int fd, uint64_t now) noexcept;
  void ReceivedFdMode(bool owner, uint32_t tid, int fd, uint64_t now) noexcept;
  // Claims a pending slot for a read event (ev == nullptr: an fd-mode read) and arms the lag deadline.
  // now: the read's time (event clock).
  void Track(bool owner, uint32_t tid, int fd, const ReceivedEvent* ev, uint64_t now_ns) noexcept;
  // consume_time_ns, handled: the FINISHED message's (0, false in fd mode). By value, not a pointer to the
  // decoded message: a pointer handed on to the cold half kept the message in memory (stored, reloaded).
  void Finish(bool owner, int index, uint64_t now_ns, int64_t consume_time_ns, bool handled) noexcept;
  // A finished event that lagged: keeps it for the watchdog's report (word: its state word when taken).
  void FinishLagged(int index, uint32_t word, uint64_t now_ns, int64_t consume_time_ns, bool handled) noexcept;
  // The record of a finished event, appended right away: by a thread other than the owner, or by the
  // owner when the ring is full.
  void AppendNow(int index, uint64_t dur_ns, int64_t consume_time_ns, bool owner) noexcept;
  // The timeline record of a finished event (the drain's, AppendNow's and the lent copies' one shape: the
  // report sink recognises a lent copy the timeline already holds by kind, tid, start and duration).
  hook::Event RecordOf(const FinishedEvent& done) const noexcept;
  // hook::InFlightProvider: the records of the ring's events (finished, not appended yet).
  static void LendFinished(uint64_t now_ns, bool running_too, std::vector<hook::Event>* out, void* arg);
  // Makes sure a monitor deadline at or before due_ns is armed (hot path: usually one load).
  void LowerDeadline(uint64_t due_ns) noexcept;
  void LowerDeadlineFenced(uint64_t due_ns) noexcept;  // the same after the caller's own Light()
  void ArmEarlier(uint64_t armed, uint64_t due_ns) noexcept;  // LowerDeadline's rare half

  // Watchdog thread (input_verdicts.cc).
  static void OnMonitorDeadline(const hook::DeadlineFired& fired, void* arg);
  static void OnReportDue(const hook::DeadlineFired& fired, void* arg);
  bool EnterCallback() noexcept;
  void LeaveCallback() noexcept;
  uint64_t ScanPending();  // lag and ANR verdicts for overdue events; returns the next due time
  void ReportFinished(int index);
  void SweepFinished();
  hook::Report BuildReport(const PendingEvent& e, const char* type, uint64_t dur_ns) const;

  static uint64_t DeadlineId(uint64_t due_ns) noexcept;
  static uint64_t ReportId(int index, uint32_t generation) noexcept;
  static bool DecodeReportId(uint64_t id, int* index, uint32_t* generation) noexcept;

  // What the owner's usual event reads and writes of the tracker itself (besides the pending slot, the
  // ring's slot and, on a new channel, the channel table) sits in two lines, one 128-byte aligned pair:
  // the gate's owner line (its depth, its own fence and flag, and in owner words the owner's thread
  // pointer and tid) and, right after it, line A (the entry pointers the proxies load, the deadline words,
  // the hint, the layout index, the owner's read count, the ring's producer words). After the two
  // syscalls of a round trip every distinct line is a likely L1 miss: they were spread over three (the
  // flag, fence, thread pointer and layout index in line 0, the send entry and the deadline words in line
  // 1, the gate's depth in its own line), before that over seven; until session 7 the ring's producer
  // words had a line of their own (one more miss per FINISHED). The pair: a miss on one of them brings
  // the other along where the core fetches the adjacent line (the gate's owner line is its last, so line
  // A goes right after the gate; the tracker is aligned to 128 bytes, and its address is a link-time
  // constant, Instance(), so the proxies load no pointer to reach either). Line A is 64 bytes (8 + 8 + 8
  // + 8 + 4 + 4 + 8 + 16; both checked in Get()).
  //
  // Built without an outside fence: its own fence (the tracker's, fence()), its own `enabled` flag and
  // the owner words sit in its owner line (its last), the first line of the pair with line A.
  // The owner's words (the gate never touches them):
  // - kOwnerTpWord: the owner's thread pointer once seen (0: not yet; never 0 for a thread, so an unknown
  //   owner matches no one). Written by EnterGated on the owner thread.
  // - kOwnerTidWord: the gate's owner's tid once seen (0: not yet), written with it; what the owner's
  //   records carry (the owner's read path reads it after the thread pointer, in the same line).
  // "Enabled" is the gate's own flag (Open/Close, seq_cst): the owner's hot entries read it in the owner
  // line (EnterOwnerOutermost()), everything else through gate_.own_flag() (the gate's Enter and
  // EnterShared, enabled()). Enable opens it after the settings; Disable closes it before the gate's Drain,
  // whose heavy fence pairs with every pass that read it.
  static constexpr size_t kOwnerLineOffset = 128;  // the gate's owner line; line A follows (Get() checks)
  static constexpr size_t kOwnerClockOffset = 256;  // line B: owner_clock_ (Get() checks)
  static constexpr size_t kPendingSlotsOffset = 448;  // pending_'s first slot (Get() checks)
  static constexpr int kOwnerTpWord = 0;
  static constexpr int kOwnerTidWord = 1;
  static_assert(hook::InFlightGate::kOwnerWords >= 2, "the thread pointer and the tid");
  uint32_t OwnerTid() noexcept {
    return static_cast<uint32_t>(gate_.owner_word(kOwnerTidWord).load(std::memory_order_relaxed));
  }
  alignas(128) hook::InFlightGate gate_;  // its fence (gate_.fence()) orders the tracker's own Dekker pairs too
  // Line A.
  std::atomic<ReceivedEntry> received_at_;  // &ReceivedAt<-1> until Enable binds a layout (constructor)
  std::atomic<SentEntry> sent_at_;          // &SentAt<-1> likewise
  std::atomic<uint64_t> lag_ns_{100000000};
  // Due time of the monitor deadline that is armed (UINT64_MAX: none). Lowered by CAS from the hot path,
  // reset by the callback that fires for it; see LowerDeadline and OnMonitorDeadline.
  std::atomic<uint64_t> armed_due_ns_{UINT64_MAX};
  // An fd whose channel-table slot says "validated, nothing to note" (ChannelTable::IsCleanValid): a
  // clean slot stays clean until Clear (NoteInvalid leaves a validated channel alone), so the owner's
  // read path checks this one word first. Written by the owner's path; reset with the table (-1).
  std::atomic<int32_t> clean_fd_{-1};
  // The bound layout's index in kLayoutTable (input/input_layouts.h), -1 for another one or none.
  // Written by Enable before the flag is published, read by the owner's entries after entering (a
  // stale entry finds it changed and takes the general path). A plain int, not a gate's owner word: the
  // entries compare it in memory (one instruction; an atomic word is loaded first).
  int layout_index_ = -1;
  // Events read: the owner's count here (a plain load + store, as hook::SplitCounter's owner half), the
  // other threads' (fetch_add) out of line A, in events_read_shared_; counters() adds them.
  std::atomic<uint64_t> events_read_owner_{0};
  // The finished ring's head and the tail its producer (the owner) saw last (FinishedRing::Producer):
  // every FINISHED of the owner reads and writes them.
  FinishedRing::Producer ring_producer_;
  // Line B (bytes 256-319, right after the pair; the proxies ask for it with the pair): the owner's copy of
  // the event clock's anchor (EventNowNs). Plain words, read and refilled by the owner thread only;
  // Enable empties it (limit 0) before the flag is published, so the first owner read after a start copies
  // the (maybe recalibrated) process anchor. A proxy still in flight from an earlier install is the only
  // owner read that can overlap that store; either order leaves a whole anchor (limit is written last by
  // the refill, and a copy is never extrapolated past its own span). The rest of the line: words written
  // only by Enable.
  alignas(64) hook::EventClock::Anchor owner_clock_;
  // Settings, written by Enable before the flag is published and read by the hot paths after.
  const Layout* layout_ = nullptr;
  hook::Timeline* timeline_ = nullptr;  // context_->timeline, one pointer hop less on the hot path
  uint16_t name_fd_timed_ = 0, key_fd_ = 0, key_seq_ = 0, key_dispatch_ = 0, key_consume_ = 0, key_mode_ = 0,
           value_fd_ = 0;
  uint16_t action_names_[kActionIndexCount] = {};
  double ms_per_ns_ = 0;  // 1e-6 once enabled with a timeline: RecordOf's ns -> ms factor, read from here
  hook::SplitCounter events_finished_;  // out of line B: other threads' finishes add to its shared half
  const hook::PluginContext* context_ = nullptr;
  std::atomic<uint64_t> anr_ns_{5000000000};
  std::string fence_note_;  // control path only
  hook::InFlightGate::Pass callback_pass_{};  // watchdog thread only

  PendingEvents pending_;
  ChannelTable channels_;
  // Stacks captured at lag_ms, per pending slot; touched only on the watchdog thread (and by Disable
  // once no callback can run). Allocated by the first lag that captures or reports one, not by Enable:
  // an app whose input never lags keeps none of their 10 KiB (128 slots, most of which never lag).
  class SlotStacks {
   public:
    // Always inline: it is part of the watchdog's lag path (ScanPending, ReportFinished), whose functions
    // are placed together in the text (lib/startup_order.ld); an out-of-line copy sat elsewhere.
    // Without memory every slot is one spare that says so (a report then carries that stack_error).
    __attribute__((always_inline)) hook::StackSample& operator[](size_t index) {
      if (!stacks_) stacks_.reset(new (std::nothrow) hook::StackSample[PendingEvents::kSlots]);
      if (stacks_) return stacks_[index];
      spare_ = hook::StackSample{};
      spare_.error = "no memory";  // short: no allocation
      return spare_;
    }
    bool allocated() const noexcept { return stacks_ != nullptr; }
    // Stop: frees them if a lag allocated them. Inline test first: with none allocated, stopping calls
    // nothing outside Disable (an out-of-line reset() would fault in its text window at every stop).
    __attribute__((always_inline)) void Release() noexcept {
      if (stacks_) stacks_.reset();
    }

   private:
    std::unique_ptr<hook::StackSample[]> stacks_;
    hook::StackSample spare_;
  };
  SlotStacks stacks_;

  hook::SplitCounter fd_timed_, unmatched_finished_, owner_general_reads_, owner_general_sends_;
  std::atomic<uint64_t> events_read_shared_{0};  // events read by threads other than the owner
  hook::SplitCounter rejected_received_[kVerdictCount];
  hook::SplitCounter rejected_sent_[kVerdictCount];
  std::atomic<uint64_t> table_full_{0}, arm_failures_{0}, lag_reports_{0}, anr_reports_{0},
      abandoned_{0}, dropped_at_disable_{0}, deadline_scans_{0};
  hook::SplitCounter ring_full_;
  hook::ReportSink* lent_to_ = nullptr;  // where LendFinished is registered (control paths only)

  FinishedRing finished_;  // its own lines: the consumer's line, then one line per slot (the producer's
                           // words are ring_producer_, in line A)
};

// The entries per layout index (see ReceivedAt / SentAt): explicit specializations, declared before any
// use (the default entries of line A name the -1 ones), defined in input_tracker.cc.
#define JP_INPUT_DECLARE_ENTRIES(kLayout)                                                             \
  template <>                                                                                        \
  ssize_t InputTracker::ReceivedAt<kLayout>(InputTracker*, int, const void*, ssize_t, uint64_t,      \
                                            size_t) noexcept;                                        \
  template <>                                                                                        \
  ssize_t InputTracker::SentAt<kLayout>(InputTracker*, int, const void*, ssize_t, uint64_t) noexcept;
JP_INPUT_DECLARE_ENTRIES(-1)
JP_INPUT_DECLARE_ENTRIES(0)
JP_INPUT_DECLARE_ENTRIES(1)
JP_INPUT_DECLARE_ENTRIES(2)
JP_INPUT_DECLARE_ENTRIES(3)
JP_INPUT_DECLARE_ENTRIES(4)
JP_INPUT_DECLARE_ENTRIES(5)
JP_INPUT_DECLARE_ENTRIES(6)
#undef JP_INPUT_DECLARE_ENTRIES

inline InputTracker::InputTracker() noexcept
    : received_at_{&ReceivedAt<-1>}, sent_at_{&SentAt<-1>}, pending_(PendingEvents::OnZeroedMemory{}) {}

inline InputTracker& InputTracker::Instance() noexcept {
  return *std::launder(reinterpret_cast<InputTracker*>(internal::g_tracker_storage));
}

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_INPUT_TRACKER_H_
