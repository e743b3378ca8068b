#include "idle/idle_timing.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string_view>

#include "hook/asymmetric_fence.h"
#include "hook/caller_tid.h"
#include "hook/clock.h"
#include "hook/in_flight_gate.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/report.h"
#include "hook/split_counter.h"
#include "hook/string_intern.h"

namespace jp::idle {
namespace {

// One deadline id for the monitor: the deadline is "sticky" (see ArmIfIdle).
constexpr uint64_t kDeadlineId = 0x1D1Eull << 48;
// A deadline due at once, armed at each activation: the watchdog thread attaches to the VM (see
// watchdog_env) before any deadline of ours has to clear TimingIdleHandlerList.covered.
constexpr uint64_t kAttachId = kDeadlineId | 1;

struct Timing {
  std::atomic<bool> active{false};
  // The main thread's end/arm calls get in with plain stores (owner); DeactivateTiming drains it.
  hook::AsymmetricFence fence;
  hook::InFlightGate gate{&fence};
  std::atomic<const hook::PluginContext*> context{nullptr};
  std::atomic<uint64_t> lag_ns{200 * hook::kNsPerMs};
  std::atomic<uint64_t> record_min_ns{1000 * 1000};  // idle.record_min_us
  // The main thread (the gate's owner) counts with a plain load + store, other threads atomically.
  // Calls the Java side did not count in a class's figures (TimingIdleHandlerList.Timed's figures; more
  // classes than it keeps figures for), and the calls that got a timeline record of their own.
  hook::SplitCounter uncounted_calls;
  hook::SplitCounter recorded;
  hook::SplitCounter lags;
  hook::SplitCounter arm_calls;  // nativeArm calls: Java found no deadline covering its call
  std::atomic<uint64_t> deadline_arms{0};
  // Stacks the watchdog took of a call it found running past lag_ms: one per slow call, normally none for
  // calls that ended (each end clears running_since, in Java or natively; a main thread descheduled between
  // its end clock read and the clear can cost one needless stack, see TimingIdleHandlerList).
  std::atomic<uint64_t> stack_captures{0};
  // Changes at every activation: name keys of an earlier one are stale (see NameKey).
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint16_t> keep_key{0};  // the "keep" argument's interned key in this activation's timeline

  // True while our one deadline is armed (or being armed): whoever flips it false -> true arms it.
  // TimingIdleHandlerList.covered is the Java side's view of it (set only with the expedited fence, and
  // once the watchdog thread is known to reach the VM: it must be able to clear it).
  std::atomic<bool> deadline_armed{false};
  // The watchdog thread has a JNIEnv (attached by OnAttach, or by another monitor before). Until then, or
  // if the VM refuses (covered_why), covered stays 0 and every call takes nativeArm: correct, dearer.
  std::atomic<bool> watchdog_env{false};
  std::mutex covered_mu;
  std::string covered_why;  // why covered could not be set or cleared (status "covered_error")
  // The watchdog is capturing the stack of the call that started at this time right now (0: it is not).
  // A call is known by its start (running_since): calls on the main thread follow one another, and a call
  // the watchdog captures has run lag_ms, so no other call shares its start.
  std::atomic<uint64_t> capturing_since{0};
  // The start of the last call whose end went native (End, before its fence with the capture): a call that
  // started at its gap wrote no running word, so this is how the watchdog sees it ended (RunningSince).
  std::atomic<uint64_t> ended_since{0};
  // TimingIdleHandlerList.lastGap / lastEnd (static long), resolved at activation (ResolveFields): the
  // watchdog reads them through JNI (RunningSince; the chain in OnDeadline). Static field IDs stay valid
  // as long as the class is loaded (its global ref in jni::Idle() keeps it).
  std::atomic<jfieldID> last_gap_field{nullptr};
  std::atomic<jfieldID> last_end_field{nullptr};
  // The watchdog's last look at lastEnd (its callbacks run one at a time on its thread).
  std::atomic<int64_t> chain_last_end{0};
  std::atomic<uint64_t> chain_rearms{0};  // deadlines the watchdog kept armed because calls went on

