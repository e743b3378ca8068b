#include "looper/dispatch_timing.h"

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "hook/clock.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/report.h"
#include "looper/dispatch_line.h"
#include "looper/frame_stats.h"
#include "looper/message_history.h"
#include "looper/pending_messages.h"
#include "looper/stack_samples.h"
#include "looper/timing_state.h"

namespace jp::looper {
namespace internal {
JP_CONSTINIT Timing g;

// Another thread's CPU clock from its kernel tid (what pthread_getcpuclockid computes for a pthread:
// the per-thread scheduler clock, encoded as (~tid << 3) | 6). 0 when it cannot be read.
uint64_t CpuNsOfTid(uint32_t tid) {
  if (tid == 0) return 0;
  const clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * hook::kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t MainTid(const hook::PluginContext* ctx) {
  return ctx->main_tid ? ctx->main_tid : static_cast<uint32_t>(hook::CurrentTid());
}

void AddFiredSample(const hook::DeadlineFired& fired, SampleSet* samples) {
  if (fired.stack && fired.stack->ok) {
    samples->Add(fired.stack->text, fired.stack->captured_ns ? fired.stack->captured_ns : fired.fired_ns);
  } else {
    samples->AddError(fired.stack ? fired.stack->error : "deadline fired without a stack");
  }
}

SampleNeeds NeedsAt(uint64_t elapsed_ns, const PendingSnapshot& pending, bool* anr_reported) {
  SampleNeeds n;
  n.pending = elapsed_ns >= g.lag_ns.load(std::memory_order_relaxed) && !pending.read && pending.why.empty();
  n.anr = elapsed_ns >= g.anr_ns.load(std::memory_order_relaxed) && !*anr_reported;
  if (n.anr) *anr_reported = true;
  return n;
}

void ArmNextSample(const hook::PluginContext* ctx, const hook::DeadlineFired& fired, hook::DeadlineFn fn) {
  const uint64_t interval = g.sample_interval_ns.load(std::memory_order_relaxed);
  const uint64_t now = hook::MonotonicNs();
  uint64_t next = fired.deadline_ns + interval;
  if (next <= now) next = now + interval;  // we fell behind: no burst of catch-up samples
  if (ctx->watchdog) ctx->watchdog->Arm(fired.id, next, fn, nullptr, hook::Watchdog::kCaptureStack);
}
}  // namespace internal

namespace {
using namespace internal;  // NOLINT: this file is the printer half of the timing

constexpr size_t kHistoryFrames = 24;     // frames per sample in the history (the report has them all)

// Line copy: UTF-8 can take 3 bytes per UTF-16 unit. Lines up to kWhole units are copied whole; longer
// ones as head + tail, which keeps the Handler (front) and callback + what (back).
constexpr jsize kWhole = 320;
constexpr jsize kHead = 256;
constexpr jsize kTail = 64;
constexpr size_t kLineBuf = 3 * kWhole + 1;

// The dispatch line into buf (NUL-free, returns the length); 0 when it cannot be read.
size_t CopyLine(JNIEnv* env, jstring line, char* buf) {
  const jsize n = env->GetStringLength(line);
  size_t used = 0;
  if (n <= kWhole) {
    memset(buf, 0, static_cast<size_t>(3 * n + 1));
    env->GetStringUTFRegion(line, 0, n, buf);
    used = strnlen(buf, kLineBuf);
  } else {
    memset(buf, 0, kLineBuf);
    env->GetStringUTFRegion(line, 0, kHead, buf);
    used = strnlen(buf, kLineBuf);
    env->GetStringUTFRegion(line, n - kTail, kTail, buf + used);
    used += strnlen(buf + used, kLineBuf - used);
  }
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return 0;
  }
  return used;
}

void OnSample(const hook::DeadlineFired& fired, void*);
void OnReport(const hook::DeadlineFired& fired, void*);

void Begin(JNIEnv* env, jstring line) {
  const uint64_t t0 = hook::MonotonicNs();
  const uint64_t cpu0 = ThreadCpuNs();
  Inside guard;
  if (!guard.active() || !line) return;
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!ctx) return;
  char buf[kLineBuf];
  const size_t len = CopyLine(env, line, buf);
  DispatchNames names;
  ParseDispatchLine(std::string_view(buf, len), &names);
  Dispatch d;
  d.start_ns = t0;
  d.what = names.what;
  if (ctx->timeline) {
    d.target = ctx->timeline->Intern(names.target);
    d.callback = ctx->timeline->Intern(names.callback);
  }
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (g.locked->cur.running) g.unmatched.fetch_add(1, std::memory_order_relaxed);  // its end was never printed
    seq = ++g.locked->cur.seq & kSeqMask;
    g.locked->cur.running = true;
    g.locked->cur.d = d;
    g.locked->cur.start_cpu_ns = cpu0;
    g.locked->cur.samples.Clear();
    g.locked->cur.pending = PendingSnapshot();
    g.locked->cur.anr_reported = false;
  }
  if (ctx->watchdog) {
    ctx->watchdog->Arm(kSampleTag | seq, t0 + g.sample_after_ns.load(std::memory_order_relaxed), OnSample, nullptr,
                       hook::Watchdog::kCaptureStack);
  }
}

