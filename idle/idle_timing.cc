#include "idle/idle_timing.h"

#include <sched.h>

#include <atomic>
#include <mutex>
#include <string_view>

#include "hook/clock.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/report.h"
#include "hook/string_intern.h"

namespace jp::idle {
namespace {

// One deadline id for the monitor: the deadline is "sticky" (see ArmIfIdle).
constexpr uint64_t kDeadlineId = 0x1D1Eull << 48;

struct Timing {
  std::atomic<bool> active{false};
  std::atomic<int> inside{0};  // begin/end calls currently in the code below
  std::atomic<const hook::PluginContext*> context{nullptr};
  std::atomic<uint64_t> lag_ns{200 * hook::kNsPerMs};
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> lags{0};
  std::atomic<uint64_t> deadline_arms{0};
  // Changes at every activation: name keys of an earlier one are stale (see NameKey).
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint16_t> keep_key{0};  // the "keep" argument's interned key in this activation's timeline

  // The call running now, written by the main thread, read by the watchdog: its start (0: none running)
  // and its sequence number. Idle handlers run one after another on the main thread, never nested.
  std::atomic<uint64_t> running_begin{0};
  std::atomic<uint64_t> running_seq{0};
  // True while our one deadline is armed (or being armed): whoever flips it false -> true arms it.
  std::atomic<bool> deadline_armed{false};
  // The watchdog is capturing the stack of this call right now (0: not capturing).
  std::atomic<uint64_t> capturing_seq{0};

