// The input monitor's watchdog-thread side: the monitor deadline's scan of the pending table (an event
// still unfinished at lag_ms: keep the stack captured while stuck; at anr_ms: input_anr right away), then
// re-arming for the next event that will come due; and, once a late event is finished, its touch_lag /
// key_lag with the stuck-time stack. Both deadlines also drain the finished ring (finished_records.cc). Reports allocate and render JSON, which is why none of this runs on
// the hooked paths.
#include <fcntl.h>

#include <cerrno>
#include <cstdio>

#include "hook/clock.h"
#include "hook/report.h"
#include "input/input_tracker.h"

namespace jp::input {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace

bool InputTracker::EnterCallback() noexcept {
  callback_pass_ = gate_.EnterShared(gate_.own_flag());
  if (callback_pass_.open) return true;
  gate_.Leave(callback_pass_);
  return false;
}

void InputTracker::LeaveCallback() noexcept { gate_.Leave(callback_pass_); }

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

void InputTracker::OnMonitorDeadline(const hook::DeadlineFired& fired, void* arg) {
  auto* self = static_cast<InputTracker*>(arg);
  if (!self->EnterCallback()) return;
  self->deadline_scans_.fetch_add(1, std::memory_order_relaxed);
  // This deadline is no longer armed. If it is still the one hot paths rely on, say so before the scan,
  // and fence: an event published by a hot path that still saw it armed is in the scan below, one
  // published later sees nothing armed and arms for itself. (If a hot path already replaced it by an
  // earlier one, that one stays in charge and this scan is just an extra look.)
  uint64_t mine = fired.deadline_ns;
  self->armed_due_ns_.compare_exchange_strong(mine, UINT64_MAX, std::memory_order_seq_cst);
  self->gate_.fence().Heavy();
  uint64_t next_due = self->ScanPending();
  // Every monitor deadline is also the finished ring's drain (input_tracker.h, kDrainPeriodNs): after the
  // reset and the fence above, so a push this drain misses sees no deadline armed and arms one.
  const uint64_t drained = self->DrainFinished();
  self->SweepFinished();
  // While the owner's events come (this drain had records of them), the next deadline is armed here, the
  // shorter of lag_ms and the drain period from now, even with nothing pending: otherwise the first read
  // or push after a scan that left none armed armed one itself, on the app's main thread (ArmEarlier and
  // the watchdog's Arm: in the demo ~1 per second of its ~110 round trips, 0.1-0.3 us/s in situ). A read
  // after now is due a lag after it and a push's drain a drain period after it, both later than this, so
  // neither arms. When the events stop, the scan after the last drain has nothing to drain and arms
  // nothing more: the watchdog sleeps again.
  if (drained > 0) {
    const uint64_t lag = self->lag_ns_.load(std::memory_order_relaxed);
    const uint64_t keep_going = hook::MonotonicNs() + (lag < kDrainPeriodNs ? lag : kDrainPeriodNs);
    if (keep_going < next_due) next_due = keep_going;
  }
  if (next_due != UINT64_MAX) self->LowerDeadline(next_due);
  self->LeaveCallback();
}

uint64_t InputTracker::ScanPending() {
  const uint64_t now = hook::MonotonicNs();
  const uint64_t lag = lag_ns_.load(std::memory_order_relaxed);
  const uint64_t anr = anr_ns_.load(std::memory_order_relaxed);
  uint64_t next_due = UINT64_MAX;
  struct Overdue {
    int index;
    uint32_t word;   // the occupant's state word when seen pending
    uint32_t marks;  // its marks then
  };
  Overdue lagged[PendingEvents::kSlots], anred[PendingEvents::kSlots];
  int n_lagged = 0, n_anred = 0;
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    const uint32_t w = pending_.Word(i);
    if (StateOf(w) != kPending) continue;
    const uint32_t m = pending_.Marks(i, w);
    // read_ns may belong to a newer occupant by now: the re-check of the word below throws such a look away.
    const uint64_t read_ns = pending_.at(i).read_ns;
    if ((m & kLagFired) == 0) {
      if (read_ns + lag <= now) {
        lagged[n_lagged++] = {i, w, m};
      } else if (read_ns + lag < next_due) {
        next_due = read_ns + lag;
      }
    } else if ((m & kAnrReported) == 0) {
      if (read_ns + anr <= now) {
        anred[n_anred++] = {i, w, m};
      } else if (read_ns + anr < next_due) {
        next_due = read_ns + anr;
      }
    }
  }
  if (n_lagged == 0 && n_anred == 0) return next_due;
  // One stack for everything overdue: the main thread is stuck in one place.
  const hook::StackSample stack = context_->watchdog->CaptureMainThreadStack();
  for (int k = 0; k < n_lagged; ++k) {
    stacks_[static_cast<size_t>(lagged[k].index)] = stack;
    pending_.SetMarks(lagged[k].index, lagged[k].word, lagged[k].marks | kLagFired | kStackCaptured);
  }
  std::vector<hook::Report> anr_reports;
  for (int k = 0; k < n_anred; ++k) {
    const PendingEvent& e = pending_.at(anred[k].index);
    // The system's own ANR is about to fire and the process may not live to send FINISHED: say it now.
    const uint64_t at = hook::MonotonicNs();
    hook::Report r = BuildReport(e, "input_anr", at > e.read_ns ? at - e.read_ns : 0);
    r.fields.push_back(hook::ReportField::Bool("finished", false));
    r.fields.push_back(hook::ReportField::Int("anr_ms", static_cast<int64_t>(anr / hook::kNsPerMs)));
    if (stack.ok) {
      r.stack = hook::SplitStackFrames(stack.text);
      r.stack_captured_while_stuck = true;
    } else {
      r.fields.push_back(hook::ReportField::String("stack_error", stack.error));
    }
    anr_reports.push_back(std::move(r));
    pending_.SetMarks(anred[k].index, anred[k].word, anred[k].marks | kAnrReported);
  }
  // Pairs with the finisher's Light(): a slot still in the word we saw has not been taken, and its taker
  // will see our marks; a slot whose word moved on may have been taken without them.
  gate_.fence().Heavy();
  for (int k = 0; k < n_lagged; ++k) {
    // Taken meanwhile: the finisher decides on its own measure (the stack stays for its report).
    if (pending_.Word(lagged[k].index) != lagged[k].word) continue;
    const uint64_t anr_due = pending_.at(lagged[k].index).read_ns + anr;
    if (anr_due < next_due) next_due = anr_due;
  }
  for (int k = 0; k < n_anred; ++k) {
    if (pending_.Word(anred[k].index) == anred[k].word) {
      // Still the same occupant, still unfinished: the fields the report was built from were stable. But
      // a channel the app has closed meanwhile is no ANR: a receiver disposed mid-gesture (its window went
      // away) never finishes what it had read (AOSP NativeInputEventReceiver::dispose; finishInputEvent
      // after it only logs), and the dispatcher dropped that connection with its wait queue. Its fd
      // closed: counted as abandoned, not reported. (An fd number already reused by a new channel still
      // reads as open: that case is still reported.)
      if (fcntl(pending_.at(anred[k].index).fd, F_GETFD) == -1 && errno == EBADF) {
        abandoned_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      anr_reports_.fetch_add(1, std::memory_order_relaxed);
      context_->Submit(anr_reports[static_cast<size_t>(k)]);
    } else {
      pending_.SetMarks(anred[k].index, anred[k].word, anred[k].marks);  // finished after all: no ANR
    }
  }
  return next_due;
}

void InputTracker::OnReportDue(const hook::DeadlineFired& fired, void* arg) {
  auto* self = static_cast<InputTracker*>(arg);
  if (!self->EnterCallback()) return;
  int index;
  uint32_t gen;
  if (DecodeReportId(fired.id, &index, &gen)) {
    const uint32_t w = self->pending_.Word(index);
    if (GenerationOf(w) == gen && StateOf(w) == kFinished) self->ReportFinished(index);
  }
  self->DrainFinished();  // awake anyway: the records of the events before it need not wait
  self->SweepFinished();
  self->LeaveCallback();
}

void InputTracker::SweepFinished() {
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    if (StateOf(pending_.Word(i)) == kFinished) ReportFinished(i);
  }
}

void InputTracker::ReportFinished(int index) {
  PendingEvent& e = pending_.at(index);
  const uint32_t word = pending_.Word(index);  // acquire: the finisher's fields are visible
  const uint32_t flags = pending_.Marks(index, word);
  const uint64_t finish = e.finish_ns;
  const uint64_t dur = finish > e.read_ns ? finish - e.read_ns : 0;
  if (dur > lag_ns_.load(std::memory_order_relaxed)) {
    const char* type = !e.fd_mode && e.type == EventType::kKey ? "key_lag" : "touch_lag";
    hook::Report r = BuildReport(e, type, dur);
    if (e.consume_time_ns > 0) r.fields.push_back(hook::ReportField::Double("consume_ms", Ms(e.consume_time_ns - e.event_time_ns)));
    if (!e.fd_mode) r.fields.push_back(hook::ReportField::Bool("handled", e.handled));
    r.fields.push_back(hook::ReportField::Bool("anr_reported", (flags & kAnrReported) != 0));
    hook::StackSample& stack = stacks_[static_cast<size_t>(index)];
    if (flags & kStackCaptured) {
      if (stack.ok) {
        r.stack = hook::SplitStackFrames(stack.text);
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
