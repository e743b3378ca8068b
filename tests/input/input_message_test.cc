// InputMessage decoding per release: packets built from the reference sheet's offsets, and everything
// that must be refused (short, wrong size, unknown type, impossible fields).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "input/input_message.h"

namespace jp::input {
namespace {

struct Sheet {  // body offsets straight from the sheet, per API level
  int api;
  uint32_t key, motion, finished;
  bool seq_header;
  size_t action, pointer_count, key_size, motion_base, pointer_size, finished_size, message;
};
const Sheet kSheet[] = {
    {26, 1, 2, 3, false, 24, 72, 64, 88, 136, 16, 2264},  {28, 1, 2, 3, false, 28, 80, 72, 96, 136, 16, 2272},
    {29, 1, 2, 3, false, 28, 80, 72, 96, 136, 16, 2272},  {30, 0, 1, 2, false, 60, 128, 104, 144, 136, 16, 2320},
    {31, 0, 1, 2, true, 60, 144, 104, 160, 136, 24, 2336}, {32, 0, 1, 2, true, 60, 148, 104, 160, 136, 24, 2336},
    {33, 0, 1, 2, true, 60, 4, 104, 168, 136, 24, 2344},   {34, 0, 1, 2, true, 60, 4, 104, 168, 144, 24, 2472},
    {36, 0, 1, 2, true, 60, 4, 104, 168, 144, 24, 2472},
};

template <typename T>
void Put(std::vector<uint8_t>* p, size_t off, T v) {
  std::memcpy(p->data() + off, &v, sizeof v);
}

std::vector<uint8_t> Motion(const Sheet& s, uint32_t seq, int32_t action, int64_t t, uint32_t n) {
  std::vector<uint8_t> p(s.motion_base + n * s.pointer_size, 0);
  Put<uint32_t>(&p, 0, s.motion);
  Put<uint32_t>(&p, s.seq_header ? 4 : 8, seq);
  Put<int64_t>(&p, 16, t);
  Put<int32_t>(&p, 8 + s.action, action);
  Put<uint32_t>(&p, 8 + s.pointer_count, n);
  return p;
}

class PerRelease : public ::testing::TestWithParam<Sheet> {};

TEST_P(PerRelease, DecodesKeysMotionsAndFinishedAndRefusesTheRest) {
  const Sheet& s = GetParam();
  const Layout* l = LayoutForApi(s.api);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->message_size, s.message);
  ReceivedEvent ev;
  for (uint32_t n : {1u, 2u, 16u}) {
    auto p = Motion(s, 77, 0x205, 123456789, n);
    ASSERT_EQ(DecodeReceived(*l, p.data(), p.size(), &ev), Verdict::kOk) << n;
    EXPECT_EQ(ev.type, EventType::kMotion);
    EXPECT_EQ(ev.seq, 77u);
    EXPECT_EQ(ev.event_time_ns, 123456789);
    EXPECT_EQ(ev.pointer_count, n);
    EXPECT_STREQ(ActionName(ev.type, ev.action), "POINTER_DOWN");
    EXPECT_STREQ(ActionNameByIndex(ev.action_index), "POINTER_DOWN");  // the index the record's name uses
    EXPECT_EQ(DecodeReceived(*l, p.data(), p.size() - 1, &ev), Verdict::kBadSize);
    p.push_back(0);
    EXPECT_EQ(DecodeReceived(*l, p.data(), p.size(), &ev), Verdict::kBadSize);
  }
  for (uint32_t bad : {0u, 17u}) {
    auto p = Motion(s, 1, 2, 5, 1);
    Put<uint32_t>(&p, 8 + s.pointer_count, bad);
    EXPECT_EQ(DecodeReceived(*l, p.data(), p.size(), &ev), Verdict::kBadField);
  }
  auto zero_seq = Motion(s, 0, 2, 5, 1);
  EXPECT_EQ(DecodeReceived(*l, zero_seq.data(), zero_seq.size(), &ev), Verdict::kBadField);
  auto bad_action = Motion(s, 3, 0x10000, 5, 1);
  EXPECT_EQ(DecodeReceived(*l, bad_action.data(), bad_action.size(), &ev), Verdict::kBadField);

  std::vector<uint8_t> key(s.key_size, 0);
  Put<uint32_t>(&key, 0, s.key);
  Put<uint32_t>(&key, s.seq_header ? 4 : 8, 9);
  Put<int64_t>(&key, 16, 42);
  Put<int32_t>(&key, 8 + s.action, 1);
  ASSERT_EQ(DecodeReceived(*l, key.data(), key.size(), &ev), Verdict::kOk);
  EXPECT_EQ(ev.type, EventType::kKey);
  EXPECT_STREQ(ActionName(ev.type, ev.action), "UP");
  EXPECT_STREQ(ActionNameByIndex(ev.action_index), "UP");
  EXPECT_EQ(DecodeReceived(*l, key.data(), 7, &ev), Verdict::kShort);
  Put<uint32_t>(&key, 0, 0x55);
  EXPECT_EQ(DecodeReceived(*l, key.data(), key.size(), &ev), Verdict::kUnknownType);

  std::vector<uint8_t> fin(s.finished_size, 0);
  Put<uint32_t>(&fin, 0, s.finished);
  Put<uint32_t>(&fin, s.seq_header ? 4 : 8, 9);
  fin[s.seq_header ? 8 : 12] = 1;
  if (s.finished_size == 24) Put<int64_t>(&fin, 16, 99);
  FinishedSignal f;
  ASSERT_EQ(DecodeSent(*l, fin.data(), fin.size(), &f), Verdict::kOk);
  EXPECT_EQ(f.seq, 9u);
  EXPECT_TRUE(f.handled);
  EXPECT_EQ(f.consume_time_ns, s.finished_size == 24 ? 99 : 0);
  EXPECT_EQ(DecodeSent(*l, fin.data(), fin.size() - 1, &f), Verdict::kBadSize);
  // A FINISHED received, or a KEY sent, is another type: never an event and never a finish.
  EXPECT_EQ(DecodeReceived(*l, fin.data(), fin.size(), &ev), Verdict::kOtherType);
  Put<uint32_t>(&key, 0, s.key);
  EXPECT_EQ(DecodeSent(*l, key.data(), key.size(), &f), Verdict::kOtherType);
}

INSTANTIATE_TEST_SUITE_P(Sheet, PerRelease, ::testing::ValuesIn(kSheet),
                         [](const ::testing::TestParamInfo<Sheet>& i) { return "api" + std::to_string(i.param.api); });

TEST(InputLayouts, CoverAndroid8Through16AndNothingElse) {
  EXPECT_EQ(LayoutForApi(25), nullptr);
  EXPECT_EQ(LayoutForApi(37), nullptr);
  for (int api = 26; api <= 36; ++api) EXPECT_NE(LayoutForApi(api), nullptr) << api;
  EXPECT_TRUE(IsInputMessageCapacity(2344));
  EXPECT_FALSE(IsInputMessageCapacity(4096));
}

TEST(InputLayouts, TimelineIsNotAFinish) {
  const Layout* l = LayoutForApi(33);
  std::vector<uint8_t> t(32, 0);
  Put<uint32_t>(&t, 0, 6);
  Put<uint32_t>(&t, 4, 5);
  FinishedSignal f;
  EXPECT_EQ(DecodeSent(*l, t.data(), t.size(), &f), Verdict::kOtherType);
}

}  // namespace
}  // namespace jp::input