void End(JNIEnv*) {
  const uint64_t t1 = hook::MonotonicNs();
  const uint64_t cpu1 = ThreadCpuNs();
  Inside guard;
  if (!guard.active()) return;
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!ctx) return;
  Dispatch d;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (!g.locked->cur.running) {
      g.unmatched.fetch_add(1, std::memory_order_relaxed);  // begun before we were installed
      return;
    }
    g.locked->cur.running = false;
    d = g.locked->cur.d;
    d.wall_ns = t1 - d.start_ns;
    d.cpu_ns = cpu1 > g.locked->cur.start_cpu_ns ? cpu1 - g.locked->cur.start_cpu_ns : 0;
    seq = g.locked->cur.seq & kSeqMask;
  }
  if (ctx->watchdog) ctx->watchdog->Disarm(kSampleTag | seq);  // a sample firing now sees running == false
  g.messages.fetch_add(1, std::memory_order_relaxed);

  if (ctx->timeline) {
    hook::Event e;
    e.ts_ns = d.start_ns;
    e.dur_ns = d.wall_ns;
    e.tid = MainTid(ctx);
    e.kind = hook::EventKind::kLooperMessage;
    e.name = d.callback ? d.callback : d.target;
    e.args[0] = hook::EventArg::Int(g.key_what, d.what);
    e.args[1] = hook::EventArg::Double(g.key_cpu, static_cast<double>(d.cpu_ns) / 1e6);
    e.args[2] = hook::EventArg::String(g.key_target, d.target);
    e.args[3] = hook::EventArg::String(g.key_callback, d.callback);
    ctx->timeline->Append(e);
  }

  const bool lag = d.wall_ns >= g.lag_ns.load(std::memory_order_relaxed);
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.locked->history.Add(d, &g.locked->cur.samples);  // medium and slow messages keep their samples (moved, not copied)
    if (lag) {
      if (g.locked->to_report_count < kReportQueue) {
        Finished& f = g.locked->to_report[g.locked->to_report_count++];
        f.d = d;
        std::swap(f.pending, g.locked->cur.pending);
        f.anr_reported = g.locked->cur.anr_reported;
        f.source = ReportSource::kPrinter;
        f.cpu_window_start_ns = 0;
        queued = true;
      } else {
        g.reports_dropped.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  if (queued && ctx->watchdog && !ctx->watchdog->Arm(kReportTag | seq, t1, OnReport, nullptr)) {
    g.reports_dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void PublishFrameCounters() {
  g.frame_count.store(g.frames.frames(), std::memory_order_relaxed);
  g.dropped_frames.store(g.frames.dropped(), std::memory_order_relaxed);
  g.janky_frames.store(g.frames.janky_frames(), std::memory_order_relaxed);
  g.refresh_ns.store(g.frames.interval_ns(), std::memory_order_relaxed);
}

// FrameTicker.nativeFrame: the first frame of a run (after start or after the ticker was parked).
void Frame(JNIEnv*, jlong frame_time_nanos) {
  Inside guard;
  if (!guard.active() || frame_time_nanos <= 0) return;
  g.frames.StartRun(static_cast<uint64_t>(frame_time_nanos));
  PublishFrameCounters();
}

// FrameTicker.nativeFrames: `frames` frames since the previous call, the last at frame_time_nanos. A span
// with dropped frames becomes a `frame` record at its last frame.
void Frames(JNIEnv*, jlong frame_time_nanos, jint frames) {
  Inside guard;
  if (!guard.active() || frame_time_nanos <= 0 || frames <= 0) return;
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!ctx) return;
  const FrameGap gap = g.frames.OnFrames(static_cast<uint64_t>(frame_time_nanos), static_cast<uint32_t>(frames));
  PublishFrameCounters();
  if (!gap.valid || gap.dropped == 0 || !ctx->timeline) return;
  hook::Event e;
  e.ts_ns = static_cast<uint64_t>(frame_time_nanos);
  e.tid = MainTid(ctx);
  e.kind = hook::EventKind::kFrame;
  e.name = g.name_frame;
  e.args[0] = hook::EventArg::Int(g.key_dropped, gap.dropped);
  e.args[1] = hook::EventArg::Double(g.key_gap, static_cast<double>(gap.gap_ns) / 1e6);
  e.args[2] = hook::EventArg::Double(g.key_interval, static_cast<double>(gap.interval_ns) / 1e6);
  ctx->timeline->Append(e);
}

void Parked(JNIEnv*, jboolean parked) { SetTickerParked(parked == JNI_TRUE); }

const jni::LooperHooks kHooks = {Begin, End, Frame, Frames, Parked};

}  // namespace

// ---- reports (watchdog thread), for both sources ----
namespace internal {
namespace {

JNIEnv* WatchdogEnv() {
  std::string why;
  return jni::Vm() ? jni::AttachedEnv(jni::Vm(), "jankprobe-watchdog", &why) : nullptr;
}

}  // namespace

PendingSnapshot ReadPending() {
  JNIEnv* env = WatchdogEnv();
  if (!env) {
    PendingSnapshot p;
    p.why = "the watchdog thread cannot attach to the Java VM";
    return p;
  }
  return ReadPendingMessages(env);
}

namespace {
std::string HistoryJson(const hook::PluginContext* ctx, uint64_t now_ns) {
  JsonWriter w;
  static const hook::StringTable kNoStrings;
  std::lock_guard<std::mutex> lock(g.mu);
  g.locked->history.WriteJson(&w, now_ns, ctx->timeline ? ctx->timeline->strings() : kNoStrings, kHistoryFrames);
  return w.Take();
}

std::string PendingJson(const PendingSnapshot& p) {
  JsonWriter w;
  WritePending(&w, p);
  return w.Take();
}

std::string SamplesJson(const SampleSet& samples, uint64_t start_ns, size_t max_frames) {
  JsonWriter w;
  WriteSamples(&w, samples, start_ns, max_frames);
  return w.Take();
}

std::string Name(const hook::PluginContext* ctx, uint16_t id) {
  return ctx->timeline ? std::string(ctx->timeline->strings().Lookup(id)) : std::string();
}

}  // namespace

void SubmitReport(const hook::PluginContext* ctx, const char* type, const Dispatch& d, bool still_running,
                  const SampleSet& samples, const PendingSnapshot& pending, uint64_t now_ns, ReportSource source,
                  uint64_t cpu_window_start_ns) {
  const size_t max_frames = static_cast<size_t>(g.max_frames.load(std::memory_order_relaxed));
  hook::Report r;
  r.type = type;
  r.monitor = "looper";
  r.ts_ns = d.start_ns;
  r.dur_ns = d.wall_ns;
  if (source == ReportSource::kPrinter) {
    r.fields.push_back(hook::ReportField::String("source", "printer"));
    r.fields.push_back(hook::ReportField::String("target", Name(ctx, d.target)));
    r.fields.push_back(hook::ReportField::String("callback", Name(ctx, d.callback)));
    r.fields.push_back(hook::ReportField::Int("what", d.what));
    r.fields.push_back(hook::ReportField::Double("wall_ms", static_cast<double>(d.wall_ns) / 1e6));
    r.fields.push_back(hook::ReportField::Double("cpu_ms", static_cast<double>(d.cpu_ns) / 1e6));
  } else {
    // The gap between two epoll waits: no message identity (the culprit is the samples' key frame), and
    // CPU only from the first stack sample on (the main thread's clock is read there, not per message).
    r.fields.push_back(hook::ReportField::String("source", "poll"));
    r.fields.push_back(hook::ReportField::String("identity", "unknown: timed from the Looper's epoll waits"));
    r.fields.push_back(hook::ReportField::Double("wall_ms", static_cast<double>(d.wall_ns) / 1e6));
    if (cpu_window_start_ns > d.start_ns) {
      const uint64_t end = d.start_ns + d.wall_ns;
      r.fields.push_back(hook::ReportField::Double("cpu_ms_since_first_sample", static_cast<double>(d.cpu_ns) / 1e6));
      r.fields.push_back(hook::ReportField::Double(
          "wall_ms_since_first_sample", static_cast<double>(end > cpu_window_start_ns ? end - cpu_window_start_ns : 0) / 1e6));
    }
  }
  r.fields.push_back(hook::ReportField::Bool("still_running", still_running));
  r.fields.push_back(hook::ReportField::Int(
      "threshold_ms", static_cast<int64_t>((std::strcmp(type, "anr_risk") == 0 ? g.anr_ns : g.lag_ns).load() / hook::kNsPerMs)));
  const uint64_t refresh = g.refresh_ns.load(std::memory_order_relaxed);
  const uint64_t interval = refresh ? refresh : FrameStats::kDefaultIntervalNs;
  // Frames the main thread could not draw while this message held it (the ticker's count comes later).
  r.fields.push_back(hook::ReportField::Int("frames_lost_estimate", static_cast<int64_t>(d.wall_ns / interval)));
  // The refresh interval that estimate used (the frame ticker's estimate then, or 60 Hz before it had one):
  // a reader can tell a display's rate from a starved thread's reading (every recent frame 2 vsyncs apart).
  r.fields.push_back(hook::ReportField::Double("refresh_ms", static_cast<double>(interval) / 1e6));
  r.fields.push_back(hook::ReportField::Int("sample_count", samples.samples()));
  if (!samples.empty()) {
    const bool confirmed = samples.confirmed();
    r.fields.push_back(hook::ReportField::Bool("confirmed", confirmed));
    r.fields.push_back(hook::ReportField::String("verdict", confirmed ? "confirmed" : "suspected"));
    r.fields.push_back(hook::ReportField::RawJson("samples", SamplesJson(samples, d.start_ns, max_frames)));
    r.stack = hook::SplitStackFrames(samples.Dominant()->stack, max_frames);
    r.stack_captured_while_stuck = true;
  } else {
    r.fields.push_back(hook::ReportField::Bool("confirmed", false));
    r.fields.push_back(hook::ReportField::String("verdict", "suspected"));
    r.fields.push_back(hook::ReportField::String(
        "stack_error", samples.errors() ? samples.last_error() : "no stack sample was taken while it ran"));
  }
  r.fields.push_back(hook::ReportField::RawJson("pending", PendingJson(pending)));
  r.fields.push_back(hook::ReportField::RawJson("history", HistoryJson(ctx, now_ns)));
  ctx->Submit(r);
}

}  // namespace internal

namespace {

void OnSample(const hook::DeadlineFired& fired, void*) {
  Inside guard;
  if (!guard.active()) return;
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!ctx) return;
  const uint64_t seq = fired.id & kSeqMask;
  bool need_pending = false, need_anr = false;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (!g.locked->cur.running || (g.locked->cur.seq & kSeqMask) != seq) return;  // it ended meanwhile
    AddFiredSample(fired, &g.locked->cur.samples);
    const SampleNeeds needs =
        NeedsAt(fired.fired_ns - g.locked->cur.d.start_ns, g.locked->cur.pending, &g.locked->cur.anr_reported);
    need_pending = needs.pending;
    need_anr = needs.anr;
  }
  g.samples.fetch_add(1, std::memory_order_relaxed);
  if (need_pending || need_anr) {
    PendingSnapshot p = ReadPending();  // the queue the stuck message is holding back
    Dispatch d;
    SampleSet samples;
    bool still = false;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      if (g.locked->cur.running && (g.locked->cur.seq & kSeqMask) == seq) {
        still = true;
        if (need_pending) g.locked->cur.pending = p;
        d = g.locked->cur.d;
        if (need_anr) samples = g.locked->cur.samples;
      }
    }
    if (still && need_anr) {
      const uint64_t now = hook::MonotonicNs();
      d.wall_ns = now - d.start_ns;
      const uint64_t cpu_now = CpuNsOfTid(MainTid(ctx));  // the main thread's CPU clock, read from here
      {
        std::lock_guard<std::mutex> lock(g.mu);
        d.cpu_ns = cpu_now > g.locked->cur.start_cpu_ns ? cpu_now - g.locked->cur.start_cpu_ns : 0;
      }
      g.anrs.fetch_add(1, std::memory_order_relaxed);
      SubmitReport(ctx, "anr_risk", d, true, samples, p, now, ReportSource::kPrinter);
    }
    if (!still) return;
  }
  ArmNextSample(ctx, fired, OnSample);
}

