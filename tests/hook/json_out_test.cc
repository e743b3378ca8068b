#include "hook/json_out.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace jp::hook {
namespace {

// The same calls on JsonOut and on rapidjson::Writer (what the library used before, and what readers of
// reports and traces were written against) must give the same text.
template <typename W>
void WriteSample(W& w) {
  std::string every_byte;
  for (int c = 1; c < 0x80; ++c) every_byte += static_cast<char>(c);
  every_byte += "\xc3\xa9\xe2\x82\xac";  // UTF-8 passes through unescaped
  w.StartObject();
  w.Key("s");
  w.String(every_byte.data(), static_cast<rapidjson::SizeType>(every_byte.size()));
  w.Key("empty");
  w.String("");
  w.Key("nul inside");
  w.String("a\0b", 3);
  w.Key("ints");
  w.StartArray();
  w.Int(0);
  w.Int(-1);
  w.Int(std::numeric_limits<int>::min());
  w.Uint(std::numeric_limits<unsigned>::max());
  w.Int64(std::numeric_limits<int64_t>::min());
  w.Uint64(std::numeric_limits<uint64_t>::max());
  w.EndArray();
  w.Key("doubles");
  w.StartArray();
  for (double d : {0.0, -0.0, 1.0, 0.1, 16.666666666666668, 1e21, 1.5e-7, -123456.789, 5e-324, 1.7976931348623157e308}) {
    w.Double(d);
  }
  w.EndArray();
  w.Key("nested");
  w.StartObject();
  w.Key("a");
  w.StartArray();
  w.StartObject();
  w.EndObject();
  w.StartArray();
  w.EndArray();
  w.Null();
  w.Bool(true);
  w.Bool(false);
  w.EndArray();
  w.EndObject();
  w.Key("k\"ey\n");
  w.Bool(true);
  w.EndObject();
}

TEST(JsonOutTest, WritesTheSameTextAsRapidjsonWriter) {
  JsonOut ours;
  WriteSample(ours);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> theirs(buf);
  WriteSample(theirs);
  EXPECT_EQ(ours.str(), std::string(buf.GetString(), buf.GetSize()));
}

TEST(JsonOutTest, FieldsAreKeyThenValue) {
  JsonOut w;
  w.StartObject();
  w.Field("u", uint64_t{18446744073709551615u});
  w.Field("i", int64_t{-5});
  w.Field("i32", int32_t{-7});
  w.Field("u32", uint32_t{7});
  w.Field("d", 0.25);
  w.Field("s", std::string("x\"y"));
  w.Field("c", "lit");
  w.Field("null ptr", static_cast<const char*>(nullptr));
  w.FieldBool("b", false);
  w.EndObject();
  EXPECT_EQ(w.str(),
            "{\"u\":18446744073709551615,\"i\":-5,\"i32\":-7,\"u32\":7,\"d\":0.25,\"s\":\"x\\\"y\",\"c\":\"lit\","
            "\"null ptr\":\"\",\"b\":false}");
}

TEST(JsonOutTest, NotANumberIsWrittenAsNullSoTheTextStaysJson) {
  JsonOut w;
  w.StartArray();
  w.Double(std::nan(""));
  w.Double(std::numeric_limits<double>::infinity());
  w.Double(-std::numeric_limits<double>::infinity());
  w.Double(2.5);
  w.EndArray();
  EXPECT_EQ(w.str(), "[null,null,null,2.5]");
}

// Embed copies a value as rapidjson's Document parse + Accept did: numbers, escapes and order normalised
// the same way.
TEST(JsonOutTest, EmbedCopiesAValueAsDocumentAcceptDid) {
  const std::string text =
      " {\"a\" : [1, -2, 3.50, 1e3, 18446744073709551615, true, false, null],"
      " \"s\":\"\\u00e9\\n\\/x\", \"o\":{}, \"dup\":1, \"dup\":2} ";
  JsonOut ours;
  ours.StartArray();
  ASSERT_TRUE(ours.Embed(text));
  ASSERT_TRUE(ours.Embed("7"));
  ours.EndArray();

  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> theirs(buf);
  theirs.StartArray();
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.data(), text.size()).HasParseError());
  d.Accept(theirs);
  theirs.Uint(7);
  theirs.EndArray();
  EXPECT_EQ(ours.str(), std::string(buf.GetString(), buf.GetSize()));
}

TEST(JsonOutTest, EmbedOfABadTextWritesNothingAndTheDocumentStaysValid) {
  for (const char* bad : {"", "   ", "{", "{\"a\":1,}", "{\"a\":1} x", "[1,2", "{\"a\":tru}", "nope", "{} {}"}) {
    JsonOut w;
    w.StartObject();
    w.Field("before", uint64_t{1});
    w.Key("value");
    EXPECT_FALSE(w.Embed(bad)) << bad;
    w.Null();  // the caller's stand-in
    EXPECT_FALSE(w.EmbedField("skipped", bad)) << bad;
    EXPECT_TRUE(w.EmbedField("kept", "{\"x\":[1]}"));
    w.Field("after", uint64_t{2});
    w.EndObject();
    EXPECT_EQ(w.str(), "{\"before\":1,\"value\":null,\"kept\":{\"x\":[1]},\"after\":2}") << bad;
    rapidjson::Document d;
    EXPECT_FALSE(d.Parse(w.str().c_str()).HasParseError()) << w.str();
  }
}

TEST(JsonOutTest, EmbedFieldFirstInAnObjectGetsNoComma) {
  JsonOut w;
  w.StartObject();
  EXPECT_FALSE(w.EmbedField("bad", "{"));
  EXPECT_TRUE(w.EmbedField("good", "[]"));
  w.EndObject();
  EXPECT_EQ(w.str(), "{\"good\":[]}");
}

// The file mode flushes as its buffer fills: a text far larger than the buffer arrives whole and the same.
TEST(JsonOutTest, FileModeWritesTheSameTextInPieces) {
  auto write_events = [](JsonOut& w) {
    w.StartObject();
    w.Key("traceEvents");
    w.StartArray();
    for (int i = 0; i < 5000; ++i) {
      w.StartObject();
      w.Field("name", "event \"" + std::to_string(i) + "\"");
      w.Field("ts", i * 1.25);
      w.Key("args");
      if (!w.Embed("{\"i\":" + std::to_string(i) + "}")) w.Null();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  };
  JsonOut in_memory;
  write_events(in_memory);
  ASSERT_GT(in_memory.str().size(), 4 * 32 * 1024u);

  FILE* f = tmpfile();
  ASSERT_NE(f, nullptr);
  JsonOut to_file(f);
  write_events(to_file);
  EXPECT_LT(to_file.str().size(), 33 * 1024u) << "the buffer was flushed as it filled";
  ASSERT_TRUE(to_file.Flush());
  EXPECT_TRUE(to_file.str().empty());
  ASSERT_EQ(fseek(f, 0, SEEK_SET), 0);
  std::string back;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) back.append(chunk, n);
  fclose(f);
  EXPECT_EQ(back, in_memory.str());
}

TEST(JsonOutTest, FileModeReportsAFailedWrite) {
  FILE* f = fopen("/dev/full", "w");
  if (!f) GTEST_SKIP() << "no /dev/full here";
  setvbuf(f, nullptr, _IONBF, 0);  // no stdio buffer: the write itself fails (ENOSPC)
  JsonOut w(f);
  w.StartArray();
  w.String("x");
  w.EndArray();
  EXPECT_FALSE(w.Flush());
  EXPECT_FALSE(w.Flush()) << "a failure stays reported";
  fclose(f);
}

}  // namespace
}  // namespace jp::hook
