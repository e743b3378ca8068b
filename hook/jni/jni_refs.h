// Global class references and member IDs the JNI monitors (idle/, barrier/, looper/) use. Each monitor's
// set is resolved the first time one of the accessors below is called (in practice: that monitor's Start,
// when the remote flag enables it), so a monitor that stays off costs no class loading, no metaspace and no
// global refs. Classes are looked up through the class loader of com.jankprobe.JankProbe, remembered by
// JNI_OnLoad (RememberClassLoader): FindClass on a thread attached from native code would see only the
// boot classes, never the app's (com.jankprobe.TimingIdleHandlerList lives there).
//
// Each set is resolved independently. A member that is missing, renamed or denied by the hidden-API rules
// (NoSuchFieldError / NoSuchMethodError) marks only that set unusable with a readable reason; the exception
// is cleared and the other monitors run.
#ifndef JANKPROBE_HOOK_JNI_JNI_REFS_H_
#define JANKPROBE_HOOK_JNI_JNI_REFS_H_

#include <jni.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hook/event_clock.h"
#include "hook/in_flight_gate.h"

namespace jp::jni {

// android.os classes and calls both monitors need to find the main queue.
struct QueueRefs {
  bool ok = false;
  std::string why;  // set when !ok
  jclass looper = nullptr;
  jclass message_queue = nullptr;
  jmethodID looper_get_main = nullptr;   // static Looper getMainLooper()
  jmethodID looper_get_queue = nullptr;  // MessageQueue getQueue()
  jclass system_clock = nullptr;
  jmethodID uptime_millis = nullptr;     // static long SystemClock.uptimeMillis()
};

struct IdleRefs {
  bool ok = false;
  std::string why;
  jfieldID idle_handlers = nullptr;       // MessageQueue.mIdleHandlers (ArrayList<IdleHandler>)
  jclass timing_list = nullptr;           // com.jankprobe.TimingIdleHandlerList
  jmethodID timing_list_ctor = nullptr;   // (Collection)
  jmethodID timing_list_unwrapped = nullptr;  // ArrayList unwrapped()
  jfieldID timing_list_fold_below = nullptr;  // static volatile long foldBelowNs
  jmethodID timing_list_figures = nullptr;    // static Object[] figures()
  jfieldID timing_list_covered = nullptr;     // static volatile int covered (see IdleHooks)
};

struct BarrierRefs {
  bool ok = false;
  std::string why;
  jfieldID messages = nullptr;            // MessageQueue.mMessages
  // MessageQueue.mUseConcurrent (boolean, final): Android 16's MessageQueue holds two implementations and
  // this says which one a queue uses (true: the concurrent one, which keeps nothing in mMessages). Optional:
  // null on queues that have one implementation (older releases, the host stand-ins).
  jfieldID use_concurrent = nullptr;
  jmethodID remove_sync_barrier = nullptr;  // void removeSyncBarrier(int)
  jclass message = nullptr;
  jfieldID msg_target = nullptr;          // Message.target (Handler)
  jfieldID msg_when = nullptr;            // Message.when (long, uptimeMillis)
  jfieldID msg_arg1 = nullptr;            // Message.arg1 (the barrier token)
  jmethodID msg_obtain = nullptr;         // static Message obtain(Handler, int)
  jmethodID msg_set_async = nullptr;      // void setAsynchronous(boolean)
  jclass handler = nullptr;
  jmethodID handler_ctor = nullptr;       // Handler(Looper)
  jmethodID handler_send = nullptr;       // boolean sendMessage(Message)
  jmethodID handler_send_delayed = nullptr;  // boolean sendMessageDelayed(Message, long)
  jmethodID handler_has = nullptr;        // boolean hasMessages(int)
  jmethodID handler_remove = nullptr;     // void removeMessages(int)
};

// The looper monitor's set: the pending-message walk and the class names in reports. Resolved with
// FrameRefs (and FrameTicker's natives) at the monitor's start, whichever source it runs.
struct LooperRefs {
  bool ok = false;
  std::string why;
  jclass class_class = nullptr;             // java.lang.Class
  jmethodID class_get_name = nullptr;       // String getName()
  // The queue walk for "pending messages" in reports; optional (a report then says why it has none).
  bool pending_ok = false;
  std::string pending_why;
  jfieldID queue_messages = nullptr;        // MessageQueue.mMessages
  jfieldID msg_next = nullptr;              // Message.next
  jfieldID msg_when = nullptr;              // Message.when (uptimeMillis)
  jfieldID msg_what = nullptr;              // Message.what
  jfieldID msg_target = nullptr;            // Message.target (Handler, null for a barrier)
  jfieldID msg_callback = nullptr;          // Message.callback (Runnable)
  jmethodID msg_is_async = nullptr;         // boolean isAsynchronous()
};

// The printer source's set: the Printer on the main Looper. Resolved (LooperPrinter loaded, its natives
// registered) only when the printer source is installed: the default poll source never loads the class.
struct PrinterRefs {
  bool ok = false;
  std::string why;
  jfieldID looper_logging = nullptr;        // Looper.mLogging (android.util.Printer; no getter)
  jmethodID set_message_logging = nullptr;  // void Looper.setMessageLogging(Printer)
  jclass printer = nullptr;                 // com.jankprobe.LooperPrinter
  jmethodID printer_ctor = nullptr;         // (Printer previous)
  jmethodID printer_retire = nullptr;       // void retire()
  jmethodID printer_previous = nullptr;     // Printer previous()
  jmethodID printer_chains_to = nullptr;    // static boolean chainsTo(Printer head, LooperPrinter target)
};

// The frame callback (com.jankprobe.FrameTicker on android.view.Choreographer); optional for the looper
// monitor, which then runs without frame counts.
struct FrameRefs {
  bool ok = false;
  std::string why;
  jclass ticker = nullptr;
  jmethodID ticker_ctor = nullptr;   // ()
  jmethodID ticker_start = nullptr;  // void start()
  jmethodID ticker_stop = nullptr;   // void stop()
  jmethodID ticker_resume_from_native = nullptr;  // static void resumeFromNative() (poll source)
};

// Remembers the class loader of `anchor` (com.jankprobe.JankProbe) for the lazy lookups; called from
// JNI_OnLoad, which must fail with *why if this does. Never leaves an exception pending.
bool RememberClassLoader(JNIEnv* env, jclass anchor, std::string* why);

JavaVM* Vm();  // nullptr until JNI_OnLoad ran
void SetVm(JavaVM* vm);

// Each accessor resolves its set on first use (Looper() and Frames() together; Printer() after them, since
// LooperPrinter calls FrameTicker), attaching the calling thread as
// "jankprobe-control" if needed, and registers the natives of the set's Java class; after that it costs
// one acquire load. Without a VM the set stays unresolved with why = "no Java VM: ...".
const QueueRefs& Queue();
const IdleRefs& Idle();
const BarrierRefs& Barrier();
const LooperRefs& Looper();
const FrameRefs& Frames();
const PrinterRefs& Printer();

// A local reference to the main thread's MessageQueue, or nullptr with *why (no main looper yet, or a
// lookup threw).
jobject MainQueue(JNIEnv* env, std::string* why);
// A local reference to the main Looper, or nullptr with *why.
jobject MainLooper(JNIEnv* env, std::string* why);

// The natives of TimingIdleHandlerList (registered when Idle() resolves) forward here. The idle monitor
// installs its functions at start; with none installed the calls do nothing, so a wrapper still in flight
// after stop is harmless. Static storage.
//
// Per queueIdle() call the wrapper takes the start and the end itself (the end System.nanoTime:
// CLOCK_MONOTONIC on HotSpot and ART; the start the poll source's gap, the previous handler's end or
// System.nanoTime, see IdleWords::gap_start), writes the start to IdleWords::running_since, calls `arm` when
// TimingIdleHandlerList.covered (IdleRefs::timing_list_covered, a Java static the native side sets through
// JNI) is 0 (no watchdog deadline is sure to cover the call; about once per lag_ms) and `end`
// only for a call it cannot fold into its handler class's figures (TimingIdleHandlerList: one that needs a
// timeline record or a lag report, or of a class without figures).
struct IdleHooks {
  void (*arm)(JNIEnv* env, jlong started_ns);
  // started_ns/ended_ns: the call's start and end (CLOCK_MONOTONIC; a start taken from the poll source's
  // gap is on the process event clock, within 50 us of it). name_key: what the previous end returned
  // for this handler (0 the first time); returns the key to pass next time, so a handler's class name is
  // read from Java and interned once, not on every call. counted: the Java side counted the call in its
  // class's figures already (the native side counts the others). The call's running_since is already 0
  // when `end` runs: the native entry clears it before it looks for hooks (with none installed too).
  jint (*end)(JNIEnv* env, jlong started_ns, jlong ended_ns, jint name_key, jstring handler_class, jboolean keep,
              jboolean counted);
};

// The words the wrapper and the native side share: TimingIdleHandlerList's direct ByteBuffer over them
// (absolute puts/gets in native byte order, which compile to plain loads and stores). Process-wide, never
// freed: a wrapper may run after the monitor stopped. Layout is part of the Java class's contract (24
// bytes: long 0 and long 2). They are the owner's words of the looper poll source's gate (MainGapBlock
// below): the main thread's one gate line per gap holds the gate's depth, fence and flag, this gap word
// and the idle call's start, so a wake from epoll misses once there, not once more for a line of these.
struct IdleWords {
  // Byte 0, written by Java: the start of the queueIdle() call running on the main thread, always odd (bit 0
  // set: the call clears it at its end, the wrapper itself for a folded call, else the native end's entry
  // before anything else, so the clear precedes the end's fence with the watchdog's capture); 0 when none.
  // A call that starts at its pass's gap writes nothing here: the wrapper publishes that gap as the Java
  // static TimingIdleHandlerList.lastGap, and the watchdog judges it running while gap_start still holds it
  // (idle/idle_timing.cc, RunningSince). Read by the watchdog.
  std::atomic<int64_t> running_since{0};
  // Byte 8 (Java never reads it): the poll source's "a check or sample deadline is outstanding" flag (0 or
  // 1; looper/poll_timing.cc, Armed()): the main thread reads it at every gap start, the watchdog writes it
  // when a check chain ends. Here rather than in a line of its own: the gap start reads it right after
  // storing gap_start.
  std::atomic<uint64_t> poll_armed{0};
  // Byte 16: the looper's poll source's running gap (looper/poll_timing.cc; its own state reads and
  // writes it here, as looper::internal::PollRunning(), the one gap word: the gap's start the main thread
  // ends the gap with is the same word): the start of the work the main thread does since
  // its last return from epoll_wait in libutils.so, on the process event clock (hook/event_clock.h:
  // CLOCK_MONOTONIC within 50 us), with bit 0 as kGapNotAnIdleStart says; 0 while the thread waits in
  // epoll, or the source is off. Written by the main thread only (one store per gap, the store the poll
  // source needs anyway), read by the watchdog and by the wrapper: idle handlers run in the gap that began
  // at the epoll return just before them (MessageQueue.next(): nativePollOnce(0) returned, the queue is
  // empty, the handlers run), so the first handler of a pass takes this as its start instead of reading
  // the clock, and the word's change tells the wrapper a new pass began.
  std::atomic<uint64_t> gap_start{0};
};
// Bit 0 of IdleWords::gap_start (the start's lowest nanosecond): set when the gap did not begin with a look
// (timeout 0) that found nothing ready. After a look that returned events, libutils ran their fd callbacks
// (an input event's whole dispatch, sensor listeners) in this gap before next() got to the idle handlers,
// and after a blocking wait next() runs none; the wrapper then reads the clock itself.
constexpr uint64_t kGapNotAnIdleStart = 1;
static_assert(std::atomic<int64_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "Java reads and writes these words with plain loads and stores");
static_assert(offsetof(IdleWords, running_since) == 0 && offsetof(IdleWords, gap_start) == 16 &&
                  sizeof(IdleWords) == 24 && sizeof(std::atomic<int64_t>) == 8 && sizeof(std::atomic<uint64_t>) == 8,
              "TimingIdleHandlerList's RUNNING_SINCE and GAP_START offsets, its WORDS_BYTES");
// What the main thread touches per looper gap, in one 128-byte pair of lines (the L2's adjacent-line
// prefetch fetches a line's pair partner with it): the poll source's gate (one line: its depth, fence and
// flag, then the IdleWords as its owner words) and the line after it, the poll source's own per-gap words
// (named in looper/poll_timing.cc: the main thread's pointer, the ring's room and head, the slow threshold)
// and the main thread's copy of the event clock's anchor. Here, in hook/, rather than in looper/: the idle
// monitor (and its Java buffer) needs the IdleWords storage with or without the looper monitor linked in.
// Constant-initialised (.data, 128 bytes: the fence's failure_api_ starts at -1; no relocation, nothing
// runs at load).
// The gate's owner words: the idle words at their start (Java's buffer covers these 24 bytes only), then
// the wake's hint, in the 8 bytes the line had free.
struct MainOwnerWords {
  IdleWords idle;
  // Byte 24: lines of another monitor's that the main thread's next event needs, for the wake from a
  // blocking wait to ask for (WakeLinesHint; 0: none). The wake reads it from the gate's line, which it
  // loads first anyway, so a monitor that is off costs the wake one load and one branch.
  std::atomic<uintptr_t> wake_lines{0};
};
// The hint's encoding: the first line's address (64-byte aligned) with, in its low 6 bits, how many
// 64-byte lines further the second line is (0: one line only). Written on the control path (a monitor's
// install and removal), read relaxed: a stale hint only asks for a line that is not needed (a prefetch
// never faults, and the storage it names is static, never unmapped while the library is loaded).
constexpr uintptr_t kWakeLineBits = 63;
inline uintptr_t WakeLinesHint(const void* first, const void* second) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(first);
  const uintptr_t b = reinterpret_cast<uintptr_t>(second);
  if ((a & kWakeLineBits) != 0) return 0;  // not a line's start: no hint rather than a wrong one
  const uintptr_t lines = b >= a && ((b - a) & kWakeLineBits) == 0 ? (b - a) / 64 : 0;
  return a | (lines <= kWakeLineBits ? lines : 0);
}