void OnReport(const hook::DeadlineFired&, void*) {
  Inside guard;
  if (!guard.active()) return;
  ReportFinished();
}

}  // namespace

void internal::ReportFinished() {
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!ctx) return;
  for (;;) {
    Finished f;
    SampleSet samples;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      if (g.locked->to_report_count == 0) return;
      f.d = g.locked->to_report[0].d;
      std::swap(f.pending, g.locked->to_report[0].pending);
      f.anr_reported = g.locked->to_report[0].anr_reported;
      f.source = g.locked->to_report[0].source;
      f.cpu_window_start_ns = g.locked->to_report[0].cpu_window_start_ns;
      for (size_t i = 1; i < g.locked->to_report_count; ++i) {
        g.locked->to_report[i - 1].d = g.locked->to_report[i].d;
        std::swap(g.locked->to_report[i - 1].pending, g.locked->to_report[i].pending);
        g.locked->to_report[i - 1].anr_reported = g.locked->to_report[i].anr_reported;
        g.locked->to_report[i - 1].source = g.locked->to_report[i].source;
        g.locked->to_report[i - 1].cpu_window_start_ns = g.locked->to_report[i].cpu_window_start_ns;
      }
      --g.locked->to_report_count;
      // Its samples went into the history entry: copy them from there (newest first).
      for (size_t i = g.locked->history.size(); i-- > 0;) {
        const MessageHistory::Entry& e = g.locked->history.at(i);
        if (e.kind != MessageHistory::Kind::kFastRun && e.d.start_ns == f.d.start_ns) {
          samples = e.samples;
          break;
        }
      }
    }
    // Ended before the sampler saw it cross lag_ms: the queue is read now instead (noted in "pending").
    if (!f.pending.read && f.pending.why.empty()) {
      f.pending = ReadPending();
      if (!f.pending.read) f.pending.why += " (read after the message ended)";
    }
    const uint64_t now = hook::MonotonicNs();
    g.lags.fetch_add(1, std::memory_order_relaxed);
    SubmitReport(ctx, "message_lag", f.d, false, samples, f.pending, now, f.source, f.cpu_window_start_ns);
    if (f.d.wall_ns >= g.anr_ns.load(std::memory_order_relaxed) && !f.anr_reported) {
      g.anrs.fetch_add(1, std::memory_order_relaxed);
      SubmitReport(ctx, "anr_risk", f.d, false, samples, f.pending, now, f.source, f.cpu_window_start_ns);
    }
  }
}

