// The history window: fast runs merged, medium and slow kept, samples moved in, bounded and aged out.
#include "looper/message_history.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

namespace jp::looper {
namespace {

constexpr uint64_t kMs = 1000000;

Dispatch D(uint64_t start_ms, double wall_ms, uint16_t target = 1, int what = 0) {
  Dispatch d;
  d.start_ns = start_ms * kMs;
  d.wall_ns = static_cast<uint64_t>(wall_ms * kMs);
  d.cpu_ns = d.wall_ns / 2;
  d.target = target;
  d.what = what;
  return d;
}

TEST(MessageHistoryTest, FastMessagesMergeIntoRunsBetweenKeptOnes) {
  MessageHistory h;
  h.SetWindow(10000 * kMs, 700 * kMs);
  h.Add(D(1000, 1), nullptr);
  h.Add(D(1002, 2), nullptr);
  h.Add(D(1005, 29), nullptr);
  h.Add(D(1040, 100, 2, 7), nullptr);  // medium
  h.Add(D(1200, 3), nullptr);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h.at(0).kind, MessageHistory::Kind::kFastRun);
  EXPECT_EQ(h.at(0).count, 3u);
  EXPECT_EQ(h.at(0).d.wall_ns, 32 * kMs);
  EXPECT_EQ(h.at(0).max_wall_ns, 29 * kMs);
  EXPECT_EQ(h.at(1).kind, MessageHistory::Kind::kMedium);
  EXPECT_EQ(h.at(1).d.what, 7);
  EXPECT_EQ(h.at(2).kind, MessageHistory::Kind::kFastRun);
  EXPECT_EQ(h.dispatches(), 5u);
}

TEST(MessageHistoryTest, SlowMessagesTakeTheirSamplesWithoutCopying) {
  MessageHistory h;
  h.SetWindow(10000 * kMs, 700 * kMs);
  SampleSet s;
  s.Add("at a.B.c(B.java:1)", 1);
  s.Add("at a.B.c(B.java:1)", 2);
  h.Add(D(1000, 800), &s);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h.at(0).kind, MessageHistory::Kind::kSlow);
  EXPECT_EQ(h.at(0).samples.samples(), 2u);
  EXPECT_TRUE(s.empty());  // moved out
}

TEST(MessageHistoryTest, OldEntriesLeaveTheWindow) {
  MessageHistory h;
  h.SetWindow(1000 * kMs, 700 * kMs);
  h.Add(D(100, 50), nullptr);
  h.Add(D(600, 50), nullptr);
  h.Add(D(1500, 50), nullptr);  // ends at 1550: the first (ended 150) is older than 1 s, the second not
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h.at(0).d.start_ns, 600 * kMs);
  EXPECT_EQ(h.evicted(), 1u);
  h.Evict(5000 * kMs);
  EXPECT_EQ(h.size(), 0u);
}

TEST(MessageHistoryTest, PoolIsBoundedOldestFirst) {
  MessageHistory h;
  h.SetWindow(1000000 * kMs, 700 * kMs);
  for (uint64_t i = 0; i < MessageHistory::kCapacity + 20; ++i) h.Add(D(1000 + i * 100, 40, 1, static_cast<int>(i)), nullptr);
  EXPECT_EQ(h.size(), MessageHistory::kCapacity);
  EXPECT_EQ(h.evicted(), 20u);
  EXPECT_EQ(h.at(0).d.what, 20);
}

// The pool is reserved once but its entries are made as the window needs them (pages touched lazily),
// and once all kCapacity exist it is a ring: ages evict, a full pool evicts the oldest, order holds.
TEST(MessageHistoryTest, PoolEntriesGrowWithTheWindowThenRing) {
  MessageHistory h;
  h.SetWindow(1000 * kMs, 700 * kMs);
  EXPECT_EQ(h.pool_entries(), 0u);
  for (uint64_t i = 0; i < 30; ++i) h.Add(D(1000 + i * 1000, 1), nullptr);  // 30 fast runs, 1 s apart
  EXPECT_EQ(h.size(), 2u);       // only the last two are within 1 s
  EXPECT_EQ(h.pool_entries(), 30u);  // appended, none reused before the pool is full
  EXPECT_EQ(h.at(1).d.start_ns, 30000 * kMs);
  h.Clear();
  EXPECT_EQ(h.pool_entries(), 0u);
  h.SetWindow(1000000 * kMs, 700 * kMs);
  for (uint64_t i = 0; i < 3 * MessageHistory::kCapacity + 7; ++i) {
    h.Add(D(100000 + i * 100, 40, 1, static_cast<int>(i)), nullptr);
  }
  EXPECT_EQ(h.pool_entries(), MessageHistory::kCapacity);
  ASSERT_EQ(h.size(), MessageHistory::kCapacity);
  for (size_t i = 0; i < h.size(); ++i) {
    ASSERT_EQ(h.at(i).d.what, static_cast<int>(2 * MessageHistory::kCapacity + 7 + i)) << i;
  }
}

