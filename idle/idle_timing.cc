#include "idle/idle_timing.h"

#include <sched.h>

#include <atomic>
#include <mutex>

#include "hook/clock.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/report.h"

namespace jp::idle {
namespace {

// Deadline ids of this monitor: a tag in the top bits, the call's start time below (calls never overlap:
// idle handlers run one after another on the main thread).
constexpr uint64_t kDeadlineTag = 0x1D1Eull << 48;
constexpr uint64_t kTimeMask = (1ull << 48) - 1;

struct Timing {
  std::atomic<bool> active{false};
  std::atomic<int> inside{0};  // begin/end calls currently in the code below
  std::atomic<const hook::PluginContext*> context{nullptr};
  std::atomic<uint64_t> lag_ns{200 * hook::kNsPerMs};
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> lags{0};

  std::mutex stack_mu;  // the stack the watchdog captured for the call still running
  uint64_t stack_call = 0;
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

uint64_t DeadlineId(uint64_t begin_ns) { return kDeadlineTag | (begin_ns & kTimeMask); }

// Watchdog thread, while the handler still runs: keep the stack for the report end will write.
void OnLag(const hook::DeadlineFired& fired, void*) {
  std::lock_guard<std::mutex> lock(g_timing.stack_mu);
  g_timing.stack_call = fired.id;
  g_timing.stack = fired.stack ? *fired.stack : hook::StackSample{};
  if (!fired.stack) g_timing.stack.error = "no stack: deadline fired without capture";
}

jlong Begin(JNIEnv*, jstring) {
  Inside guard;
  if (!guard.active()) return 0;
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  const uint64_t begin = hook::MonotonicNs();
  if (ctx && ctx->watchdog) {
    ctx->watchdog->Arm(DeadlineId(begin), begin + g_timing.lag_ns.load(std::memory_order_relaxed), OnLag, nullptr,
                       hook::Watchdog::kCaptureStack);
  }
  return static_cast<jlong>(begin);
}

void End(JNIEnv* env, jlong token, jstring handler_class, jboolean keep) {
  const uint64_t end = hook::MonotonicNs();
  Inside guard;
  if (!guard.active() || token <= 0) return;  // begun before the monitor started, or it stopped meanwhile
  const hook::PluginContext* ctx = g_timing.context.load(std::memory_order_acquire);
  if (!ctx) return;
  const uint64_t begin = static_cast<uint64_t>(token);
  const uint64_t dur = end - begin;
  const uint64_t id = DeadlineId(begin);
  // true: the deadline had not fired, so no stack was taken; false: it fired (or is firing right now).
  const bool disarmed = ctx->watchdog && ctx->watchdog->Disarm(id);
  g_timing.calls.fetch_add(1, std::memory_order_relaxed);
  const std::string name = jni::ToStdString(env, handler_class);

  if (ctx->timeline) {
    hook::Event e;
    e.ts_ns = begin;
    e.dur_ns = dur;
    e.tid = ctx->main_tid ? ctx->main_tid : static_cast<uint32_t>(hook::CurrentTid());
    e.kind = hook::EventKind::kIdleHandler;
    e.name = ctx->timeline->Intern(name);
    e.args[0] = hook::EventArg::Int(ctx->timeline->Intern("keep"), keep ? 1 : 0);
    ctx->timeline->Append(e);
  }

  const uint64_t lag_ns = g_timing.lag_ns.load(std::memory_order_relaxed);
  if (dur < lag_ns) return;
  g_timing.lags.fetch_add(1, std::memory_order_relaxed);
  hook::Report r;
  r.type = "idle_lag";
  r.monitor = "idle";
  r.ts_ns = begin;
  r.dur_ns = dur;
  r.fields.push_back(hook::ReportField::String("handler", name));
  r.fields.push_back(hook::ReportField::Bool("keep", keep));
  r.fields.push_back(hook::ReportField::Int("lag_ms", static_cast<int64_t>(lag_ns / hook::kNsPerMs)));
  {
    // The deadline may be firing right now (Disarm lost the race): the stack is then being stored, so
    // wait for the callback rather than report without it.
    std::unique_lock<std::mutex> lock(g_timing.stack_mu);
    for (int i = 0; !disarmed && i < 10000 && g_timing.stack_call != id; ++i) {
      lock.unlock();
      sched_yield();
      lock.lock();
    }
    if (g_timing.stack_call == id && g_timing.stack.ok) {
      r.stack = hook::SplitStackFrames(g_timing.stack.text);
      r.stack_captured_while_stuck = true;
    } else {
      r.fields.push_back(hook::ReportField::String(
          "stack_error", g_timing.stack_call == id ? g_timing.stack.error : "the lag deadline did not fire"));
    }
  }
  ctx->Submit(r);
}

const jni::IdleHooks kHooks = {Begin, End};

}  // namespace

void ActivateTiming(const hook::PluginContext* context, int32_t lag_ms) {
  g_timing.context.store(context, std::memory_order_release);
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
  // begin/end are short (no Java, no blocking): this waits microseconds at most.
  while (g_timing.inside.load(std::memory_order_acquire) != 0) sched_yield();
  g_timing.context.store(nullptr, std::memory_order_release);
}

IdleCounters TimingCounters() {
  return {g_timing.calls.load(std::memory_order_relaxed), g_timing.lags.load(std::memory_order_relaxed)};
}

}  // namespace jp::idle