  std::mutex stack_mu;  // the stack the watchdog captured for a call that overran
  uint64_t stack_seq = 0;
  hook::StackSample stack;
};
Timing g_timing;  // process-wide on purpose: see idle_timing.h

// Counts a call into the timing code so DeactivateTiming can wait for it to leave.
class Inside {
 public:
  Inside() { g_timing.inside.fetch_add(1, std::memory_order_acq_rel); }
  ~Inside() { g_timing.inside.fetch_sub(1, std::memory_order_acq_rel); }
  bool active() const { return g_timing.active.load(std::memory_order_acquire); }
};

void OnDeadline(const hook::DeadlineFired& fired, void*);

// The monitor keeps at most one watchdog deadline, armed lazily: a call that starts while it is armed
// (for an earlier call, so it fires no later than this call's own lag point) arms nothing. Arming and
// disarming around every call cost a futex wake (the idle watchdog thread has no deadline to sleep
// towards) and two watchdog wake-ups per call; this way a steady stream of short handlers wakes the
// watchdog at most once per lag_ms and the main thread makes no syscall at all.
void ArmIfIdle(const hook::PluginContext* ctx, uint64_t deadline_ns) {
  bool expected = false;
  if (!g_timing.deadline_armed.compare_exchange_strong(expected, true, std::memory_order_seq_cst)) return;
  g_timing.deadline_arms.fetch_add(1, std::memory_order_relaxed);
  if (!ctx->watchdog || !ctx->watchdog->Arm(kDeadlineId, deadline_ns, OnDeadline, nullptr)) {
    g_timing.deadline_armed.store(false, std::memory_order_seq_cst);  // table full: the next call retries
  }
}

// Watchdog thread: is the running call (if any) past its lag point? Then capture the main thread's stack
// while it is stuck (once per call); otherwise re-arm for the running call's lag point, or leave the
// deadline unarmed when nothing runs (the next begin arms it).
void OnDeadline(const hook::DeadlineFired& fired, void*) {
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  const uint64_t lag = g_timing.lag_ns.load(std::memory_order_relaxed);
  uint64_t seq = g_timing.running_seq.load(std::memory_order_acquire);
  uint64_t begin = g_timing.running_begin.load(std::memory_order_acquire);
  if (ctx && begin != 0 && fired.fired_ns >= begin + lag && g_timing.active.load(std::memory_order_acquire)) {
    g_timing.capturing_seq.store(seq, std::memory_order_seq_cst);
    // Still the same call? (running_begin is written before running_seq is read by end's wait below.)
    if (g_timing.running_begin.load(std::memory_order_seq_cst) == begin &&
        g_timing.running_seq.load(std::memory_order_seq_cst) == seq) {
      hook::StackSample stack = ctx->watchdog ? ctx->watchdog->CaptureMainThreadStack() : hook::StackSample{};
      if (!ctx->watchdog) stack.error = "no watchdog";
      std::lock_guard<std::mutex> lock(g_timing.stack_mu);
      g_timing.stack_seq = seq;
      g_timing.stack = std::move(stack);
    }
    g_timing.capturing_seq.store(0, std::memory_order_seq_cst);
  }
  // Dekker with begin (running_* stores, then a seq_cst read of deadline_armed): either we see the new
  // call here and arm for it, or its begin sees the flag down and arms itself.
  g_timing.deadline_armed.store(false, std::memory_order_seq_cst);
  if (!ctx || !g_timing.active.load(std::memory_order_acquire)) return;
  begin = g_timing.running_begin.load(std::memory_order_seq_cst);
  const uint64_t now_seq = g_timing.running_seq.load(std::memory_order_seq_cst);
  if (begin == 0) return;
  bool captured;
  {
    std::lock_guard<std::mutex> lock(g_timing.stack_mu);
    captured = g_timing.stack_seq == now_seq;
  }
  if (!captured) ArmIfIdle(ctx, begin + lag);  // a call already caught waits for its end; the next one arms
}

jlong Begin(JNIEnv*) {
  Inside guard;
  if (!guard.active()) return 0;
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  if (!ctx) return 0;
  const uint64_t begin = hook::MonotonicNs();
  // Only this thread writes running_*: a plain increment, then one seq_cst store (the full fence of the
  // Dekker pair with OnDeadline, and the release that publishes the sequence number before the start).
  g_timing.running_seq.store(g_timing.running_seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  g_timing.running_begin.store(begin, std::memory_order_seq_cst);
  if (!g_timing.deadline_armed.load(std::memory_order_seq_cst)) {
    ArmIfIdle(ctx, begin + g_timing.lag_ns.load(std::memory_order_relaxed));
  }
  return static_cast<jlong>(begin);
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

jint End(JNIEnv* env, jlong token, jint name_key, jstring handler_class, jboolean keep) {
  const uint64_t end = hook::MonotonicNs();
  const uint64_t seq = g_timing.running_seq.load(std::memory_order_relaxed);
  g_timing.running_begin.store(0, std::memory_order_release);
  Inside guard;
  if (!guard.active() || token <= 0) return 0;  // begun before the monitor started, or it stopped meanwhile
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  if (!ctx) return 0;
  const uint64_t begin = static_cast<uint64_t>(token);
  const uint64_t dur = end - begin;
  g_timing.calls.fetch_add(1, std::memory_order_relaxed);
  const uint64_t lag_ns = g_timing.lag_ns.load(std::memory_order_relaxed);
  const uint32_t epoch = g_timing.epoch.load(std::memory_order_relaxed);
  jint key = name_key;
  char name_buf[hook::StringTable::kMaxLength + 1];
  std::string_view name;
  const bool known = key > 0 && (static_cast<uint32_t>(key) >> kIdBits) == epoch;
  if (!known || dur >= lag_ns || !ctx->timeline) name = HandlerName(env, handler_class, name_buf);

  if (ctx->timeline) {
    hook::Timeline& tl = *ctx->timeline;
    const uint16_t id = known ? static_cast<uint16_t>(key & ((1 << kIdBits) - 1)) : tl.Intern(name);
    // An overflowing table is not cached: the name gets another chance on the next call.
    key = id == hook::StringTable::kOverflow || id == hook::StringTable::kNone ? 0 : NameKey(epoch, id);
    hook::Event e;
    e.ts_ns = begin;
    e.dur_ns = dur;
    e.tid = ctx->main_tid ? ctx->main_tid : static_cast<uint32_t>(hook::CurrentTid());
    e.kind = hook::EventKind::kIdleHandler;
    e.name = id;
    e.args[0] = hook::EventArg::Int(g_timing.keep_key.load(std::memory_order_relaxed), keep ? 1 : 0);
    tl.Append(e);
  }

  if (dur < lag_ns) return key;
  g_timing.lags.fetch_add(1, std::memory_order_relaxed);
  hook::Report r;
  r.type = "idle_lag";
  r.monitor = "idle";
  r.ts_ns = begin;
  r.dur_ns = dur;
  r.fields.push_back(hook::ReportField::String("handler", std::string(name)));
  r.fields.push_back(hook::ReportField::Bool("keep", keep));
  r.fields.push_back(hook::ReportField::Int("lag_ms", static_cast<int64_t>(lag_ns / hook::kNsPerMs)));
  // The watchdog may be capturing this call's stack right now (it fired just before the end): wait for it
  // rather than report without it. It captures one thread's stack: milliseconds at most.
  for (int i = 0; i < 100000 && g_timing.capturing_seq.load(std::memory_order_seq_cst) == seq; ++i) sched_yield();
  {
    std::lock_guard<std::mutex> lock(g_timing.stack_mu);
    if (g_timing.stack_seq == seq && g_timing.stack.ok) {
      r.stack = hook::SplitStackFrames(g_timing.stack.text);
      r.stack_captured_while_stuck = true;
    } else {
      r.fields.push_back(hook::ReportField::String(
          "stack_error", g_timing.stack_seq == seq ? g_timing.stack.error : "the lag deadline did not fire"));
    }
  }
  ctx->Submit(r);
  return key;
}

const jni::IdleHooks kHooks = {Begin, End};

}  // namespace

void ActivateTiming(const hook::PluginContext* context, int32_t lag_ms) {
  g_timing.context.store(context, std::memory_order_release);
  // A deadline of an earlier activation may have been dropped by a watchdog Stop without firing: start
  // over (at worst an old one still armed fires once more and finds nothing to do).
  g_timing.deadline_armed.store(false, std::memory_order_seq_cst);
  uint32_t epoch = (g_timing.epoch.load(std::memory_order_relaxed) + 1) & kEpochMask;
  g_timing.epoch.store(epoch == 0 ? 1 : epoch, std::memory_order_relaxed);
  g_timing.keep_key.store(context && context->timeline ? context->timeline->Intern("keep") : 0,
                          std::memory_order_relaxed);
  RetuneTiming(lag_ms);
  g_timing.active.store(true, std::memory_order_release);
  jni::SetIdleHooks(&kHooks);
}

void RetuneTiming(int32_t lag_ms) {
  g_timing.lag_ns.store(static_cast<uint64_t>(lag_ms > 0 ? lag_ms : 1) * hook::kNsPerMs, std::memory_order_relaxed);
}

void DeactivateTiming() {
  jni::SetIdleHooks(nullptr);
  g_timing.active.store(false, std::memory_order_release);
  // The sticky deadline: removed if still armed; a callback running now sees `active` false and does not
  // re-arm. deadline_armed is left as it is only if the callback owns it (it clears it itself).
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  if (ctx && ctx->watchdog && ctx->watchdog->Disarm(kDeadlineId)) {
    g_timing.deadline_armed.store(false, std::memory_order_seq_cst);
  }
  // begin/end are short (no Java, no blocking): this waits microseconds at most.
  while (g_timing.inside.load(std::memory_order_acquire) != 0) sched_yield();
  g_timing.context.store(nullptr, std::memory_order_release);
}

IdleCounters TimingCounters() {
  return {g_timing.calls.load(std::memory_order_relaxed), g_timing.lags.load(std::memory_order_relaxed),
          g_timing.deadline_arms.load(std::memory_order_relaxed)};
}

}  // namespace jp::idle
