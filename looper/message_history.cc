#include "looper/message_history.h"

#include "hook/report.h"

#include <string>

namespace jp::looper {
namespace {

double Ms(uint64_t ns) { return static_cast<double>(ns) / 1e6; }

void Str(JsonWriter* w, std::string_view s) { w->String(s.data(), s.size()); }

const char* KindName(MessageHistory::Kind k) {
  switch (k) {
    case MessageHistory::Kind::kFastRun: return "fast";
    case MessageHistory::Kind::kMedium: return "medium";
    case MessageHistory::Kind::kSlow: return "slow";
  }
  return "unknown";
}

}  // namespace

MessageHistory::MessageHistory() { pool_.reserve(kCapacity); }

void MessageHistory::SetWindow(uint64_t window_ns, uint64_t slow_ns) {
  window_ns_ = window_ns;
  slow_ns_ = slow_ns;
}

void MessageHistory::Clear() {
  pool_.clear();  // keeps the reserved storage; its pages are reused as the window fills again
  head_ = 0;
  size_ = 0;
  evicted_ = 0;
  dispatches_ = 0;
}

MessageHistory::Entry& MessageHistory::Push() {
  if (size_ == kCapacity) {  // the pool is full: the oldest goes
    head_ = (head_ + 1) % kCapacity;
    --size_;
    ++evicted_;
  }
  if (pool_.size() < kCapacity) {
    // Still growing: the window ends at the last constructed entry (eviction only advanced head_), and
    // the reserve means no reallocation ever moves the entries.
    ++size_;
    return pool_.emplace_back();
  }
  Entry& e = pool_[(head_ + size_) % kCapacity];
  ++size_;
  e.samples.Clear();
  return e;
}

void MessageHistory::Add(const Dispatch& d, SampleSet* samples) {
  ++dispatches_;
  const uint64_t end = d.start_ns + d.wall_ns;
  Evict(end);
  if (d.wall_ns < kFastNs) {
    if (size_ > 0) {
      Entry& last = pool_[(head_ + size_ - 1) % kCapacity];
      if (last.kind == Kind::kFastRun && end - last.d.start_ns <= kMaxRunSpanNs) {
        last.d.wall_ns += d.wall_ns;
        last.d.cpu_ns += d.cpu_ns;
        last.d.target = d.target;
        last.d.callback = d.callback;
        last.d.what = d.what;
        last.end_ns = end;
        ++last.count;
        if (d.wall_ns > last.max_wall_ns) last.max_wall_ns = d.wall_ns;
        return;
      }
    }
    Entry& e = Push();
    e.kind = Kind::kFastRun;
    e.d = d;
    e.end_ns = end;
    e.count = 1;
    e.max_wall_ns = d.wall_ns;
    return;
  }
  Entry& e = Push();
  e.kind = d.wall_ns >= slow_ns_ ? Kind::kSlow : Kind::kMedium;
  e.d = d;
  e.end_ns = end;
  e.count = 1;
  e.max_wall_ns = d.wall_ns;
  if (samples) std::swap(e.samples, *samples);  // no copy of the stacks; the caller gets the old (cleared) set
}

void MessageHistory::Evict(uint64_t now_ns) {
  while (size_ > 0) {
    const Entry& oldest = pool_[head_];
    if (now_ns < window_ns_ || oldest.end_ns + window_ns_ >= now_ns) break;
    head_ = (head_ + 1) % kCapacity;
    --size_;
    ++evicted_;
  }
}

void MessageHistory::WriteJson(JsonWriter* w, uint64_t now_ns, const hook::StringTable& strings,
                               size_t max_frames) const {
  w->StartObject();
  w->Key("window_ms");
  w->Double(Ms(window_ns_));
  w->Key("dispatches");
  w->Uint64(dispatches_);
  w->Key("evicted");
  w->Uint64(evicted_);
  w->Key("entries");
  w->StartArray();
  for (size_t i = 0; i < size_; ++i) {
    const Entry& e = at(i);
    if (now_ns >= window_ns_ && e.end_ns + window_ns_ < now_ns) continue;  // left the window since the last Add
    w->StartObject();
    w->Key("kind");
    w->String(KindName(e.kind));
    w->Key("ago_ms");  // how long before now it started
    w->Double(Ms(now_ns > e.d.start_ns ? now_ns - e.d.start_ns : 0));
    w->Key("wall_ms");
    w->Double(Ms(e.d.wall_ns));
    w->Key("cpu_ms");
    w->Double(Ms(e.d.cpu_ns));
    if (e.kind == Kind::kFastRun) {
      w->Key("count");
      w->Uint(e.count);
      w->Key("span_ms");
      w->Double(Ms(e.end_ns - e.d.start_ns));
      w->Key("max_wall_ms");
      w->Double(Ms(e.max_wall_ns));
      w->Key("last_target");
      Str(w, strings.Lookup(e.d.target));
    } else {
      w->Key("target");
      Str(w, strings.Lookup(e.d.target));
      w->Key("callback");
      Str(w, strings.Lookup(e.d.callback));
      w->Key("what");
      w->Int(e.d.what);
      if (!e.samples.empty()) {
        w->Key("confirmed");
        w->Bool(e.samples.confirmed());
        w->Key("samples");
        WriteSamples(w, e.samples, e.d.start_ns, max_frames);
      }
    }
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteSamples(JsonWriter* w, const SampleSet& samples, uint64_t start_ns, size_t max_frames) {
  w->StartArray();
  for (const SampleRun& r : samples.runs()) {
    w->StartObject();
    w->Key("count");
    w->Uint(r.count);
    w->Key("at_ms");
    w->Double(Ms(r.first_ns > start_ns ? r.first_ns - start_ns : 0));
    w->Key("frames");
    w->StartArray();
    for (const std::string& f : hook::SplitStackFrames(r.stack, max_frames)) Str(w, f);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace jp::looper
