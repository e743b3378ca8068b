#include "looper/frame_stats.h"

namespace jp::looper {

uint64_t FrameStats::interval_ns() const {
  uint64_t best = 0;
  for (int i = 0; i < gap_count_; ++i) {
    if (best == 0 || gaps_[i] < best) best = gaps_[i];
  }
  return best && best <= kMaxIntervalNs ? best : kDefaultIntervalNs;
}

void FrameStats::StartRun(uint64_t frame_time_ns) {
  ++frames_;
  last_ns_ = frame_time_ns;
}

FrameGap FrameStats::OnFrames(uint64_t frame_time_ns, uint32_t frames) {
  FrameGap g;
  if (frames == 0) return g;
  frames_ += frames;
  const uint64_t last = last_ns_;
  last_ns_ = frame_time_ns;
  if (last == 0 || frame_time_ns <= last) return g;
  const uint64_t gap = frame_time_ns - last;
  if (gap > kMaxGapNs) return g;
  const uint64_t per_frame = gap / frames;
  if (per_frame < kMinIntervalNs) return g;
  gaps_[gap_next_] = per_frame;
  gap_next_ = (gap_next_ + 1) % kWindow;
  if (gap_count_ < kWindow) ++gap_count_;
  g.valid = true;
  g.gap_ns = gap;
  g.frames = frames;
  g.interval_ns = interval_ns();
  // Whole intervals in the span, rounded: frame times sit on vsync boundaries up to scheduling noise.
  const uint64_t intervals = (gap + g.interval_ns / 2) / g.interval_ns;
  g.dropped = intervals > frames ? static_cast<uint32_t>(intervals - frames) : 0;
  dropped_ += g.dropped;
  if (g.dropped > 0) ++janky_;
  return g;
}

void FrameStats::Reset() { *this = FrameStats(); }

}  // namespace jp::looper
