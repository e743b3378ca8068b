// Internal to the config parser: the schema walk over an already parsed, limit-checked JSON document.
// Split from config_parser.cc so that "is this JSON" and "is this our schema" stay separate files.
#ifndef JANKPROBE_HOOK_CONFIG_SCHEMA_H_
#define JANKPROBE_HOOK_CONFIG_SCHEMA_H_

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "hook/config.h"

namespace jp {

struct SchemaReport {
  std::string error;                  // set when ReadConfigSchema returns false
  std::vector<std::string> warnings;  // at most ConfigLimits::kMaxWarnings + 1 entries
};

// Fills *out (which holds the defaults on entry) from the root object. Returns false at the first value
// that does not fit the schema; *out is then partly filled and must be thrown away.
bool ReadConfigSchema(const rapidjson::Value& root, Config* out, SchemaReport* report);

// A key as it appears in a path: control and non-ASCII bytes escaped, long keys cut, so a message built
// from a hostile document stays short and printable.
std::string PathSegment(std::string_view key);

// The "got ..." part of a message: "-5", "100.5", "a string (\"abc\")", "an array", "null".
std::string DescribeJsonValue(const rapidjson::Value& value);

}  // namespace jp

#endif  // JANKPROBE_HOOK_CONFIG_SCHEMA_H_
