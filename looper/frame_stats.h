// Frame gaps from a Choreographer frame callback (FrameTicker). Choreographer hands out frame times on vsync
// boundaries (a late frame is moved back to the last vsync), so frame times differ by whole refresh
// intervals: a gap of n intervals means n - 1 frames were not drawn.
//
// The ticker runs in runs (it parks while the main thread is idle) and reports in batches: StartRun for the
// first frame of a run (no gap before it: the time it was parked is not a jank), OnFrames(t, n) for n
// frames since the previous call, the last at t. A span of i intervals holding n frames dropped i - n.
//
// The refresh interval is taken from the gap distribution: the smallest per-frame gap (span / n) among the
// last kWindow calls (a display at 60, 90 or 120 Hz shows its interval as soon as frames are on time; a
// sliding window follows a refresh-rate switch). Gaps below kMinIntervalNs are ignored (two callbacks for
// one vsync). Not thread-safe: frame callbacks run on the main thread only.
#ifndef JANKPROBE_LOOPER_FRAME_STATS_H_
#define JANKPROBE_LOOPER_FRAME_STATS_H_

#include <cstdint>

namespace jp::looper {

struct FrameGap {
  bool valid = false;       // false for the first frame (no previous one) and ignored gaps
  uint64_t gap_ns = 0;
  uint64_t interval_ns = 0; // the refresh interval estimate used
  uint32_t dropped = 0;     // frames missed inside the gap
  uint32_t frames = 0;      // frames the call reported (the gap spans them and the dropped ones)
};

class FrameStats {
 public:
  static constexpr int kWindow = 64;
  static constexpr uint64_t kMinIntervalNs = 4ull * 1000 * 1000;      // 250 Hz
  static constexpr uint64_t kDefaultIntervalNs = 16666667;           // until a gap says otherwise
  // No display refreshes slower than 20 Hz: a smallest gap above this means every recent frame was late
  // (a starved or throttled main thread), not a slow display, so the default stands.
  static constexpr uint64_t kMaxIntervalNs = 50ull * 1000 * 1000;
  static constexpr uint64_t kMaxGapNs = 60ull * 1000 * 1000 * 1000;  // longer: a paused ticker, not a jank

  // The first frame of a run: counted, no gap.
  void StartRun(uint64_t frame_time_ns);
  // `frames` (>= 1) frames since the previous call, the last at frame_time_ns.
  FrameGap OnFrames(uint64_t frame_time_ns, uint32_t frames);
  FrameGap OnFrame(uint64_t frame_time_ns) { return OnFrames(frame_time_ns, 1); }
  void Reset();

  uint64_t frames() const { return frames_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t janky_frames() const { return janky_; }  // frames after a gap with at least one dropped
  uint64_t interval_ns() const;

 private:
  uint64_t last_ns_ = 0;
  uint64_t gaps_[kWindow] = {};
  int gap_count_ = 0;
  int gap_next_ = 0;
  uint64_t frames_ = 0;
  uint64_t dropped_ = 0;
  uint64_t janky_ = 0;
};

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_FRAME_STATS_H_