// What the timeline does not hold yet (see hook::InFlightProvider). Poll source: its finished gaps are
// drained into the timeline right here, before the caller's snapshot, instead of lent as copies: a copy of
// a run of short gaps could not match the record the watchdog's drain appends later (the run may grow
// before that drain ends it), and a drain appending between the lend and the snapshot would then show the
// same gaps twice. Draining here locks mu, which in poll mode only watchdog-side code holds (drain,
// samples, report queue, history rendering), never the main thread and never across JNI or a wait: the
// wait is bounded. With running_too, the gap running right now is lent. Printer source: the message
// running now, with try_lock: its main thread holds the mutex for a few stores, and a report must never
// wait on it.
static void InFlight(uint64_t now_ns, bool running_too, std::vector<hook::Event>* out, void*) {
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (!ctx || !g.active.load(std::memory_order_acquire)) return;
  if (PollActive()) {
    DrainPollGaps();
    hook::Event running;
    if (running_too && PollRunningMessage(ctx, now_ns, &running)) out->push_back(running);
    return;
  }
  if (!running_too) return;
  std::unique_lock<std::mutex> lock(g.mu, std::try_to_lock);
  if (!lock.owns_lock() || !g.locked->cur.running) return;
  const Dispatch& d = g.locked->cur.d;
  hook::Event e;
  e.ts_ns = d.start_ns;
  e.dur_ns = now_ns > d.start_ns ? now_ns - d.start_ns : 1;
  e.tid = MainTid(ctx);
  e.kind = hook::EventKind::kLooperMessage;
  e.name = d.callback ? d.callback : d.target;
  e.args[0] = hook::EventArg::Int(g.key_what, d.what);
  e.args[1] = hook::EventArg::String(g.key_target, d.target);
  e.args[2] = hook::EventArg::String(g.key_callback, d.callback);
  e.args[3] = hook::EventArg::Int(g.key_running, 1);
  out->push_back(e);
}