  std::mutex stack_mu;  // the stack the watchdog captured for a call that overran
  uint64_t stack_since = 0;
  hook::StackSample stack;
};
Timing g_timing;  // process-wide on purpose: see idle_timing.h

jni::IdleWords& Words() { return jni::IdleSharedWords(); }

void OnDeadline(const hook::DeadlineFired& fired, void*);

// A gap word an idle pass may start at: a running gap (not 0) that began with a look finding nothing ready
// (bit 0 clear, jni::kGapNotAnIdleStart). A call that starts at such a gap writes no running word.
__attribute__((always_inline)) inline bool APassMayStartAt(uint64_t gap) {
  return gap != 0 && (gap & jni::kGapNotAnIdleStart) == 0;
}

// The start of the queueIdle() call running on the main thread as the watchdog sees it; 0: none. An odd
// running_since is a start its call clears at its end. A call that started at its pass's gap (even) wrote
// no running word, only TimingIdleHandlerList.lastGap = the gap word, before its handler: it runs while
// the gap word still holds that gap (the main thread polls nowhere inside an idle handler; the look after
// the pass starts another gap, a wait or a stopping poll source clears the word) and its end has not gone
// native (ended_since; a folded end leaves it judged running until the look a few microseconds later,
// as the even running word did before). So this also reads a gap-start call of a later handler's pass as
// "running since the gap" between that handler's end and the look: microseconds, and only a pass that ran
// past lag_ms in all could cost a needless stack there (no report uses it: reports come from End).
// seq_cst loads: the capture's re-check is a Dekker pair with End (ended_since, the clear of running_since).
// On 32-bit ABIs a torn lastGap read compares unequal (or equal only to this gap): at worst the call is
// judged once more at the next look. Always inline (here and Captured): a function of its own would sit
// in plain .text, outside the ordered text (lib/startup_order.ld), and OnDeadline runs every lag_ms.
__attribute__((always_inline)) inline uint64_t RunningSince(JNIEnv* env) {
  jni::IdleWords& words = Words();
  const uint64_t since = static_cast<uint64_t>(words.running_since.load(std::memory_order_seq_cst));
  if ((since & jni::kGapNotAnIdleStart) != 0) return since;  // odd: TimingIdleHandlerList.CLEARED_AT_END
  const uint64_t gap = words.gap_start.load(std::memory_order_seq_cst);
  if (!APassMayStartAt(gap) || g_timing.ended_since.load(std::memory_order_seq_cst) == gap) return 0;
  const jfieldID last_gap = g_timing.last_gap_field.load(std::memory_order_acquire);
  const jni::IdleRefs& refs = jni::Idle();
  if (!env || !last_gap || !refs.ok) return 0;
  return static_cast<uint64_t>(env->GetStaticLongField(refs.timing_list, last_gap)) == gap ? gap : 0;
}

// The watchdog took the stack of the call that started at `since` already.
__attribute__((always_inline)) inline bool Captured(uint64_t since) {
  std::lock_guard<std::mutex> lock(g_timing.stack_mu);
  return g_timing.stack_since == since;
}

void NoteCoveredError(const std::string& why) {
  std::lock_guard<std::mutex> lock(g_timing.covered_mu);
  g_timing.covered_why = why;
}

// TimingIdleHandlerList.covered = value, through JNI on the calling thread (its env). False, with the
// reason noted, when the refs are not there or the VM threw (it does not for a static int field).
bool SetCovered(JNIEnv* env, jint value) {
  const jni::IdleRefs& refs = jni::Idle();
  if (!env || !refs.ok) {
    NoteCoveredError(env ? "TimingIdleHandlerList.covered: " + refs.why : "no JNIEnv on this thread");
    return false;
  }
  env->SetStaticIntField(refs.timing_list, refs.timing_list_covered, value);
  std::string why;
  if (jni::TakeException(env, "TimingIdleHandlerList.covered", &why)) {
    NoteCoveredError(why);
    return false;
  }
  return true;
}

// This thread's JNIEnv (attached as `thread` if it is not yet), or null with the reason in *why.
// Always inline: a function of its own would sit outside the ordered text (lib/startup_order.ld).
__attribute__((always_inline)) inline JNIEnv* EnvOrWhy(const char* thread, std::string* why) {
  if (!jni::Vm()) {
    *why = "no Java VM";
    return nullptr;
  }
  return jni::AttachedEnv(jni::Vm(), thread, why);
}

// Control path (start, stop): covered down from the control thread.
void ClearCoveredFromControl() {
  std::string why;
  JNIEnv* env = EnvOrWhy("jankprobe-control", &why);
  if (!env) {
    NoteCoveredError("covered not cleared: " + why);
    return;
  }
  SetCovered(env, 0);
}

// Watchdog thread, once per activation: the thread attaches (a no-op when the looper or barrier monitor
// did already), so that OnDeadline can clear covered; only then may covered be set. A deadline armed
// before this ran left covered at 0, and every call would take nativeArm until it fires (up to lag_ms):
// it is taken back and handled as fired now, which re-arms it, covered, for a call still running, or
// leaves it to the next call's arm. (Callbacks run one at a time on this thread: OnDeadline is not
// running meanwhile. An arm still in progress on the main thread is not in the table yet and stays
// uncovered, as before this ran.)
void OnDeadline(const hook::DeadlineFired& fired, void*);
void OnAttach(const hook::DeadlineFired&, void*) {
  std::string why;
  if (EnvOrWhy("jankprobe-watchdog", &why)) {
    g_timing.watchdog_env.store(true, std::memory_order_release);
    const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
    if (ctx && ctx->watchdog && g_timing.fence.expedited() && ctx->watchdog->Disarm(kDeadlineId)) {
      hook::DeadlineFired now;
      now.id = kDeadlineId;
      now.fired_ns = hook::MonotonicNs();
      OnDeadline(now, nullptr);
    }
  } else {
    NoteCoveredError("the watchdog thread has no JNIEnv (" + why + "): every call takes nativeArm");
  }
}

// The monitor keeps at most one watchdog deadline, armed lazily: a call that starts while it is armed
// (for an earlier call, so it fires no later than this call's own lag point) arms nothing. Arming and
// disarming around every call cost a futex wake (the idle watchdog thread has no deadline to sleep
// towards) and two watchdog wake-ups per call; this way a steady stream of short handlers wakes the
// watchdog at most once per lag_ms and the main thread makes no syscall at all.
// env: the calling thread's (the main thread's in nativeArm, the watchdog's in OnDeadline).
void ArmIfIdle(JNIEnv* env, const hook::PluginContext* ctx, uint64_t deadline_ns) {
  bool expected = false;
  if (!g_timing.deadline_armed.compare_exchange_strong(expected, true, std::memory_order_seq_cst)) return;
  g_timing.deadline_arms.fetch_add(1, std::memory_order_relaxed);
  // Covered before the deadline can fire and clear it (a fired deadline clears covered before it lets
  // anyone arm again; it is 0 here). Only with the membarrier on the watchdog side may Java skip the
  // native fence, and only a watchdog thread that reaches the VM can clear it again.
  const bool cover =
      g_timing.fence.expedited() && g_timing.watchdog_env.load(std::memory_order_acquire) && SetCovered(env, 1);
  if (!ctx->watchdog || !ctx->watchdog->Arm(kDeadlineId, deadline_ns, OnDeadline, nullptr)) {
    if (cover) SetCovered(env, 0);
    g_timing.deadline_armed.store(false, std::memory_order_seq_cst);  // table full: the next call retries
  }
}

// Watchdog thread: is the running call (if any) past its lag point? Then capture the main thread's stack
// while it is stuck (once per call). Then the deadline goes on (a chain the watchdog keeps, as the poll
// source's check chain): while calls ran since its last look (TimingIdleHandlerList.lastEnd moved), it is
// re-armed at once for the running call's lag point or one lag from now, with covered left set, so a
// steady stream of calls never finds covered down and the main thread never arms (each nativeArm was a
// JNI call, the deadline table's lines and a futex wake; the watchdog wakes once per lag_ms either way).
// A look that finds no call ended since the last one ends the chain as before: covered down, then the
// running call (if any) re-armed for, or the next call arms. Lag is decided on CLOCK_MONOTONIC, fired_ns's
// clock: the call's start is Java's System.nanoTime (CLOCK_MONOTONIC), the previous call's end (the same),
// or the looper's gap start on the process event clock, which is within 50 us of it (hook/event_clock.h):
// a lag found at most 50 us early or late, against lag_ms of milliseconds. A start ahead of fired_ns
// reads as "not yet" (unsigned compare of fired_ns with since + lag, no subtraction).
void OnDeadline(const hook::DeadlineFired& fired, void*) {
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  const uint64_t lag = g_timing.lag_ns.load(std::memory_order_relaxed);
  std::string why;
  JNIEnv* env = EnvOrWhy("jankprobe-watchdog", &why);
  // On 32-bit ABIs Java's 64-bit store may tear; a torn read of an odd start mixes its halves with the
  // old word's (0: odd words are cleared at their call's end). With the old low half it is even and is
  // judged by the gap; with the old high half it is no later than the new start. Either way no deadline
  // is armed late for the new call, and the re-read below before a capture catches it.
  uint64_t since = RunningSince(env);
  if (ctx && since != 0 && fired.fired_ns >= since + lag && g_timing.active.load(std::memory_order_acquire)) {
    g_timing.capturing_since.store(since, std::memory_order_seq_cst);
    // Still the same call? Dekker with the end (clears running_since or sets ended_since, fences, reads
    // capturing_since).
    if (RunningSince(env) == since) {
      g_timing.stack_captures.fetch_add(1, std::memory_order_relaxed);
      hook::StackSample stack = ctx->watchdog ? ctx->watchdog->CaptureMainThreadStack() : hook::StackSample{};
      if (!ctx->watchdog) stack.error = "no watchdog";
      std::lock_guard<std::mutex> lock(g_timing.stack_mu);
      g_timing.stack_since = since;
      g_timing.stack = std::move(stack);
    }
    g_timing.capturing_since.store(0, std::memory_order_seq_cst);
  }
  const jfieldID last_end = g_timing.last_end_field.load(std::memory_order_acquire);
  if (env && last_end && ctx && ctx->watchdog && g_timing.active.load(std::memory_order_acquire)) {
    // The clock first: a call whose start this look misses published it after the reads below, so it
    // started no earlier than the gap it runs in began; arming at now + lag is late for it by at most
    // that gap's few microseconds of next() before the pass (the start of a later handler of a pass is
    // the previous one's end, read before it is published).
    // Only a covered deadline goes on: one armed while covered could not be set (the watchdog thread had
    // not reached the VM yet, see OnAttach) lapses here, so that the next call arms it covered.
    const uint64_t now = hook::MonotonicNs();
    const jni::IdleRefs& refs = jni::Idle();
    const int64_t end = env->GetStaticLongField(refs.timing_list, last_end);
    if (end != g_timing.chain_last_end.exchange(end, std::memory_order_relaxed) &&
        env->GetStaticIntField(refs.timing_list, refs.timing_list_covered) != 0) {
      since = RunningSince(env);
      const uint64_t due = since != 0 && !Captured(since) ? since + lag : now + lag;
      if (ctx->watchdog->Arm(kDeadlineId, due, OnDeadline, nullptr)) {
        g_timing.deadline_arms.fetch_add(1, std::memory_order_relaxed);
        g_timing.chain_rearms.fetch_add(1, std::memory_order_relaxed);
        return;  // deadline_armed and covered stay set
      }
    }
  }
  // The chain ends. Dekker with the call's start (Java: store its word, then read covered; native arm:
  // after that store, its fence, then deadline_armed): either we see the new call here and arm for it, or
  // it sees covered (and deadline_armed) down and arms itself. The membarrier is the full fence for both.
  // The word a call that starts at its gap publishes first is the gap word (the poll source's store,
  // native code before MessageQueue.next() got to the handlers: no JIT moves Java's read of covered
  // above it), and lastGap is a plain store: so a gap word seen here (even: a pass may start in it) keeps
  // a deadline armed, for the call judged running at its lag point, else one lag from now.
  if (env) {
    SetCovered(env, 0);
  } else if (g_timing.watchdog_env.exchange(false, std::memory_order_acq_rel)) {
    // Set while this thread had an env (a restarted watchdog thread the VM refuses): never set again.
    NoteCoveredError("the watchdog thread lost its JNIEnv (" + why +
                     "): covered may stay set until the monitor restarts");
  }
  g_timing.deadline_armed.store(false, std::memory_order_seq_cst);
  g_timing.fence.Heavy();
  if (!ctx || !g_timing.active.load(std::memory_order_acquire)) return;
  since = RunningSince(env);
  if (since != 0) {
    if (!Captured(since)) ArmIfIdle(env, ctx, since + lag);  // a call already caught waits for its end
    return;
  }
  if (APassMayStartAt(Words().gap_start.load(std::memory_order_seq_cst))) {
    ArmIfIdle(env, ctx, hook::MonotonicNs() + lag);
  }
}

// Java found covered at 0 after writing running_since: no deadline is sure to cover its call (about once
// per lag_ms), or the watchdog's side is no membarrier, so Java's program order is not enough (every call).
// Java's store of running_since came first (its program order before this call); the Dekker pair with
// OnDeadline goes on from here: the fence's light side (a real fence without membarrier), then
// deadline_armed.
void Arm(JNIEnv* env, jlong started_ns) {
  hook::InFlightGate::Pass pass = g_timing.gate.Enter(hook::CallerTid(), g_timing.active);
  if (pass.open) {
    const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
    g_timing.arm_calls.Add(pass.exclusive());
    g_timing.fence.Light();
    if (ctx && started_ns > 0 && !g_timing.deadline_armed.load(std::memory_order_seq_cst)) {
      ArmIfIdle(env, ctx, static_cast<uint64_t>(started_ns) + g_timing.lag_ns.load(std::memory_order_relaxed));
    }
  }
  g_timing.gate.Leave(pass);
}

// The handler's class name without allocating: Java strings are short class names here.
std::string_view HandlerName(JNIEnv* env, jstring s, char (&buf)[hook::StringTable::kMaxLength + 1]) {
  if (!s) return {};
  const jsize chars = env->GetStringLength(s);
  const jsize utf_bytes = env->GetStringUTFLength(s);
  if (utf_bytes <= 0 || static_cast<size_t>(utf_bytes) > hook::StringTable::kMaxLength) {
    return utf_bytes <= 0 ? std::string_view() : std::string_view("<long handler name>");
  }
  env->GetStringUTFRegion(s, 0, chars, buf);
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return {};
  }
  return std::string_view(buf, static_cast<size_t>(utf_bytes));
}

// A name key is (activation epoch << 14 | interned id): the timeline, and so its string table, is only
// replaced while the monitors are stopped, so an id interned under the current activation stays valid
// until the next one. Keys are positive ints (Java caches them in the wrapper); 0 means "none".
constexpr int kIdBits = 14;
constexpr uint32_t kEpochMask = (1u << (31 - kIdBits)) - 1;

jint NameKey(uint32_t epoch, uint16_t id) {
  return static_cast<jint>((epoch << kIdBits) | (id & ((1u << kIdBits) - 1)));
}

// The stack the watchdog captured for the call that started at `since`, or why there is none. The call
// has ended (running_since is 0); the watchdog may be capturing it right now (it fired just before the
// end): wait for that rather than report without it. It captures one thread's stack: milliseconds at most.
void AttachStack(uint64_t since, hook::Report* r) {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // Dekker with OnDeadline's capture (rare path)
  for (int i = 0; i < 100000 && g_timing.capturing_since.load(std::memory_order_seq_cst) == since; ++i) {
    sched_yield();
  }
  std::lock_guard<std::mutex> lock(g_timing.stack_mu);
  if (g_timing.stack_since == since && g_timing.stack.ok) {
    r->stack = hook::SplitStackFrames(g_timing.stack.text);
    r->stack_captured_while_stuck = true;
  } else {
    r->fields.push_back(hook::ReportField::String(
        "stack_error", g_timing.stack_since == since ? g_timing.stack.error : "the lag deadline did not fire"));
  }
}

// A call the Java side did not fold into its class's figures: long enough for a timeline record of its
// own (record_min_us) or a lag report (lag_ms), of a class without figures, or record_min_us is 0.
jint Record(const hook::InFlightGate::Pass& pass, JNIEnv* env, uint64_t begin, uint64_t end, jint name_key,
            jstring handler_class, jboolean keep, jboolean counted) {
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  if (!ctx || begin == 0) return 0;
  // The end is Java's System.nanoTime (CLOCK_MONOTONIC), the clock the watchdog's deadlines use; the start
  // too, or the looper's gap start on the process event clock (within 50 us of it): clamped at 0.
  const uint64_t dur = end > begin ? end - begin : 0;
  const uint64_t lag_ns = g_timing.lag_ns.load(std::memory_order_relaxed);
  const bool own_record = dur >= g_timing.record_min_ns.load(std::memory_order_relaxed) || dur >= lag_ns;
  if (!counted) g_timing.uncounted_calls.Add(pass.exclusive());
  const uint32_t epoch = g_timing.epoch.load(std::memory_order_relaxed);
  jint key = name_key;
  char name_buf[hook::StringTable::kMaxLength + 1];
  std::string_view name;
  const bool known = key > 0 && (static_cast<uint32_t>(key) >> kIdBits) == epoch;
  if ((!known && (own_record || !counted)) || dur >= lag_ns || !ctx->timeline) {
    name = HandlerName(env, handler_class, name_buf);
  }

  // A short call of a class without figures is interned all the same, so that its next calls skip reading
  // the name (the key); one of a class with figures that reached here has a record to write.
  if (ctx->timeline && (own_record || !counted)) {
    hook::Timeline& tl = *ctx->timeline;
    const uint16_t id = known ? static_cast<uint16_t>(key & ((1 << kIdBits) - 1)) : tl.Intern(name);
    // An overflowing table is not cached: the name gets another chance on the next call.
    key = id == hook::StringTable::kOverflow || id == hook::StringTable::kNone ? 0 : NameKey(epoch, id);
    if (own_record) {
      hook::Event e;
      e.ts_ns = begin;
      e.dur_ns = dur;
      e.tid = ctx->main_tid ? ctx->main_tid : hook::CallerTid();
      e.kind = hook::EventKind::kIdleHandler;
      e.name = id;
      e.args[0] = hook::EventArg::Int(g_timing.keep_key.load(std::memory_order_relaxed), keep ? 1 : 0);
      tl.Append(e);
      g_timing.recorded.Add(pass.exclusive());
    }
  }

  if (dur < lag_ns) return key;
  g_timing.lags.Add(pass.exclusive());
  hook::Report r;
  r.type = "idle_lag";
  r.monitor = "idle";
  r.ts_ns = begin;
  r.dur_ns = dur;
  r.fields.push_back(hook::ReportField::String("handler", std::string(name)));
  r.fields.push_back(hook::ReportField::Bool("keep", keep));
  r.fields.push_back(hook::ReportField::Int("lag_ms", static_cast<int64_t>(lag_ns / hook::kNsPerMs)));
  AttachStack(begin, &r);
  ctx->Submit(r);
  return key;
}

jint End(JNIEnv* env, jlong started_ns, jlong ended_ns, jint name_key, jstring handler_class, jboolean keep,
         jboolean counted) {
  // running_since is 0 already: jni_refs.cc's NativeIdleEnd clears it before it calls this. A call that
  // started at its gap wrote none: this says it ended (RunningSince), before AttachStack's fence.
  g_timing.ended_since.store(static_cast<uint64_t>(started_ns), std::memory_order_relaxed);
  // A call begun before the monitor started, or ending after it stopped, is not recorded (gate closed).
  const hook::InFlightGate::Pass pass = g_timing.gate.Enter(hook::CallerTid(), g_timing.active);
  const jint key = pass.open && started_ns > 0 && ended_ns > 0
                       ? Record(pass, env, static_cast<uint64_t>(started_ns), static_cast<uint64_t>(ended_ns),
                                name_key, handler_class, keep, counted)
                       : 0;
  g_timing.gate.Leave(pass);
  return key;
}

const jni::IdleHooks kHooks = {Arm, End};

// TimingIdleHandlerList.lastGap and lastEnd for the watchdog (control path, before the first call).
bool ResolveFields(std::string* why) {
  if (g_timing.last_gap_field.load(std::memory_order_acquire) && g_timing.last_end_field.load(std::memory_order_acquire)) {
    return true;
  }
  const jni::IdleRefs& refs = jni::Idle();
  if (!refs.ok) {
    *why = refs.why;
    return false;
  }
  JNIEnv* env = EnvOrWhy("jankprobe-control", why);
  if (!env) return false;
  const jfieldID last_gap = env->GetStaticFieldID(refs.timing_list, "lastGap", "J");
  if (jni::TakeException(env, "TimingIdleHandlerList.lastGap", why) || !last_gap) return false;
  const jfieldID last_end = env->GetStaticFieldID(refs.timing_list, "lastEnd", "J");
  if (jni::TakeException(env, "TimingIdleHandlerList.lastEnd", why) || !last_end) return false;
  g_timing.last_gap_field.store(last_gap, std::memory_order_release);
  g_timing.last_end_field.store(last_end, std::memory_order_release);
  return true;
}

}  // namespace

