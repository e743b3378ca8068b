#include "plt/sleb128.h"

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace jp::plt {
namespace {

// Reference encoder (minimal form), written from the DWARF definition.
std::vector<uint8_t> Encode(int64_t v) {
  std::vector<uint8_t> out;
  bool more = true;
  while (more) {
    uint8_t byte = v & 0x7f;
    v >>= 7;  // arithmetic shift
    if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) {
      more = false;
    } else {
      byte |= 0x80;
    }
    out.push_back(byte);
  }
  return out;
}

bool Decode(const std::vector<uint8_t>& bytes, int64_t* v, size_t* used) {
  const uint8_t* p = bytes.data();
  bool ok = ReadSleb128(&p, bytes.data() + bytes.size(), v);
  *used = static_cast<size_t>(p - bytes.data());
  return ok;
}

TEST(Sleb128, KnownEncodings) {
  struct Case {
    std::vector<uint8_t> bytes;
    int64_t value;
  } cases[] = {
      {{0x00}, 0},          {{0x02}, 2},          {{0x7e}, -2},          {{0xff, 0x00}, 127},
      {{0x81, 0x7f}, -127}, {{0x80, 0x01}, 128},  {{0x80, 0x7f}, -128},  {{0x3f}, 63},
      {{0x40}, -64},        {{0xc0, 0x00}, 64},   {{0xe5, 0x8e, 0x26}, 624485},
  };
  for (const Case& c : cases) {
    int64_t v = 0;
    size_t used = 0;
    ASSERT_TRUE(Decode(c.bytes, &v, &used));
    EXPECT_EQ(v, c.value);
    EXPECT_EQ(used, c.bytes.size());
  }
}

TEST(Sleb128, ExtremesTakeTenBytes) {
  for (int64_t v : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    std::vector<uint8_t> e = Encode(v);
    EXPECT_EQ(e.size(), 10u);
    int64_t got;
    size_t used;
    ASSERT_TRUE(Decode(e, &got, &used));
    EXPECT_EQ(got, v);
  }
}

TEST(Sleb128, RoundTripsRandomValuesOfEveryMagnitude) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    int64_t v = static_cast<int64_t>(rng()) >> (rng() % 64);
    std::vector<uint8_t> e = Encode(v);
    int64_t got;
    size_t used;
    ASSERT_TRUE(Decode(e, &got, &used)) << v;
    ASSERT_EQ(got, v);
    ASSERT_EQ(used, e.size());
  }
}

TEST(Sleb128, ReadsConsecutiveValues) {
  std::vector<uint8_t> stream;
  for (int64_t v : {5, -300, 1 << 20}) {
    auto e = Encode(v);
    stream.insert(stream.end(), e.begin(), e.end());
  }
  const uint8_t* p = stream.data();
  const uint8_t* end = p + stream.size();
  int64_t a, b, c, d;
  ASSERT_TRUE(ReadSleb128(&p, end, &a));
  ASSERT_TRUE(ReadSleb128(&p, end, &b));
  ASSERT_TRUE(ReadSleb128(&p, end, &c));
  EXPECT_EQ(a, 5);
  EXPECT_EQ(b, -300);
  EXPECT_EQ(c, 1 << 20);
  EXPECT_EQ(p, end);
  EXPECT_FALSE(ReadSleb128(&p, end, &d));
}

TEST(Sleb128, TruncatedInputFailsWithoutAdvancing) {
  std::vector<uint8_t> bytes = {0x80, 0x80};  // continuation bits with nothing after
  const uint8_t* p = bytes.data();
  int64_t v;
  EXPECT_FALSE(ReadSleb128(&p, bytes.data() + bytes.size(), &v));
  EXPECT_EQ(p, bytes.data());
  std::vector<uint8_t> empty;
  const uint8_t* q = empty.data();
  EXPECT_FALSE(ReadSleb128(&q, q, &v));
}

TEST(Sleb128, RejectsValuesWiderThan64Bits) {
  std::vector<uint8_t> eleven(10, 0x80);
  eleven.push_back(0x00);
  int64_t v;
  size_t used;
  EXPECT_FALSE(Decode(eleven, &v, &used));
  // A 10th byte carrying payload beyond bit 63.
  std::vector<uint8_t> overflow(9, 0x80);
  overflow.push_back(0x02);
  EXPECT_FALSE(Decode(overflow, &v, &used));
  // ...but a sign-extension 10th byte is fine (non-minimal encoding of 0 and of -1 << 63).
  std::vector<uint8_t> zero(9, 0x80);
  zero.push_back(0x00);
  ASSERT_TRUE(Decode(zero, &v, &used));
  EXPECT_EQ(v, 0);
}

}  // namespace
}  // namespace jp::plt
