#include "input/input_tracker.h"

#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <new>

#include "hook/clock.h"

namespace jp::input {

uint32_t CachedTid() noexcept {
#if defined(__BIONIC__)
  return static_cast<uint32_t>(gettid());  // bionic reads it from the thread's own struct
#else
  static thread_local uint32_t tid __attribute__((tls_model("initial-exec"))) = 0;
  if (tid == 0) tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
#endif
}

InputTracker& InputTracker::Get() {
  // Never destroyed: proxies left in another tool's chain and late watchdog callbacks may still look.
  static InputTracker* tracker = new InputTracker();
  return *tracker;
}

// Dekker-style with Disable: seq_cst increment, then re-check enabled_; Disable clears enabled_ and then
// waits for the count to drain, so nothing is inside once Disable returns.
struct InputTracker::HotGuard {
  explicit HotGuard(InputTracker* t) : t_(t) {
    t_->in_flight_.fetch_add(1, std::memory_order_seq_cst);
    ok = t_->enabled_.load(std::memory_order_seq_cst);
  }
  ~HotGuard() { t_->in_flight_.fetch_sub(1, std::memory_order_release); }
  InputTracker* t_;
  bool ok;
};

void InputTracker::Enable(const Settings& s) {
  if (stacks_.size() != PendingEvents::kSlots) stacks_.resize(PendingEvents::kSlots);
  layout_ = s.layout;
  context_ = s.context;
  lag_ns_.store(s.lag_ns, std::memory_order_relaxed);
  anr_ns_.store(s.anr_ns, std::memory_order_relaxed);
  hook::Timeline* tl = s.context ? s.context->timeline : nullptr;
  if (tl) {
    for (int i = 0; i < kActionIndexCount; ++i) action_names_[i] = tl->Intern(ActionNameByIndex(i));
    name_fd_timed_ = tl->Intern("unknown");
    key_fd_ = tl->Intern("fd");
    key_seq_ = tl->Intern("seq");
    key_dispatch_ = tl->Intern("dispatch_ms");
    key_consume_ = tl->Intern("consume_ms");
    key_mode_ = tl->Intern("mode");
    value_fd_ = tl->Intern("fd");
  }
  channels_.Clear();
  enabled_.store(true, std::memory_order_seq_cst);
}

void InputTracker::Retune(uint64_t lag_ns, uint64_t anr_ns) {
  lag_ns_.store(lag_ns, std::memory_order_relaxed);
  anr_ns_.store(anr_ns, std::memory_order_relaxed);
}

void InputTracker::Disable() {
  enabled_.store(false, std::memory_order_seq_cst);
  // Hot paths and callbacks that got in before the flag fell: they are short (no blocking calls inside).
  while (in_flight_.load(std::memory_order_seq_cst) != 0) {
    timespec ts{0, 100000};
    nanosleep(&ts, nullptr);
  }
  hook::Watchdog* wd = context_ ? context_->watchdog : nullptr;
  for (int i = 0; i < PendingEvents::kSlots; ++i) {
    PendingEvent& e = pending_.at(i);
    const uint32_t st = e.state.load(std::memory_order_acquire);
    if (st == kFree) continue;
    const uint32_t gen = e.generation.load(std::memory_order_relaxed);
    // A deadline that fires anyway finds the tracker disabled (or, after a new Enable, a new generation).
    if (wd) {
      wd->Disarm(EventId(i, gen));
      wd->Disarm(ReportId(i, gen));
    }
    dropped_at_disable_.fetch_add(1, std::memory_order_relaxed);
    pending_.Free(i);
  }
  for (hook::StackSample& s : stacks_) s = hook::StackSample{};
  channels_.Clear();
  context_ = nullptr;
}

uint64_t InputTracker::EventId(int index, uint32_t generation) noexcept {
  return 0x4950000000000000ull | (static_cast<uint64_t>(generation) << 8) | static_cast<uint64_t>(index);
}
uint64_t InputTracker::ReportId(int index, uint32_t generation) noexcept {
  return 0x4952000000000000ull | (static_cast<uint64_t>(generation) << 8) | static_cast<uint64_t>(index);
}
bool InputTracker::DecodeId(uint64_t id, int* index, uint32_t* generation) noexcept {
  *index = static_cast<int>(id & 0xFF);
  *generation = static_cast<uint32_t>((id >> 8) & 0xFFFFFFFFull);
  return *index < PendingEvents::kSlots;
}

void InputTracker::ArmEventDeadline(int index, uint64_t deadline_ns, bool anr) noexcept {
  PendingEvent& e = pending_.at(index);
  const uint64_t id = EventId(index, e.generation.load(std::memory_order_relaxed));
  if (!context_->watchdog->Arm(id, deadline_ns, anr ? &OnAnrDeadline : &OnLagDeadline, this,
                               hook::Watchdog::kCaptureStack)) {
    arm_failures_.fetch_add(1, std::memory_order_relaxed);
  }
}

void InputTracker::OnReceived(int fd, const void* buf, ssize_t n, size_t capacity) noexcept {
  if (n <= 0 || !enabled_.load(std::memory_order_acquire)) return;
  const int saved_errno = errno;
  HotGuard guard(this);
  if (guard.ok) {
    if (layout_ == nullptr) {
      ReceivedFdMode(fd);
    } else {
      ReceivedEvent ev;
      const Verdict v = DecodeReceived(*layout_, buf, static_cast<size_t>(n), &ev);
      if (v != Verdict::kOk) {
        rejected_received_[static_cast<int>(v)].fetch_add(1, std::memory_order_relaxed);
        // Only a read of exactly an InputMessage is a channel read whose layout may be unknown to us;
        // other traffic of the library is just counted.
        if (v != Verdict::kOtherType && IsInputMessageCapacity(capacity) && channels_.NoteInvalid(fd)) {
          ReceivedFdMode(fd);
        }
      } else {
        channels_.NoteValid(fd);
        const uint64_t now = hook::MonotonicNs();
        const int index = pending_.Claim(fd, ev.seq);
        if (index < 0) {
          table_full_.fetch_add(1, std::memory_order_relaxed);
        } else {
          PendingEvent& e = pending_.at(index);
          e.fd = fd;
          e.seq = ev.seq;
          e.tid = CachedTid();
          e.action = ev.action;
          e.pointer_count = ev.pointer_count;
          e.type = ev.type;
          e.fd_mode = false;
          e.action_index = static_cast<int8_t>(ActionIndex(ev.type, ev.action));
          e.event_time_ns = ev.event_time_ns;
          e.read_ns = now;
          e.consume_time_ns = 0;
          e.handled = false;
          pending_.Publish(index);
          events_read_.fetch_add(1, std::memory_order_relaxed);
          ArmEventDeadline(index, now + lag_ns_.load(std::memory_order_relaxed), false);
        }
      }
    }
  }
  errno = saved_errno;
}

void InputTracker::ReceivedFdMode(int fd) noexcept {
  // Read -> next send: a second read before that send keeps the first one's time.
  if (pending_.HasFdMode(fd)) return;
  const uint64_t now = hook::MonotonicNs();
  const int index = pending_.Claim(fd, 0);
  if (index < 0) {
    table_full_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  PendingEvent& e = pending_.at(index);
  e.fd = fd;
  e.seq = 0;
  e.tid = CachedTid();
  e.action = 0;
  e.pointer_count = 0;
  e.type = EventType::kMotion;
  e.fd_mode = true;
  e.action_index = -1;
  e.event_time_ns = 0;
  e.read_ns = now;
  e.consume_time_ns = 0;
  e.handled = false;
  pending_.Publish(index);
  events_read_.fetch_add(1, std::memory_order_relaxed);
  ArmEventDeadline(index, now + lag_ns_.load(std::memory_order_relaxed), false);
}

void InputTracker::OnSent(int fd, const void* buf, ssize_t n) noexcept {
  // A send that failed (EAGAIN: the socket is full) finished nothing; the retry that succeeds does.
  if (n <= 0 || !enabled_.load(std::memory_order_acquire)) return;
  const int saved_errno = errno;
  HotGuard guard(this);
  if (guard.ok) {
    if (layout_ == nullptr || (channels_.AnyFdMode() && channels_.IsFdMode(fd))) {
      SentFdMode(fd);
    } else {
      FinishedSignal f;
      const Verdict v = DecodeSent(*layout_, buf, static_cast<size_t>(n), &f);
      if (v != Verdict::kOk) {
        rejected_sent_[static_cast<int>(v)].fetch_add(1, std::memory_order_relaxed);
      } else {
        const uint64_t now = hook::MonotonicNs();
        const int index = pending_.Take(fd, f.seq);
        if (index < 0) {
          unmatched_finished_.fetch_add(1, std::memory_order_relaxed);
        } else {
          PendingEvent& e = pending_.at(index);
          e.consume_time_ns = f.consume_time_ns;
          e.handled = f.handled;
          Finish(index, now);
        }
      }
    }
  }
  errno = saved_errno;
}

void InputTracker::SentFdMode(int fd) noexcept {
  const int index = pending_.TakeFdMode(fd);
  if (index < 0) return;
  Finish(index, hook::MonotonicNs());
}

void InputTracker::Finish(int index, uint64_t now) noexcept {
  PendingEvent& e = pending_.at(index);
  e.finish_ns.store(now, std::memory_order_release);
  const uint64_t dur = now > e.read_ns ? now - e.read_ns : 0;

  hook::Event rec;
  rec.ts_ns = e.read_ns;
  rec.dur_ns = dur;
  rec.tid = e.tid;
  hook::EventArg args[4];
  int nargs = 0;
  args[nargs++] = hook::EventArg::Int(key_fd_, e.fd);
  if (e.fd_mode) {
    rec.kind = hook::EventKind::kInputMotion;
    rec.name = name_fd_timed_;
    args[nargs++] = hook::EventArg::String(key_mode_, value_fd_);
    fd_timed_.fetch_add(1, std::memory_order_relaxed);
  } else {
    rec.kind = e.type == EventType::kKey ? hook::EventKind::kInputKey : hook::EventKind::kInputMotion;
    rec.name = action_names_[e.action_index];
    args[nargs++] = hook::EventArg::Int(key_seq_, e.seq);
    const uint64_t event_time = static_cast<uint64_t>(e.event_time_ns);
    args[nargs++] = hook::EventArg::Double(
        key_dispatch_, e.read_ns > event_time ? static_cast<double>(e.read_ns - event_time) / 1e6 : 0.0);
    if (e.consume_time_ns > 0) {
      args[nargs++] = hook::EventArg::Double(
          key_consume_, static_cast<double>(e.consume_time_ns - e.event_time_ns) / 1e6);
    }
  }
  // The record holds hook::kMaxArgs arguments; the most useful ones come first.
  for (int i = 0; i < nargs && i < hook::kMaxArgs; ++i) rec.args[i] = args[i];
  context_->timeline->Append(rec);
  events_finished_.fetch_add(1, std::memory_order_relaxed);

  const uint32_t gen = e.generation.load(std::memory_order_relaxed);
  const bool disarmed = context_->watchdog->Disarm(EventId(index, gen));
  // The watchdog sets kLagFired before it arms the ANR deadline, so a successful disarm of that one is
  // seen together with the flag.
  const bool lagged = (e.flags.load(std::memory_order_seq_cst) & kLagFired) != 0 ||
                      dur > lag_ns_.load(std::memory_order_relaxed);
  if (disarmed && !lagged) {
    pending_.Free(index);
    return;
  }
  // A lag (or a deadline callback running right now): the report is built on the watchdog thread.
  pending_.MarkFinished(index);
  if (!context_->watchdog->Arm(ReportId(index, gen), now, &OnReportDue, this, 0)) {
    arm_failures_.fetch_add(1, std::memory_order_relaxed);  // swept by the next callback or Disable
  }
}

InputTracker::Counters InputTracker::counters() const {
  Counters c;
  c.events_read = events_read_.load();
  c.events_finished = events_finished_.load();
  c.fd_timed = fd_timed_.load();
  for (int i = 0; i < kVerdictCount; ++i) {
    c.rejected_received[i] = rejected_received_[i].load();
    c.rejected_sent[i] = rejected_sent_[i].load();
  }
  c.unmatched_finished = unmatched_finished_.load();
  c.table_full = table_full_.load();
  c.arm_failures = arm_failures_.load();
  c.lag_reports = lag_reports_.load();
  c.anr_reports = anr_reports_.load();
  c.dropped_at_disable = dropped_at_disable_.load();
  c.pending = pending_.Occupied();
  c.fd_mode_channels = channels_.FdModeCount();
  return c;
}

std::string InputTracker::CountersJson() const {
  const Counters c = counters();
  std::string out;
  char buf[96];
  auto add = [&](const char* key, uint64_t v) {
    std::snprintf(buf, sizeof buf, "%s\"%s\":%llu", out.empty() ? "{" : ",", key, static_cast<unsigned long long>(v));
    out += buf;
  };
  add("events_read", c.events_read);
  add("events_finished", c.events_finished);
  add("fd_timed", c.fd_timed);
  add("unmatched_finished", c.unmatched_finished);
  add("table_full", c.table_full);
  add("arm_failures", c.arm_failures);
  add("lag_reports", c.lag_reports);
  add("anr_reports", c.anr_reports);
  add("dropped_at_disable", c.dropped_at_disable);
  add("pending", static_cast<uint64_t>(c.pending));
  add("fd_mode_channels", static_cast<uint64_t>(c.fd_mode_channels));
  for (int i = 1; i < kVerdictCount; ++i) {
    add((std::string("received_") + VerdictName(static_cast<Verdict>(i))).c_str(), c.rejected_received[i]);
    add((std::string("sent_") + VerdictName(static_cast<Verdict>(i))).c_str(), c.rejected_sent[i]);
  }
  out += "}";
  return out;
}

}  // namespace jp::input