bool ActivateTiming(const hook::PluginContext* context, int32_t lag_ms, int32_t record_min_us, std::string* why) {
  // Without them the watchdog could not see a call that started at its gap (it writes no running word).
  if (!ResolveFields(why)) return false;
  g_timing.context.store(context, std::memory_order_release);
  // Control path, before any call can enter: the membarrier registration (once per process) and the
  // owner of the single-writer state. No event clock calibration: the idle side never reads that clock
  // (a start taken from the looper's gap was stamped by the poll source, which calibrated it at its start).
  std::string fence_why;
  g_timing.fence.Init(&fence_why);  // without it: full fences, and Java calls nativeArm every time (status says)
  g_timing.gate.ProposeOwner(context ? context->main_tid : 0);
  // A deadline of an earlier activation may have been dropped by a watchdog Stop without firing: start
  // over (at worst an old one still armed fires once more and finds nothing to do).
  ClearCoveredFromControl();
  g_timing.deadline_armed.store(false, std::memory_order_seq_cst);
  if (context && context->watchdog && !g_timing.watchdog_env.load(std::memory_order_acquire)) {
    context->watchdog->Arm(kAttachId, hook::MonotonicNs(), OnAttach, nullptr);
  }
  uint32_t epoch = (g_timing.epoch.load(std::memory_order_relaxed) + 1) & kEpochMask;
  g_timing.epoch.store(epoch == 0 ? 1 : epoch, std::memory_order_relaxed);
  g_timing.keep_key.store(context && context->timeline ? context->timeline->Intern("keep") : 0,
                          std::memory_order_relaxed);
  g_timing.active.store(true, std::memory_order_seq_cst);
  RetuneTiming(lag_ms, record_min_us);
  jni::SetIdleHooks(&kHooks);
  return true;
}

