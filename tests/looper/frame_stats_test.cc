// Frame gaps on vsync boundaries: dropped frames per gap and the refresh interval from the gaps.
#include "looper/frame_stats.h"

#include <gtest/gtest.h>

namespace jp::looper {
namespace {

constexpr uint64_t k60 = 16666667;
constexpr uint64_t k120 = 8333333;

TEST(FrameStatsTest, OnTimeFramesDropNothing) {
  FrameStats f;
  EXPECT_FALSE(f.OnFrame(1000 * k60).valid);
  for (uint64_t i = 1; i <= 10; ++i) {
    const FrameGap g = f.OnFrame((1000 + i) * k60);
    EXPECT_TRUE(g.valid);
    EXPECT_EQ(g.dropped, 0u);
  }
  EXPECT_EQ(f.frames(), 11u);
  EXPECT_EQ(f.dropped(), 0u);
  EXPECT_EQ(f.interval_ns(), k60);
}

TEST(FrameStatsTest, AGapOfNIntervalsDropsNMinusOne) {
  FrameStats f;
  f.OnFrame(100 * k60);
  f.OnFrame(101 * k60);
  const FrameGap g = f.OnFrame(131 * k60 + 300000);  // 30 intervals late, plus scheduling noise
  EXPECT_EQ(g.dropped, 29u);
  EXPECT_EQ(f.dropped(), 29u);
  EXPECT_EQ(f.janky_frames(), 1u);
}

TEST(FrameStatsTest, OnlyLateFramesSeenKeepTheDefaultInterval) {
  // A starved main thread whose every frame came 400 ms apart says nothing about the display.
  FrameStats f;
  uint64_t t = 1000000000;
  f.OnFrame(t);
  for (int i = 0; i < 5; ++i) f.OnFrame(t += 24 * k60);
  EXPECT_EQ(f.interval_ns(), FrameStats::kDefaultIntervalNs);
  const FrameGap g = f.OnFrame(t + 10 * k60);
  EXPECT_EQ(g.dropped, 9u);
}

TEST(FrameStatsTest, IntervalFollowsTheDisplay) {
  FrameStats f;
  uint64_t t = 1000000000;
  f.OnFrame(t);
  for (int i = 0; i < 5; ++i) f.OnFrame(t += 3 * k120);  // janky at first: only multiples seen
  EXPECT_EQ(f.interval_ns(), 3 * k120);
  f.OnFrame(t += k120);
  EXPECT_EQ(f.interval_ns(), k120);
  // After a switch to 60 Hz the 120 Hz gaps leave the window.
  for (int i = 0; i < FrameStats::kWindow; ++i) f.OnFrame(t += k60);
  EXPECT_EQ(f.interval_ns(), k60);
}

TEST(FrameStatsTest, TooShortOrBackwardsGapsAreIgnored) {
  FrameStats f;
  f.OnFrame(1000000000);
  EXPECT_FALSE(f.OnFrame(1000000000 + 1000).valid);  // two callbacks for one vsync
  EXPECT_FALSE(f.OnFrame(900000000).valid);
  EXPECT_EQ(f.interval_ns(), FrameStats::kDefaultIntervalNs);
}

TEST(FrameStatsTest, ABatchOfOnTimeFramesDropsNothingAndShowsTheInterval) {
  FrameStats f;
  f.StartRun(1000 * k120);
  const FrameGap g = f.OnFrames(1064 * k120, 64);
  EXPECT_TRUE(g.valid);
  EXPECT_EQ(g.frames, 64u);
  EXPECT_EQ(g.dropped, 0u);
  EXPECT_EQ(f.frames(), 65u);
  EXPECT_EQ(f.interval_ns(), k120);
}

TEST(FrameStatsTest, ABatchCountsTheIntervalsItsFramesDoNotCover) {
  FrameStats f;
  f.StartRun(100 * k60);
  f.OnFrames(110 * k60, 10);                            // on time: the interval is known
  const FrameGap g = f.OnFrames(150 * k60 + 200000, 30);  // 40 intervals, 30 frames drawn
  EXPECT_EQ(g.dropped, 10u);
  EXPECT_EQ(f.dropped(), 10u);
  EXPECT_EQ(f.janky_frames(), 1u);
  EXPECT_EQ(f.frames(), 41u);
  EXPECT_EQ(f.interval_ns(), k60);
}

TEST(FrameStatsTest, ANewRunHasNoGapBeforeIt) {
  // The ticker parked for 10 s: the next run's first frame is not 600 dropped frames.
  FrameStats f;
  f.StartRun(100 * k60);
  f.OnFrames(130 * k60, 30);
  f.StartRun(730 * k60);
  EXPECT_EQ(f.dropped(), 0u);
  const FrameGap g = f.OnFrame(731 * k60);
  EXPECT_TRUE(g.valid);
  EXPECT_EQ(g.dropped, 0u);
  EXPECT_EQ(f.frames(), 33u);
  EXPECT_EQ(f.interval_ns(), k60);  // the estimate survives the pause
}

}  // namespace
}  // namespace jp::looper
