// JSON text -> Config, in three passes, each of which can reject the document:
//   1. RapidJSON's SAX reader (strict JSON, UTF-8 validated) feeding a DOM through a handler that enforces
//      the depth and string-length limits while parsing, so a hostile document is stopped before it costs
//      stack or memory, and that tracks the key path for readable parse errors;
//   2. a walk over the DOM that rejects duplicate keys (RapidJSON keeps both copies, which would make
//      "which one wins" an accident of lookup order);
//   3. the schema walk (config_schema.cc) that fills a fresh Config and collects unknown-key warnings.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "hook/config.h"
#include "hook/config_schema.h"

namespace jp {
namespace {

// Strict JSON (no comments, NaN, trailing commas), UTF-8 validated. Full precision so that a sample_rate
// reads back bit-exact from what ConfigToJson() wrote (the default fast path can be off by an ulp).
constexpr unsigned kParseFlags =
    rapidjson::kParseDefaultFlags | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag;

// Forwards SAX events to the document, stopping the parse (by returning false) when a limit is crossed.
// Keeps the path to the value being parsed: one frame per open object or array.
class LimitingHandler {
 public:
  explicit LimitingHandler(rapidjson::Document* doc) : doc_(doc) {}

  bool Null() { return Value() && doc_->Null(); }
  bool Bool(bool b) { return Value() && doc_->Bool(b); }
  bool Int(int i) { return Value() && doc_->Int(i); }
  bool Uint(unsigned u) { return Value() && doc_->Uint(u); }
  bool Int64(int64_t i) { return Value() && doc_->Int64(i); }
  bool Uint64(uint64_t u) { return Value() && doc_->Uint64(u); }
  bool Double(double d) { return Value() && doc_->Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return Value() && doc_->RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    if (!Value()) return false;
    if (n > ConfigLimits::kMaxStringBytes) {
      return Stop("string of " + std::to_string(n) + " bytes exceeds the " +
                  std::to_string(ConfigLimits::kMaxStringBytes) + "-byte limit");
    }
    return doc_->String(s, n, copy);
  }
  bool StartObject() { return Value() && Open(false) && doc_->StartObject(); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    Frame& f = frames_.back();
    f.has_key = true;
    f.key = PathSegment(std::string_view(s, n));
    if (n > ConfigLimits::kMaxStringBytes) {
      return Stop("key of " + std::to_string(n) + " bytes exceeds the " +
                  std::to_string(ConfigLimits::kMaxStringBytes) + "-byte limit");
    }
    return doc_->Key(s, n, copy);
  }
  bool EndObject(rapidjson::SizeType n) { frames_.pop_back(); return doc_->EndObject(n); }
  bool StartArray() { return Value() && Open(true) && doc_->StartArray(); }
  bool EndArray(rapidjson::SizeType n) { frames_.pop_back(); return doc_->EndArray(n); }

  // Why the handler stopped the parse ("" if it did not).
  const std::string& stop_reason() const { return stop_reason_; }

  // Path to where the reader is. `pending` is for RapidJSON's own errors: they happen while reading a value
  // that has not been reported yet, so inside an array it is the element after the last reported one.
  std::string Path(bool pending) const {
    std::string path;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.is_array) {
        int64_t index = f.index + ((pending && i + 1 == frames_.size()) ? 1 : 0);
        if (index >= 0) path += "[" + std::to_string(index) + "]";
      } else if (f.has_key) {
        if (!path.empty()) path += '.';
        path += f.key;
      }
    }
    return path;
  }

 private:
  struct Frame {
    bool is_array = false;
    bool has_key = false;
    int64_t index = -1;
    std::string key;
  };

  // Every value inside an array advances its index, so paths name the element.
  bool Value() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return true;
  }
  bool Open(bool is_array) {
    if (frames_.size() >= static_cast<size_t>(ConfigLimits::kMaxDepth)) {
      return Stop("nesting deeper than " + std::to_string(ConfigLimits::kMaxDepth) + " levels");
    }
    frames_.push_back(Frame{is_array, false, -1, {}});
    return true;
  }
  bool Stop(std::string reason) {
    stop_reason_ = std::move(reason);
    return false;
  }

  rapidjson::Document* doc_;
  std::vector<Frame> frames_;
  std::string stop_reason_;
};

