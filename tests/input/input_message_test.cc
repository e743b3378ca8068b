// InputMessage decoding per release: packets built from the reference sheet's offsets, and everything
// that must be refused (short, wrong size, unknown type, impossible fields).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "input/input_layouts.h"
#include "input/input_message.h"
#include "input/pending_events.h"

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

// The decoders compiled per layout (what the input tracker's entries run, decoding straight into a
// pending slot) against the generic decoder reading the same layout from the table: every layout, on
// packets of every release (its own and every other one's, valid and broken), must give the same verdict
// and, when ok, the same fields.
using ReceivedDecoder = Verdict (*)(const void*, size_t, ReceivedEvent*);
using SlotDecoder = Verdict (*)(const void*, size_t, PendingEvent*);
using SentDecoder = Verdict (*)(const void*, size_t, FinishedSignal*);
template <size_t... I>
std::array<ReceivedDecoder, sizeof...(I)> ReceivedDecoders(std::index_sequence<I...>) {
  return {&DecodeReceivedAs<static_cast<int>(I)>...};
}
template <size_t... I>
std::array<SlotDecoder, sizeof...(I)> SlotDecoders(std::index_sequence<I...>) {
  return {&DecodeReceivedAs<static_cast<int>(I), PendingEvent>...};
}
template <size_t... I>
std::array<SentDecoder, sizeof...(I)> SentDecoders(std::index_sequence<I...>) {
  return {&DecodeSentAs<static_cast<int>(I)>...};
}

// Packets of one release: motions (1, 2, 16 pointers; one byte short and long), broken motions, keys,
// FINISHED (and short), a TIMELINE-sized packet, an unknown type, a short header.
std::vector<std::vector<uint8_t>> PacketsOf(const Sheet& s) {
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t n : {1u, 2u, 16u}) {
    auto p = Motion(s, 70 + n, 0x205, 123456789 + n, n);
    out.push_back(p);
    out.emplace_back(p.begin(), p.end() - 1);
    p.push_back(0);
    out.push_back(p);
  }
  for (uint32_t bad : {0u, 17u}) {
    auto p = Motion(s, 1, 2, 5, 1);
    Put<uint32_t>(&p, 8 + s.pointer_count, bad);
    out.push_back(p);
  }
  out.push_back(Motion(s, 0, 2, 5, 1));
  out.push_back(Motion(s, 3, 0x10000, 5, 1));
  out.push_back(Motion(s, 3, 13, 5, 1));
  out.push_back(Motion(s, 3, 2, 0, 1));
  for (int32_t action : {0, 1, 2, 3, -1}) {
    std::vector<uint8_t> key(s.key_size, 0);
    Put<uint32_t>(&key, 0, s.key);
    Put<uint32_t>(&key, s.seq_header ? 4 : 8, 9);
    Put<int64_t>(&key, 16, 42);
    Put<int32_t>(&key, 8 + s.action, action);
    out.push_back(key);
  }
  for (uint8_t handled : {0, 1, 2}) {
    std::vector<uint8_t> fin(s.finished_size, 0);
    Put<uint32_t>(&fin, 0, s.finished);
    Put<uint32_t>(&fin, s.seq_header ? 4 : 8, 9);
    fin[s.seq_header ? 8 : 12] = handled;
    if (s.finished_size == 24) Put<int64_t>(&fin, 16, 99);
    out.push_back(fin);
    out.emplace_back(fin.begin(), fin.end() - 1);
  }
  std::vector<uint8_t> zero_consume(24, 0);
  Put<uint32_t>(&zero_consume, 0, s.finished);
  Put<uint32_t>(&zero_consume, 4, 9);
  out.push_back(zero_consume);
  std::vector<uint8_t> timeline(32, 0);
  Put<uint32_t>(&timeline, 0, 6);
  Put<uint32_t>(&timeline, 4, 5);
  out.push_back(timeline);
  std::vector<uint8_t> unknown(64, 0);
  Put<uint32_t>(&unknown, 0, 0x55);
  out.push_back(unknown);
  out.push_back(std::vector<uint8_t>(7, 0));
  return out;
}

TEST(BoundDecoders, EveryLayoutDecodesEveryReleasesPacketsAsTheGenericDecoder) {
  const auto received = ReceivedDecoders(std::make_index_sequence<kLayoutCount>());
  const auto sent = SentDecoders(std::make_index_sequence<kLayoutCount>());
  const auto into_slot = SlotDecoders(std::make_index_sequence<kLayoutCount>());
  size_t layouts = 0;
  const Layout* const* all = AllLayouts(&layouts);
  ASSERT_EQ(layouts, static_cast<size_t>(kLayoutCount));
  int ok_received = 0, ok_sent = 0, compared = 0;
  for (int i = 0; i < kLayoutCount; ++i) {
    const Layout& l = *all[i];
    EXPECT_EQ(LayoutIndex(&l), i);
    for (const Sheet& s : kSheet) {
      for (const auto& p : PacketsOf(s)) {
        SCOPED_TRACE(std::string(l.name) + " on an api" + std::to_string(s.api) + " packet of " +
                     std::to_string(p.size()) + " bytes");
        ReceivedEvent generic, bound;
        generic.seq = bound.seq = 0xDEAD;  // untouched fields must stay as they were in both
        const Verdict gv = DecodeReceived(l, p.data(), p.size(), &generic);
        ASSERT_EQ(received[static_cast<size_t>(i)](p.data(), p.size(), &bound), gv);
        if (gv == Verdict::kOk) {
          ++ok_received;
          EXPECT_EQ(bound.type, generic.type);
          EXPECT_EQ(bound.seq, generic.seq);
          EXPECT_EQ(bound.action, generic.action);
          EXPECT_EQ(bound.event_time_ns, generic.event_time_ns);
          EXPECT_EQ(bound.pointer_count, generic.pointer_count);
          EXPECT_EQ(bound.action_index, generic.action_index);
        }
        auto slot = std::make_unique<PendingEvent>();
        ASSERT_EQ(into_slot[static_cast<size_t>(i)](p.data(), p.size(), slot.get()), gv);
        if (gv == Verdict::kOk) {
          EXPECT_EQ(slot->type, generic.type);
          EXPECT_EQ(slot->seq, generic.seq);
          EXPECT_EQ(slot->action, generic.action);
          EXPECT_EQ(slot->event_time_ns, generic.event_time_ns);
          EXPECT_EQ(slot->pointer_count, generic.pointer_count);
          EXPECT_EQ(slot->action_index, generic.action_index);
        }
        FinishedSignal gf, bf;
        const Verdict gs = DecodeSent(l, p.data(), p.size(), &gf);
        ASSERT_EQ(sent[static_cast<size_t>(i)](p.data(), p.size(), &bf), gs);
        if (gs == Verdict::kOk) {
          ++ok_sent;
          EXPECT_EQ(bf.seq, gf.seq);
          EXPECT_EQ(bf.handled, gf.handled);
          EXPECT_EQ(bf.consume_time_ns, gf.consume_time_ns);
        }
        ++compared;
      }
    }
  }
  // Not vacuous: every layout accepted packets of its own release on both sides.
  EXPECT_GE(ok_received, kLayoutCount * 9);
  EXPECT_GE(ok_sent, kLayoutCount * 2);
  EXPECT_GT(compared, 1000);
  EXPECT_EQ(LayoutIndex(nullptr), -1);
}

}  // namespace
}  // namespace jp::input
