// The records of finished events, off the app's thread: built from what the finish side pushed into the
// FinishedRing, appended to the timeline by the watchdog's drain, and lent to reports and exports until
// then (see kDrainPeriodNs in input_tracker.h for when the drain runs and what a kill loses).
#include "hook/report_sink.h"
#include "hook/timeline.h"
#include "input/input_tracker.h"

namespace jp::input {

hook::Event InputTracker::RecordOf(const FinishedEvent& d) const noexcept {
  // At most hook::kMaxArgs arguments; the most useful come first.
  static_assert(hook::kMaxArgs >= 4, "an input record carries fd, seq, dispatch_ms, consume_ms");
  const EventIdentView id = IdentViewOf(d.ident);
  hook::Event e;
  e.ts_ns = d.read_ns;
  e.dur_ns = d.dur_ns;
  e.tid = id.tid;
  if (id.fd_mode != 0) {
    e.kind = hook::EventKind::kInputMotion;
    e.name = name_fd_timed_;
    e.args[0] = hook::EventArg::Int(key_fd_, id.fd);
    e.args[1] = hook::EventArg::String(key_mode_, value_fd_);
    return e;
  }
  e.kind = id.type == EventType::kKey ? hook::EventKind::kInputKey : hook::EventKind::kInputMotion;
  // action_index is validated by the decoder (ActionIndex); the bound check guards a torn lent copy only.
  e.name = id.action_index >= 0 && id.action_index < kActionIndexCount ? action_names_[id.action_index] : name_fd_timed_;
  e.args[0] = hook::EventArg::Int(key_fd_, id.fd);
  e.args[1] = hook::EventArg::Int(key_seq_, id.seq);
  // ns -> ms by multiplying by 1e-6 (the value may differ from the quotient in the last bit, far below the
  // clock's own bound); kept from when this ran on the app's thread, so records stay bit-identical. The
  // factor is a member set by Enable, not a constant: a constant is loaded from .rodata, and this drain
  // runs all the time, which kept the library's first segment resident after start had given it back.
  const double kMsPerNs = ms_per_ns_;
  const uint64_t event_time = static_cast<uint64_t>(d.event_time_ns);
  e.args[2] = hook::EventArg::Double(
      key_dispatch_, d.read_ns > event_time ? static_cast<double>(d.read_ns - event_time) * kMsPerNs : 0.0);
  if (d.consume_time_ns > 0) {
    e.args[3] = hook::EventArg::Double(key_consume_, static_cast<double>(d.consume_time_ns - d.event_time_ns) * kMsPerNs);
  }
  return e;
}

uint64_t InputTracker::DrainFinished() {
  hook::Timeline* tl = timeline_;
  if (tl == nullptr) return 0;  // never enabled: nothing was pushed
  return finished_.Drain(ring_producer_, [&](const FinishedEvent& d) { tl->Append(RecordOf(d)); });
}

void InputTracker::LendFinished(uint64_t, bool, std::vector<hook::Event>* out, void* arg) {
  const auto* self = static_cast<const InputTracker*>(arg);
  std::vector<FinishedEvent> pending;
  self->finished_.Pending(self->ring_producer_, &pending);
  for (const FinishedEvent& d : pending) out->push_back(self->RecordOf(d));
}

}  // namespace jp::input