// Document::Populate wants a generator that drives SAX events into the document.
struct Generator {
  std::string_view json;
  LimitingHandler* handler;
  rapidjson::ParseResult result;
  bool operator()(rapidjson::Document&) {
    rapidjson::MemoryStream stream(json.data(), json.size());
    rapidjson::Reader reader;
    result = reader.Parse<kParseFlags>(stream, *handler);
    return !result.IsError();
  }
};

std::string WithPath(const std::string& path, const std::string& message) {
  return path.empty() ? message : path + ": " + message;
}

// Objects holding the same key twice. Depth is bounded by the handler, so recursion is too.
bool FindDuplicateKey(const rapidjson::Value& value, const std::string& path, std::string* error) {
  if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      if (!FindDuplicateKey(value[i], path + "[" + std::to_string(i) + "]", error)) return false;
    }
    return true;
  }
  if (!value.IsObject()) return true;
  std::vector<std::string_view> names;
  names.reserve(value.MemberCount());
  for (const auto& m : value.GetObject()) {
    names.emplace_back(m.name.GetString(), m.name.GetStringLength());
  }
  std::vector<std::string_view> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) {
      std::string key = PathSegment(sorted[i]);
      std::string where = path.empty() ? std::string("the root object") : path;
      *error = WithPath(path.empty() ? key : path + "." + key,
                        "duplicate key (appears more than once in " + where + ")");
      return false;
    }
  }
  for (const auto& m : value.GetObject()) {
    std::string child = PathSegment(std::string_view(m.name.GetString(), m.name.GetStringLength()));
    if (!FindDuplicateKey(m.value, path.empty() ? child : path + "." + child, error)) return false;
  }
  return true;
}

}  // namespace

ConfigParseResult ParseConfig(std::string_view json, const DeviceFacts& device_defaults) {
  ConfigParseResult out;
  if (json.size() > ConfigLimits::kMaxDocumentBytes) {
    out.error = "config document is " + std::to_string(json.size()) + " bytes, larger than the " +
                std::to_string(ConfigLimits::kMaxDocumentBytes) + "-byte limit";
    return out;
  }
  // The reader treats a NUL byte as the end of input, which would silently accept "{}\0anything".
  if (const void* nul = std::memchr(json.data(), 0, json.size())) {
    size_t offset = static_cast<size_t>(static_cast<const char*>(nul) - json.data());
    out.error = "NUL byte at offset " + std::to_string(offset) + ": JSON text cannot contain one";
    return out;
  }

  rapidjson::Document doc;
  LimitingHandler handler(&doc);
  Generator generator{json, &handler, {}};
  doc.Populate(generator);
  if (generator.result.IsError()) {
    if (!handler.stop_reason().empty()) {
      out.error = WithPath(handler.Path(false), handler.stop_reason());
    } else {
      out.error = WithPath(handler.Path(true),
                           std::string("invalid JSON at offset ") + std::to_string(generator.result.Offset()) +
                               ": " + rapidjson::GetParseError_En(generator.result.Code()));
    }
    return out;
  }
  if (!doc.IsObject()) {
    out.error = std::string("the config must be a JSON object, got ") + DescribeJsonValue(doc);
    return out;
  }
  std::string error;
  if (!FindDuplicateKey(doc, "", &error)) {
    out.error = std::move(error);
    return out;
  }

  // The only place a Config is built: a fresh object, handed out only when the whole schema validated.
  Config fresh;
  fresh.device = device_defaults;
  SchemaReport report;
  if (!ReadConfigSchema(doc, &fresh, &report)) {
    out.error = std::move(report.error);
    return out;
  }
  out.warnings = std::move(report.warnings);
  out.config = std::move(fresh);
  return out;
}

bool ParseConfigInto(std::string_view json, Config* running, std::string* error,
                     std::vector<std::string>* warnings) {
  ConfigParseResult result = ParseConfig(json, running->device);
  if (warnings) *warnings = result.warnings;
  if (!result.ok()) {
    if (error) *error = std::move(result.error);
    return false;
  }
  if (error) error->clear();
  *running = std::move(*result.config);
  return true;
}

}  // namespace jp
