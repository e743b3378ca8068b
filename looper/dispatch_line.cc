#include "looper/dispatch_line.h"

namespace jp::looper {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Drops a trailing "@<hex>" (Object.toString's identity hash).
std::string_view DropIdentity(std::string_view s) {
  const size_t at = s.rfind('@');
  if (at == std::string_view::npos || at + 1 == s.size()) return s;
  for (size_t i = at + 1; i < s.size(); ++i) {
    if (!IsHex(s[i])) return s;
  }
  return s.substr(0, at);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view HandlerClass(std::string_view text) {
  text = Trim(text);
  // "Handler (com.example.Foo) {1b6d3586}"
  const size_t open = text.find(" (");
  if (open != std::string_view::npos) {
    const size_t close = text.find(')', open + 2);
    if (close != std::string_view::npos && close > open + 2) return text.substr(open + 2, close - open - 2);
  }
  // A subclass with its own toString(): its text up to an identity suffix, if any.
  const size_t brace = text.rfind(" {");
  if (brace != std::string_view::npos && text.back() == '}') text = text.substr(0, brace);
  return DropIdentity(text);
}

std::string_view RunnableClass(std::string_view text) {
  text = Trim(text);
  if (text == "null") return std::string_view();
  text = DropIdentity(text);
  // HotSpot names lambda classes "Outer$$Lambda$14/0x0000000800c03000": the address changes per run.
  const size_t hidden = text.find("/0x");
  if (hidden != std::string_view::npos) text = text.substr(0, hidden);
  return text;
}

bool ParseDispatchLine(std::string_view line, DispatchNames* out) {
  *out = DispatchNames{};
  if (line.substr(0, kDispatchPrefix.size()) != kDispatchPrefix) return false;
  std::string_view rest = line.substr(kDispatchPrefix.size());
  const size_t colon = rest.rfind(": ");
  if (colon != std::string_view::npos) {
    std::string_view digits = rest.substr(colon + 2);
    bool negative = false;
    if (!digits.empty() && digits.front() == '-') {
      negative = true;
      digits.remove_prefix(1);
    }
    int64_t v = 0;
    size_t n = 0;
    while (n < digits.size() && digits[n] >= '0' && digits[n] <= '9' && v <= INT32_MAX) {
      v = v * 10 + (digits[n] - '0');
      ++n;
    }
    if (n > 0 && n == digits.size()) {
      out->what = static_cast<int32_t>(negative ? -v : v);
      out->has_what = true;
      rest = rest.substr(0, colon);
    }
  }
  const size_t space = rest.rfind(' ');
  if (space == std::string_view::npos) {
    out->target = HandlerClass(rest);
    return true;
  }
  out->target = HandlerClass(rest.substr(0, space));
  out->callback = RunnableClass(rest.substr(space + 1));
  return true;
}

}  // namespace jp::looper