void ActivateTiming(const hook::PluginContext* context, const Config& config) {
  if (context->timeline) {
    hook::Timeline* t = context->timeline;
    g.key_what = t->Intern("what");
    g.key_cpu = t->Intern("cpu_ms");
    g.key_target = t->Intern("target");
    g.key_callback = t->Intern("callback");
    g.key_dropped = t->Intern("dropped");
    g.key_gap = t->Intern("gap_ms");
    g.key_interval = t->Intern("interval_ms");
    g.name_frame = t->Intern("frame");
    g.key_running = t->Intern("still_running");
    g.key_source = t->Intern("source");
    g.value_poll = t->Intern("poll");
    g.name_poll = t->Intern("dispatch (poll: no message identity)");
    g.name_run = t->Intern("looper.run");
    g.key_count = t->Intern("count");
    g.key_busy_us = t->Intern("busy_us");
  }
  if (context->reports) context->reports->AddInFlightProvider(&InFlight, nullptr);
  {
    std::lock_guard<std::mutex> lock(g.mu);
    // The first start pays for the history pool; later ones reuse it (never freed: see timing_state.h).
    if (!g.locked) g.locked = new Locked();
    Locked& l = *g.locked;
    l.cur = Current();
    l.history.Clear();
    for (Finished& f : l.to_report) f = Finished();
    l.to_report_count = 0;
    l.poll_cur = PollCurrent();
  }
  g.frames.Reset();
  g.context.store(context, std::memory_order_release);
  RetuneTiming(config);
  g.active.store(true, std::memory_order_release);
  jni::SetLooperHooks(&kHooks);
}

