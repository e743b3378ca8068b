// The string table: ids, lookups, what happens when full, and concurrent interning of the same strings.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "hook/timeline.h"

namespace jp::hook {
namespace {

std::unique_ptr<Timeline> MakeTimeline(uint32_t slots, uint32_t arena) {
  Timeline::Options o;
  o.capacity = 16;
  o.intern_slots = slots;
  o.arena_bytes = arena;
  std::string error;
  auto t = Timeline::Create(o, &error);
  EXPECT_TRUE(t) << error;
  return t;
}

TEST(StringTable, SameTextSameIdDifferentTextDifferentId) {
  auto t = MakeTimeline(64, 4096);
  StringTable& s = t->strings();
  uint16_t a = s.Intern("android.view.Choreographer$FrameDisplayEventReceiver");
  uint16_t b = s.Intern("com.example.Prefetch");
  EXPECT_NE(a, StringTable::kNone);
  EXPECT_NE(a, b);
  EXPECT_EQ(s.Intern("com.example.Prefetch"), b);
  EXPECT_EQ(s.Lookup(a), "android.view.Choreographer$FrameDisplayEventReceiver");
  EXPECT_EQ(s.Lookup(b), "com.example.Prefetch");
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.Intern(""), StringTable::kNone);
  EXPECT_EQ(s.Lookup(StringTable::kNone), "");
  EXPECT_EQ(s.Lookup(63), "");  // an id never handed out
}

TEST(StringTable, FindNeverInserts) {
  auto t = MakeTimeline(64, 4096);
  StringTable& s = t->strings();
  EXPECT_EQ(s.Find("frame"), StringTable::kNone);
  EXPECT_EQ(s.size(), 0u);
  uint16_t id = s.Intern("frame");
  EXPECT_EQ(s.Find("frame"), id);
}

TEST(StringTable, LongStringsAreClippedNotRejected) {
  auto t = MakeTimeline(64, 4096);
  std::string long_name(400, 'x');
  uint16_t id = t->strings().Intern(long_name);
  ASSERT_NE(id, StringTable::kOverflow);
  EXPECT_EQ(t->strings().Lookup(id).size(), StringTable::kMaxLength);
  EXPECT_EQ(t->strings().Intern(long_name), id);
}

TEST(StringTable, FullTableAnswersOverflowAndCountsIt) {
  auto t = MakeTimeline(16, 4096);
  StringTable& s = t->strings();
  std::vector<uint16_t> ids;
  for (int i = 0; i < 14; ++i) ids.push_back(s.Intern("name" + std::to_string(i)));  // 7/8 of 16
  for (uint16_t id : ids) EXPECT_NE(id, StringTable::kOverflow);
  EXPECT_EQ(s.Intern("one too many"), StringTable::kOverflow);
  EXPECT_EQ(s.Intern("and another"), StringTable::kOverflow);
  EXPECT_EQ(s.overflow_count(), 2u);
  EXPECT_EQ(s.Lookup(StringTable::kOverflow), "<overflow>");
  // Strings already in keep their ids.
  EXPECT_EQ(s.Intern("name3"), ids[3]);
  EXPECT_EQ(s.Lookup(ids[13]), "name13");
}

TEST(StringTable, ExhaustedArenaAnswersOverflow) {
  auto t = MakeTimeline(64, 256);
  StringTable& s = t->strings();
  EXPECT_NE(s.Intern(std::string(200, 'a')), StringTable::kOverflow);
  EXPECT_EQ(s.Intern(std::string(100, 'b')), StringTable::kOverflow);
  EXPECT_NE(s.Intern("short"), StringTable::kOverflow);  // what still fits still goes in
  EXPECT_EQ(s.overflow_count(), 1u);
}

TEST(StringTable, ConcurrentInternersAgreeOnIds) {
  auto t = MakeTimeline(1024, 65536);
  constexpr int kThreads = 4, kStrings = 300;
  std::vector<std::vector<uint16_t>> ids(kThreads, std::vector<uint16_t>(kStrings));
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int k = 0; k < kStrings; ++k) {
        int i = th % 2 ? kStrings - 1 - k : k;  // half go forwards, half backwards: races on both ends
        ids[th][i] = t->strings().Intern("com.example.Handler" + std::to_string(i));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<bool> seen(2048, false);
  for (int i = 0; i < kStrings; ++i) {
    for (int th = 1; th < kThreads; ++th) ASSERT_EQ(ids[th][i], ids[0][i]) << "string " << i;
    ASSERT_NE(ids[0][i], StringTable::kOverflow);
    ASSERT_FALSE(seen[ids[0][i]]) << "two strings share id " << ids[0][i];
    seen[ids[0][i]] = true;
    EXPECT_EQ(t->strings().Lookup(ids[0][i]), "com.example.Handler" + std::to_string(i));
  }
  EXPECT_EQ(t->strings().size(), uint64_t{kStrings});
}

}  // namespace
}  // namespace jp::hook