// A restart of the looper monitor clears the process-wide history in place (its pool is allocated once).
TEST(MessageHistoryTest, ClearEmptiesTheWindowAndItsSamplesButKeepsTheWindowSize) {
  MessageHistory h;
  h.SetWindow(1000 * kMs, 700 * kMs);
  SampleSet s;
  s.Add("at a.B.c(B.java:1)", 1);
  for (uint64_t i = 0; i < MessageHistory::kCapacity + 3; ++i) h.Add(D(10 + i * 2, 1 + (i % 2) * 40), nullptr);
  h.Add(D(5000, 800), &s);
  ASSERT_GT(h.evicted(), 0u);
  h.Clear();
  EXPECT_EQ(h.size(), 0u);
  EXPECT_EQ(h.evicted(), 0u);
  EXPECT_EQ(h.dispatches(), 0u);
  // Reused from the first slot, with no stale samples; the window set before still applies.
  h.Add(D(20000, 50), nullptr);
  h.Add(D(21500, 50), nullptr);  // the first ended at 20050, over 1 s before 21550
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h.at(0).d.start_ns, 21500 * kMs);
  EXPECT_TRUE(h.at(0).samples.empty());
  EXPECT_EQ(h.evicted(), 1u);
}

TEST(MessageHistoryTest, FastRunsCloseAfterTheirSpan) {
  MessageHistory h;
  h.SetWindow(100000 * kMs, 700 * kMs);
  for (uint64_t i = 0; i < 30; ++i) h.Add(D(1000 + i * 100, 1), nullptr);  // 3 s of fast messages
  EXPECT_GE(h.size(), 3u);
  EXPECT_LE(h.size(), 4u);
}

TEST(MessageHistoryTest, JsonNamesEntriesAndTheirAge) {
  // A StringTable over local storage, as the timeline gives one.
  uint64_t slots[64] = {};
  char arena[1024];
  uint64_t used = 0, count = 0, overflow = 0, wasted = 0;
  hook::StringTableStorage st{slots, 64, arena, sizeof arena, &used, &count, &overflow, &wasted};
  hook::StringTable strings(st);
  const uint16_t target = strings.Intern("com.example.app.WorkHandler");
  MessageHistory h;
  h.SetWindow(10000 * kMs, 700 * kMs);
  h.Add(D(1000, 5, target), nullptr);
  SampleSet s;
  s.Add("at com.example.app.SlowTask.crunchNumbers(SlowTask.java:16)\n", 1100 * kMs);
  h.Add(D(1010, 900, target, 41), &s);
  JsonWriter w;
  h.WriteJson(&w, 2000 * kMs, strings, 8);
  rapidjson::Document d;
  const std::string json = w.Take();
  d.Parse(json.c_str());
  ASSERT_FALSE(d.HasParseError()) << json;
  const auto& e = d["entries"];
  ASSERT_EQ(e.Size(), 2u);
  EXPECT_STREQ(e[0]["kind"].GetString(), "fast");
  EXPECT_DOUBLE_EQ(e[0]["ago_ms"].GetDouble(), 1000);
  EXPECT_STREQ(e[1]["kind"].GetString(), "slow");
  EXPECT_STREQ(e[1]["target"].GetString(), "com.example.app.WorkHandler");
  EXPECT_EQ(e[1]["what"].GetInt(), 41);
  EXPECT_DOUBLE_EQ(e[1]["samples"][0]["at_ms"].GetDouble(), 90);
  EXPECT_STREQ(e[1]["samples"][0]["frames"][0].GetString(), "at com.example.app.SlowTask.crunchNumbers(SlowTask.java:16)");
}

}  // namespace
}  // namespace jp::looper