void RetuneTiming(const Config& config) {
  const LooperConfig& c = config.looper;
  auto ms = [](int32_t v) { return static_cast<uint64_t>(v > 0 ? v : 1) * hook::kNsPerMs; };
  g.lag_ns.store(ms(c.lag_ms), std::memory_order_relaxed);
  g.anr_ns.store(ms(c.anr_ms), std::memory_order_relaxed);
  g.sample_after_ns.store(ms(c.sample_after_ms), std::memory_order_relaxed);
  g.sample_interval_ns.store(ms(c.sample_interval_ms), std::memory_order_relaxed);
  RefreshPollSlowThreshold();
  g.record_min_ns.store(static_cast<uint64_t>(c.record_min_us > 0 ? c.record_min_us : 0) * 1000u,
                        std::memory_order_relaxed);
  g.max_frames.store(config.report.max_stack_frames > 0 ? config.report.max_stack_frames : 64,
                     std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g.mu);
  if (g.locked) g.locked->history.SetWindow(ms(c.history_ms), ms(c.lag_ms));  // else at activation
}

void DeactivateTiming() {
  jni::SetLooperHooks(nullptr);
  g.active.store(false, std::memory_order_release);
  const hook::PluginContext* ctx = g.context.load(std::memory_order_acquire);
  if (ctx && ctx->reports) ctx->reports->RemoveInFlightProvider(&InFlight, nullptr);
  if (ctx && ctx->watchdog) {
    uint64_t seq;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      seq = g.locked ? g.locked->cur.seq & kSeqMask : 0;
    }
    ctx->watchdog->Disarm(kSampleTag | seq);
  }
  // The poll source is stopped first (looper_monitor.cc); a gap it left open is not sampled any more.
  // Main-thread calls are short; a watchdog callback may be reading the queue through JNI (milliseconds).
  while (g.inside.load(std::memory_order_acquire) != 0) sched_yield();
  g.context.store(nullptr, std::memory_order_release);
}