void RetuneTiming(int32_t lag_ms, int32_t record_min_us) {
  g_timing.lag_ns.store(static_cast<uint64_t>(lag_ms > 0 ? lag_ms : 1) * hook::kNsPerMs, std::memory_order_relaxed);
  g_timing.record_min_ns.store(static_cast<uint64_t>(record_min_us > 0 ? record_min_us : 0) * 1000,
                               std::memory_order_relaxed);
}

int64_t FoldBelowNs() {
  return static_cast<int64_t>(std::min(g_timing.record_min_ns.load(std::memory_order_relaxed),
                                       g_timing.lag_ns.load(std::memory_order_relaxed)));
}

void DeactivateTiming() {
  jni::SetIdleHooks(nullptr);
  g_timing.active.store(false, std::memory_order_seq_cst);
  // The sticky deadline: removed if still armed; a callback running now sees `active` false and does not
  // re-arm. deadline_armed is left as it is only if the callback owns it (it clears it itself).
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  ClearCoveredFromControl();
  if (ctx && ctx->watchdog && ctx->watchdog->Disarm(kDeadlineId)) {
    g_timing.deadline_armed.store(false, std::memory_order_seq_cst);
  }
  // end/arm are short (no Java, no blocking): this waits microseconds at most.
  g_timing.gate.Drain();
  g_timing.context.store(nullptr, std::memory_order_release);
}

IdleCounters TimingCounters() {
  IdleCounters c;
  c.uncounted_calls = g_timing.uncounted_calls.Load();
  c.recorded = g_timing.recorded.Load();
  c.record_min_us = g_timing.record_min_ns.load(std::memory_order_relaxed) / 1000;
  c.lags = g_timing.lags.Load();
  c.deadline_arms = g_timing.deadline_arms.load(std::memory_order_relaxed);
  c.stack_captures = g_timing.stack_captures.load(std::memory_order_relaxed);
  c.arm_calls = g_timing.arm_calls.Load();
  c.chain_rearms = g_timing.chain_rearms.load(std::memory_order_relaxed);
  c.fence_expedited = g_timing.fence.expedited();
  c.covered_usable = g_timing.watchdog_env.load(std::memory_order_acquire);
  {
    std::lock_guard<std::mutex> lock(g_timing.covered_mu);
    c.covered_error = g_timing.covered_why;
  }
  return c;
}

}  // namespace jp::idle
