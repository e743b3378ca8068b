// The input monitor's watchdog-thread side: what happens when an event is still unfinished at lag_ms
// (keep the stack captured while stuck, arm the ANR deadline), at anr_ms (input_anr right away), and once a
// late event is finished (touch_lag / key_lag with the stuck-time stack). Reports allocate and render JSON,
// which is why none of this runs on the hooked paths.
#include <cstdio>

#include "hook/clock.h"
#include "input/input_tracker.h"

namespace jp::input {
namespace {

std::vector<std::string> SplitFrames(const std::string& text) {
  std::vector<std::string> frames;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) frames.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return frames;
}

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace

bool InputTracker::EnterCallback() noexcept {
  in_flight_.fetch_add(1, std::memory_order_seq_cst);
  if (enabled_.load(std::memory_order_seq_cst)) return true;
  in_flight_.fetch_sub(1, std::memory_order_release);
  return false;
}

void InputTracker::LeaveCallback() noexcept { in_flight_.fetch_sub(1, std::memory_order_release); }

hook::Report InputTracker::BuildReport(const PendingEvent& e, const char* type, uint64_t dur_ns) const {
  hook::Report r;
  r.type = type;
  r.monitor = "input";
  r.ts_ns = e.read_ns;
  r.dur_ns = dur_ns;
  r.fields.push_back(hook::ReportField::Int("fd", e.fd));
  r.fields.push_back(hook::ReportField::String("mode", e.fd_mode ? "fd" : "seq"));
  r.fields.push_back(hook::ReportField::Double("handle_ms", Ms(static_cast<int64_t>(dur_ns))));
  if (!e.fd_mode) {
    r.fields.push_back(hook::ReportField::Int("event_seq", e.seq));
    r.fields.push_back(hook::ReportField::String("event", e.type == EventType::kKey ? "key" : "motion"));
    r.fields.push_back(hook::ReportField::String("action", ActionNameByIndex(e.action_index)));
    r.fields.push_back(hook::ReportField::Double("dispatch_ms", Ms(static_cast<int64_t>(e.read_ns) - e.event_time_ns)));
    if (e.type == EventType::kMotion) {
      r.fields.push_back(hook::ReportField::Int("pointer_count", e.pointer_count));
    }
    r.fields.push_back(hook::ReportField::String("layout", layout_ ? layout_->name : "unknown"));
  }
  return r;
}

void InputTracker::OnLagDeadline(const hook::DeadlineFired& fired, void* arg) {
  auto* self = static_cast<InputTracker*>(arg);
  if (!self->EnterCallback()) return;
  int index;
  uint32_t gen;
  if (DecodeId(fired.id, &index, &gen)) {
    PendingEvent& e = self->pending_.at(index);
    const uint32_t st = e.state.load(std::memory_order_acquire);
    if (e.generation.load(std::memory_order_relaxed) == gen && st != kFree && st != kClaimed) {
      if (fired.stack) {
        self->stacks_[static_cast<size_t>(index)] = *fired.stack;
        e.flags.fetch_or(kStackCaptured, std::memory_order_relaxed);
      }
      e.flags.fetch_or(kLagFired, std::memory_order_seq_cst);
      // Still stuck: the ANR deadline, from the same read time.
      if (e.state.load(std::memory_order_acquire) == kPending) {
        self->ArmEventDeadline(index, e.read_ns + self->anr_ns_.load(std::memory_order_relaxed), true);
      }
    }
  }
  self->SweepFinished();
  self->LeaveCallback();
}

void InputTracker::OnAnrDeadline(const hook::DeadlineFired& fired, void* arg) {
  auto* self = static_cast<InputTracker*>(arg);
  if (!self->EnterCallback()) return;
  int index;
  uint32_t gen;
  if (DecodeId(fired.id, &index, &gen)) {
    PendingEvent& e = self->pending_.at(index);
    if (e.generation.load(std::memory_order_relaxed) == gen && e.state.load(std::memory_order_acquire) == kPending) {
      // The system's own ANR is about to fire and the process may not live to send FINISHED: say it now.
      const uint64_t dur = fired.fired_ns > e.read_ns ? fired.fired_ns - e.read_ns : 0;
      hook::Report r = self->BuildReport(e, "input_anr", dur);
      r.fields.push_back(hook::ReportField::Bool("finished", false));
      r.fields.push_back(hook::ReportField::Int("anr_ms", static_cast<int64_t>(self->anr_ns_.load() / hook::kNsPerMs)));
      if (fired.stack && fired.stack->ok) {
        r.stack = SplitFrames(fired.stack->text);
        r.stack_captured_while_stuck = true;
      } else if (fired.stack) {
        r.fields.push_back(hook::ReportField::String("stack_error", fired.stack->error));
      }
      e.flags.fetch_or(kAnrReported, std::memory_order_relaxed);
      self->anr_reports_.fetch_add(1, std::memory_order_relaxed);
      self->context_->Submit(r);
    }
  }
  self->SweepFinished();
  self->LeaveCallback();
}

void InputTracker::OnReportDue(const hook::DeadlineFired& fired, void* arg) {
  auto* self = static_cast<InputTracker*>(arg);
  if (!self->EnterCallback()) return;
  int index;
  uint32_t gen;
  if (DecodeId(fired.id, &index, &gen)) {
    PendingEvent& e = self->pending_.at(index);
    if (e.generation.load(std::memory_order_relaxed) == gen && e.state.load(std::memory_order_acquire) == kFinished) {
      self->ReportFinished(index);
    }
  }
  self->SweepFinished();
  self->LeaveCallback();
}

void InputTracker::SweepFinished() {
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    if (pending_.at(i).state.load(std::memory_order_acquire) == kFinished) ReportFinished(i);
  }
}

void InputTracker::ReportFinished(int index) {
  PendingEvent& e = pending_.at(index);
  const uint32_t gen = e.generation.load(std::memory_order_relaxed);
  context_->watchdog->Disarm(EventId(index, gen));  // the ANR deadline, if the lag one armed it
  const uint64_t finish = e.finish_ns.load(std::memory_order_acquire);
  const uint64_t dur = finish > e.read_ns ? finish - e.read_ns : 0;
  const uint32_t flags = e.flags.load(std::memory_order_acquire);
  if (dur > lag_ns_.load(std::memory_order_relaxed)) {
    const char* type = !e.fd_mode && e.type == EventType::kKey ? "key_lag" : "touch_lag";
    hook::Report r = BuildReport(e, type, dur);
    if (e.consume_time_ns > 0) r.fields.push_back(hook::ReportField::Double("consume_ms", Ms(e.consume_time_ns - e.event_time_ns)));
    if (!e.fd_mode) r.fields.push_back(hook::ReportField::Bool("handled", e.handled));
    r.fields.push_back(hook::ReportField::Bool("anr_reported", (flags & kAnrReported) != 0));
    hook::StackSample& stack = stacks_[static_cast<size_t>(index)];
    if (flags & kStackCaptured) {
      if (stack.ok) {
        r.stack = SplitFrames(stack.text);
        r.stack_captured_while_stuck = stack.captured_ns < finish;
      } else {
        r.fields.push_back(hook::ReportField::String("stack_error", stack.error));
      }
    }
    lag_reports_.fetch_add(1, std::memory_order_relaxed);
    context_->Submit(r);
  }
  stacks_[static_cast<size_t>(index)] = hook::StackSample{};
  pending_.Free(index);
}

}  // namespace jp::input
