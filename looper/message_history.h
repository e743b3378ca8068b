// The looper's history window (the ANR view): what the main thread dispatched in the last
// looper.history_ms, in order. Fast messages (< 30 ms) are merged into runs with a count and total wall and
// CPU time; medium ones are kept whole; slow ones (>= looper.lag_ms) keep their merged stack samples too.
//
// Memory is bounded: a pool of kCapacity entries allocated (reserved) once and used as a ring, so the oldest
// entry is evicted when the pool is full as well as when it leaves the window. Entries are constructed in
// the pool only as the window needs them, so its pages are touched as it fills: a calm app whose window
// holds a few dozen fast runs keeps a few KiB resident, not the whole 68 KiB. A fast run is closed after
// kMaxRunSpanNs so that eviction by age stays fine-grained. Not thread-safe: the caller locks.
#ifndef JANKPROBE_LOOPER_MESSAGE_HISTORY_H_
#define JANKPROBE_LOOPER_MESSAGE_HISTORY_H_

#include "hook/json_out.h"

#include <cstdint>
#include <vector>

#include "hook/string_intern.h"
#include "looper/stack_samples.h"

namespace jp::looper {

using JsonWriter = hook::JsonOut;  // the library's one JSON writer (rapidjson::Writer's interface)

// One finished dispatch as the timing code measured it.
struct Dispatch {
  uint64_t start_ns = 0;  // CLOCK_MONOTONIC at ">>>>>"
  uint64_t wall_ns = 0;
  uint64_t cpu_ns = 0;    // the main thread's CPU time over the same interval
  uint16_t target = 0;    // interned names (timeline string table)
  uint16_t callback = 0;
  int32_t what = 0;
};

class MessageHistory {
 public:
  static constexpr size_t kCapacity = 500;
  static constexpr uint64_t kFastNs = 30ull * 1000 * 1000;
  static constexpr uint64_t kMaxRunSpanNs = 1000ull * 1000 * 1000;

  enum class Kind : uint8_t { kFastRun, kMedium, kSlow };

  struct Entry {
    Kind kind = Kind::kFastRun;
    Dispatch d;              // for a fast run: start of the first, wall/cpu summed, names of the last
    uint64_t end_ns = 0;     // end of the last dispatch in it
    uint32_t count = 0;      // dispatches merged (1 for medium/slow)
    uint64_t max_wall_ns = 0;
    SampleSet samples;       // slow (and sampled medium) messages only
  };

  MessageHistory();

  void SetWindow(uint64_t window_ns, uint64_t slow_ns);
  // Empties the window (and frees the entries' samples) but keeps the pool's allocation: a restart
  // allocates nothing.
  void Clear();
  // Adds a finished dispatch; `samples` is moved from when the entry keeps it (medium and slow).
  void Add(const Dispatch& d, SampleSet* samples);
  // Drops entries that ended before now - window.
  void Evict(uint64_t now_ns);

  size_t size() const { return size_; }
  uint64_t evicted() const { return evicted_; }
  uint64_t dispatches() const { return dispatches_; }
  // Entries constructed in the pool so far (they grow with the window, up to kCapacity).
  size_t pool_entries() const { return pool_.size(); }
  // i-th entry, oldest first.
  const Entry& at(size_t i) const { return pool_[(head_ + i) % kCapacity]; }

  // {"window_ms":..,"entries":[...],"evicted":..} as of now_ns; names resolved through `strings`.
  void WriteJson(JsonWriter* w, uint64_t now_ns, const hook::StringTable& strings, size_t max_frames) const;

 private:
  Entry& Push();

  // Reserved for kCapacity; until it holds that many, the window is [head_, pool_.size()) and the next
  // entry is appended (head_ + size_ == pool_.size()); once full it is a ring over all kCapacity.
  std::vector<Entry> pool_;
  size_t head_ = 0;  // oldest
  size_t size_ = 0;
  uint64_t window_ns_ = 10000ull * 1000 * 1000;
  uint64_t slow_ns_ = 700ull * 1000 * 1000;
  uint64_t evicted_ = 0;
  uint64_t dispatches_ = 0;
};

// Writes the merged samples of one message: [{"count":n,"at_ms":offset from start,"frames":[...]}, ...].
void WriteSamples(JsonWriter* w, const SampleSet& samples, uint64_t start_ns, size_t max_frames);

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_MESSAGE_HISTORY_H_