LooperCounters TimingCounters() {
  LooperCounters c;
  c.messages = g.messages.load(std::memory_order_relaxed);
  c.lags = g.lags.load(std::memory_order_relaxed);
  c.anrs = g.anrs.load(std::memory_order_relaxed);
  c.samples = g.samples.load(std::memory_order_relaxed);
  c.unmatched = g.unmatched.load(std::memory_order_relaxed);
  c.reports_dropped = g.reports_dropped.load(std::memory_order_relaxed);
  c.frames = g.frame_count.load(std::memory_order_relaxed);
  c.dropped_frames = g.dropped_frames.load(std::memory_order_relaxed);
  c.janky_frames = g.janky_frames.load(std::memory_order_relaxed);
  c.refresh_ms = static_cast<double>(g.refresh_ns.load(std::memory_order_relaxed)) / 1e6;
  c.poll_ring_full = g.poll_ring_full.load(std::memory_order_relaxed);
  c.poll_gaps = PollGapsEnded();
  c.messages += c.poll_gaps;
  c.ticker_resumes = g.ticker_resumes.load(std::memory_order_relaxed);
  c.poll_rearms = g.poll_rearms.load(std::memory_order_relaxed);
  c.poll_check_arms = g.poll_check_arms.load(std::memory_order_relaxed);
  c.poll_checks = g.poll_checks.load(std::memory_order_relaxed);
  if (PollActive()) DrainPollGaps();  // the history as of now
  c.poll_run_records = g.poll_run_records.load(std::memory_order_relaxed);
  c.poll_run_gaps = g.poll_run_gaps.load(std::memory_order_relaxed);
  c.poll_folded_gaps = g.poll_folded_gaps.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g.mu);
  if (!g.locked) return c;  // never activated: no history yet
  c.history_entries = g.locked->history.size();
  c.history_evicted = g.locked->history.evicted();
  return c;
}

}  // namespace jp::looper