struct alignas(128) MainGapBlock {
  // The poll source's gate (its flag is PollActive()): Java's buffer, the idle natives and the idle
  // monitor's watchdog side reach its owner words' idle words as IdleSharedWords().
  hook::OwnerOnlyGate<MainOwnerWords> gate;
  // The main thread's (and the poll source's control path's while the gate is closed and drained).
  alignas(64) std::atomic<uint64_t> poll_words[4] = {};
  hook::EventClock::Anchor poll_clock;
};
static_assert(offsetof(MainOwnerWords, idle) == 0 && offsetof(MainOwnerWords, wake_lines) == 24 &&
                  sizeof(MainOwnerWords) == 32,
              "the idle words first (Java's buffer starts there), the hint in the line's last 8 bytes");
static_assert(sizeof(hook::OwnerOnlyGate<MainOwnerWords>) == 64 && sizeof(MainGapBlock) == 128,
              "the idle words end the gate's one line, the poll words and clock copy fill the next");
// The storage (jni_refs.cc): reached directly (hidden, PC-relative), since the poll source stores into it
// once per gap.
extern MainGapBlock g_main_gap __attribute__((visibility("hidden")));
inline IdleWords& IdleSharedWords() { return g_main_gap.gate.owner_words().idle; }
// The wake's hint (MainOwnerWords::wake_lines): set by a monitor once its hot lines exist, cleared before
// it goes (0).
inline void SetWakeLines(uintptr_t hint) { g_main_gap.gate.owner_words().wake_lines.store(hint, std::memory_order_relaxed); }
void SetIdleHooks(const IdleHooks* hooks);  // nullptr uninstalls

// The natives of LooperPrinter and FrameTicker (registered when Printer() / Frames() resolve; a failure
// marks the matching set unusable) forward here; same contract as IdleHooks (the looper monitor
// installs them at start, nothing happens with none installed). Static storage.
struct LooperHooks {
  void (*begin)(JNIEnv* env, jstring line);  // ">>>>> Dispatching to ..." on the main thread
  void (*end)(JNIEnv* env);                  // "<<<<< Finished to ..."
  void (*frame)(JNIEnv* env, jlong frame_time_nanos);             // a run of frames starts (after parking)
  void (*frames)(JNIEnv* env, jlong frame_time_nanos, jint count);  // `count` frames up to this one
  void (*parked)(JNIEnv* env, jboolean parked);                     // the ticker parked / resumed
};
void SetLooperHooks(const LooperHooks* hooks);  // nullptr uninstalls

}  // namespace jp::jni

#endif  // JANKPROBE_HOOK_JNI_JNI_REFS_H_
