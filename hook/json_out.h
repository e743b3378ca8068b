// JsonOut: the one JSON writer of the library (status, reports, Chrome trace export).
//
// Why not rapidjson::Writer: its methods are templates inlined at every call site, and the library had two
// instantiations (a string buffer and a FILE stream) of every event writer on top; a status function of 30
// fields compiled to ~20 KB of concatenation or inlined writer code. Here every method is out of line
// (hook/json_out.cc, compiled once), so a field costs a call at the call site. The output is the same text
// rapidjson::Writer produces (the same escapes, the same shortest round-trip doubles), and the method names
// and signatures are Writer's, so templates written for a Writer (hook/event_json.h) take a JsonOut, and a
// JsonOut is a rapidjson SAX handler (Embed copies a JSON text through it, validating it on the way).
//
// A JsonOut writes into a std::string, or, made with a FILE*, into a 32 KiB buffer flushed to the file as
// it fills (exports of many thousand events never hold the whole text). Methods return true like Writer's
// (the SAX interface wants bool); write errors of the file mode are reported once, by Flush().
#ifndef JANKPROBE_HOOK_JSON_OUT_H_
#define JANKPROBE_HOOK_JSON_OUT_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace jp::hook {

class JsonOut {
 public:
  JsonOut() = default;
  explicit JsonOut(FILE* file) : file_(file) {}
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;

  bool StartObject();
  bool EndObject(size_t member_count = 0);
  bool StartArray();
  bool EndArray(size_t element_count = 0);

  // Keys and strings are escaped as JSON wants; a null pointer writes "".
  bool Key(const char* s);
  bool Key(const char* s, size_t len, bool copy = false);
  bool Key(std::string_view s) { return Key(s.data(), s.size()); }
  bool String(const char* s);
  bool String(const char* s, size_t len, bool copy = false);
  bool String(std::string_view s) { return String(s.data(), s.size()); }

  bool Null();
  bool Bool(bool b);
  bool Int(int i) { return Int64(i); }
  bool Uint(unsigned u) { return Uint64(u); }
  bool Int64(int64_t i);
  bool Uint64(uint64_t u);
  // Shortest text that reads back as the same double; NaN and infinities (not JSON) become null.
  bool Double(double d);
  // A number already in text form (the SAX interface's, used with kParseNumbersAsStringsFlag).
  bool RawNumber(const char* s, size_t len, bool copy = false);

  // Appends `json` as the next value after checking that it is exactly one JSON value (whitespace around
  // it allowed). If it is not, nothing is written and false is returned: the caller writes a stand-in
  // (null, {}), so that a bad text from a monitor never makes the whole document unreadable.
  bool Embed(std::string_view json);
  // Key + Embed, all or nothing: if `json` is not one JSON value, neither the key nor a value is written.
  bool EmbedField(const char* key, std::string_view json);

  // Key + value in one call: the common case of status objects, one call per field at the call site.
  void Field(const char* key, std::string_view value);
  void Field(const char* key, const char* value) { Field(key, std::string_view(value ? value : "")); }
  void Field(const char* key, const std::string& value) { Field(key, std::string_view(value)); }
  void Field(const char* key, uint64_t value);
  void Field(const char* key, int64_t value);
  void Field(const char* key, uint32_t value) { Field(key, static_cast<uint64_t>(value)); }
  void Field(const char* key, int32_t value) { Field(key, static_cast<int64_t>(value)); }
  void Field(const char* key, double value);
  void FieldBool(const char* key, bool value);

  // String mode: the text so far. File mode: what is not flushed yet.
  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }
  // File mode: writes what is buffered; false if any write to the file failed.
  bool Flush();

 private:
  void Prefix();
  void Escaped(const char* s, size_t len);
  void EndContainer(char c);

  std::string out_;
  FILE* file_ = nullptr;
  bool write_failed_ = false;
  bool first_ = true;       // no value yet in the current container (or at the top)
  bool after_key_ = false;  // a key was written; its value comes next, without a comma
  int embedding_ = 0;       // inside Embed: no flush (a failed embed is cut off the buffer)
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_JSON_OUT_H_
