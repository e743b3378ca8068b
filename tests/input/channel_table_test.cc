// The per-channel state behind fd mode (input/channel_table.h): a channel whose reads of InputMessage size
// never validate is fd-timed after kInvalidBeforeFdMode of them, one that ever validated never is, a
// layout that decodes after all takes the channel back, and the fd-mode count follows every change.
#include "input/channel_table.h"

#include <gtest/gtest.h>

namespace jp::input {
namespace {

TEST(ChannelTableTest, NeverValidChannelIsFdTimedAtTheThresholdAndBackWhenAPacketValidates) {
  ChannelTable t;
  for (uint32_t i = 1; i < ChannelTable::kInvalidBeforeFdMode; ++i) {
    EXPECT_FALSE(t.NoteInvalid(7)) << i;
    EXPECT_FALSE(t.IsFdMode(7));
  }
  EXPECT_TRUE(t.NoteInvalid(7));
  EXPECT_TRUE(t.IsFdMode(7));
  EXPECT_TRUE(t.AnyFdMode());
  EXPECT_EQ(t.FdModeCount(), 1);
  EXPECT_TRUE(t.NoteInvalid(7));  // stays, counted once
  EXPECT_EQ(t.FdModeCount(), 1);
  t.NoteValid(7);
  EXPECT_FALSE(t.IsFdMode(7));
  EXPECT_EQ(t.FdModeCount(), 0);
  EXPECT_FALSE(t.AnyFdMode());
  // Once valid, failed reads are single bad packets: never fd mode again.
  for (uint32_t i = 0; i < 3 * ChannelTable::kInvalidBeforeFdMode; ++i) EXPECT_FALSE(t.NoteInvalid(7));
  EXPECT_FALSE(t.IsFdMode(7));
}

TEST(ChannelTableTest, ChannelsAreIndependentAndClearForgetsThem) {
  ChannelTable t;
  t.NoteValid(3);
  // 3 + kSlots probes the same first slot as 3: a collision, resolved by the probe.
  const int other = 3 + ChannelTable::kSlots;
  for (uint32_t i = 0; i < ChannelTable::kInvalidBeforeFdMode; ++i) t.NoteInvalid(other);
  EXPECT_TRUE(t.IsFdMode(other));
  EXPECT_FALSE(t.IsFdMode(3));
  EXPECT_FALSE(t.NoteInvalid(3));
  EXPECT_EQ(t.FdModeCount(), 1);
  t.NoteValid(3);  // the clean fast path on its own slot leaves the other one alone
  EXPECT_TRUE(t.IsFdMode(other));
  t.Clear();
  EXPECT_FALSE(t.IsFdMode(other));
  EXPECT_EQ(t.FdModeCount(), 0);
  EXPECT_FALSE(t.NoteInvalid(other));  // counting starts again
}

}  // namespace
}  // namespace jp::input
