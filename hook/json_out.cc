#include "hook/json_out.h"

#include <rapidjson/internal/dtoa.h>
#include <rapidjson/internal/itoa.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/reader.h>

#include <cmath>
#include <cstring>

namespace jp::hook {
namespace {

// Flushed to the file once this much is buffered (file mode).
constexpr size_t kFlushBytes = 32 * 1024;

}  // namespace

void JsonOut::Prefix() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_) out_ += ',';
  first_ = false;
}

// The escapes rapidjson::Writer writes (so that the text is the same as before): the two-character forms
// for \b \f \n \r \t, \u00XX with upper-case hex for the other control characters, \" and \\.
void JsonOut::Escaped(const char* s, size_t len) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out_ += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < len; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_.append(s + run, i - run);
    run = i + 1;
    char esc[6] = {'\\', 0, 0, 0, 0, 0};
    size_t n = 2;
    switch (c) {
      case '"': esc[1] = '"'; break;
      case '\\': esc[1] = '\\'; break;
      case '\b': esc[1] = 'b'; break;
      case '\f': esc[1] = 'f'; break;
      case '\n': esc[1] = 'n'; break;
      case '\r': esc[1] = 'r'; break;
      case '\t': esc[1] = 't'; break;
      default:
        esc[1] = 'u';
        esc[2] = '0';
        esc[3] = '0';
        esc[4] = kHex[c >> 4];
        esc[5] = kHex[c & 15];
        n = 6;
    }
    out_.append(esc, n);
  }
  out_.append(s + run, len - run);
  out_ += '"';
}

bool JsonOut::StartObject() {
  Prefix();
  out_ += '{';
  first_ = true;
  return true;
}

bool JsonOut::StartArray() {
  Prefix();
  out_ += '[';
  first_ = true;
  return true;
}

void JsonOut::EndContainer(char c) {
  out_ += c;
  first_ = false;  // the container itself was a value of its parent
  if (file_ && embedding_ == 0 && out_.size() >= kFlushBytes) Flush();
}

bool JsonOut::EndObject(size_t) {
  EndContainer('}');
  return true;
}

bool JsonOut::EndArray(size_t) {
  EndContainer(']');
  return true;
}

bool JsonOut::Key(const char* s) { return Key(s, s ? std::strlen(s) : 0); }

bool JsonOut::Key(const char* s, size_t len, bool) {
  Prefix();
  Escaped(s ? s : "", s ? len : 0);
  out_ += ':';
  after_key_ = true;
  return true;
}

bool JsonOut::String(const char* s) { return String(s, s ? std::strlen(s) : 0); }

bool JsonOut::String(const char* s, size_t len, bool) {
  Prefix();
  Escaped(s ? s : "", s ? len : 0);
  return true;
}

bool JsonOut::Null() {
  Prefix();
  out_ += "null";
  return true;
}

bool JsonOut::Bool(bool b) {
  Prefix();
  out_ += b ? "true" : "false";
  return true;
}

bool JsonOut::Int64(int64_t i) {
  Prefix();
  char buf[24];
  out_.append(buf, static_cast<size_t>(rapidjson::internal::i64toa(i, buf) - buf));
  return true;
}

bool JsonOut::Uint64(uint64_t u) {
  Prefix();
  char buf[24];
  out_.append(buf, static_cast<size_t>(rapidjson::internal::u64toa(u, buf) - buf));
  return true;
}

bool JsonOut::Double(double d) {
  if (!std::isfinite(d)) return Null();
  Prefix();
  char buf[32];
  out_.append(buf, static_cast<size_t>(rapidjson::internal::dtoa(d, buf) - buf));
  return true;
}

bool JsonOut::RawNumber(const char* s, size_t len, bool) {
  Prefix();
  out_.append(s, len);
  return true;
}

bool JsonOut::Embed(std::string_view json) { return EmbedField(nullptr, json); }

bool JsonOut::EmbedField(const char* key, std::string_view json) {
  const size_t mark = out_.size();
  const bool first = first_;
  const bool after_key = after_key_;
  ++embedding_;
  if (key) Key(key);
  // The reader calls this writer's SAX methods as it parses: the value is copied and checked in one pass,
  // with no document built. The same parse flags as rapidjson::Document::Parse (one value, nothing after).
  rapidjson::MemoryStream ms(json.data(), json.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> is(ms);
  rapidjson::Reader reader;
  const bool ok = !reader.Parse(is, *this).IsError();
  --embedding_;
  if (!ok) {
    out_.resize(mark);
    first_ = first;
    after_key_ = after_key;
  }
  return ok;
}

void JsonOut::Field(const char* key, std::string_view value) {
  Key(key);
  String(value.data(), value.size());
}

void JsonOut::Field(const char* key, uint64_t value) {
  Key(key);
  Uint64(value);
}

void JsonOut::Field(const char* key, int64_t value) {
  Key(key);
  Int64(value);
}

void JsonOut::Field(const char* key, double value) {
  Key(key);
  Double(value);
}

void JsonOut::FieldBool(const char* key, bool value) {
  Key(key);
  Bool(value);
}

bool JsonOut::Flush() {
  if (!file_) return true;
  if (!out_.empty() && std::fwrite(out_.data(), 1, out_.size(), file_) != out_.size()) write_failed_ = true;
  out_.clear();
  return !write_failed_;
}

}  // namespace jp::hook
