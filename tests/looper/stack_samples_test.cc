// Merging identical consecutive samples, and the confirmed / suspected verdict they give.
#include "looper/stack_samples.h"

#include <gtest/gtest.h>

namespace jp::looper {
namespace {

TEST(StackSamplesTest, IdenticalConsecutiveSamplesMergeWithACount) {
  SampleSet s;
  s.Add("at a.B.c(B.java:1)\nat a.B.d(B.java:2)\n", 100);
  s.Add("at a.B.c(B.java:1)\nat a.B.d(B.java:2)\n", 200);
  s.Add("at a.B.e(B.java:3)\n", 300);
  s.Add("at a.B.c(B.java:1)\nat a.B.d(B.java:2)\n", 400);  // same as the first, not consecutive: a new run
  ASSERT_EQ(s.runs().size(), 3u);
  EXPECT_EQ(s.runs()[0].count, 2u);
  EXPECT_EQ(s.runs()[0].first_ns, 100u);
  EXPECT_EQ(s.runs()[0].last_ns, 200u);
  EXPECT_EQ(s.samples(), 4u);
  EXPECT_TRUE(s.confirmed());
  EXPECT_EQ(s.Dominant(), &s.runs()[0]);
}

TEST(StackSamplesTest, AllDifferentIsOnlySuspected) {
  SampleSet s;
  s.Add("x", 1);
  s.Add("y", 2);
  s.Add("x", 3);
  EXPECT_FALSE(s.confirmed());
  EXPECT_EQ(s.Dominant(), &s.runs()[2]);  // a tie goes to where the message ended up
}

TEST(StackSamplesTest, BoundedRunsCountTheRest) {
  SampleSet s;
  for (size_t i = 0; i < SampleSet::kMaxRuns + 5; ++i) s.Add(std::to_string(i), i);
  EXPECT_EQ(s.runs().size(), SampleSet::kMaxRuns);
  EXPECT_EQ(s.dropped(), 5u);
  EXPECT_EQ(s.samples(), SampleSet::kMaxRuns + 5);
  s.AddError("no hook");
  EXPECT_EQ(s.errors(), 1u);
  s.Clear();
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.samples(), 0u);
}

}  // namespace
}  // namespace jp::looper
