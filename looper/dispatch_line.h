// Parsing Looper's dispatch log line, ">>>>> Dispatching to " + msg.target + " " + msg.callback + ": " +
// msg.what, into the names a record carries. Works on views into the caller's buffer (the main thread's
// Printer callback copies the Java string into a fixed stack buffer), so nothing here allocates.
//
// What the pieces look like (AOSP toString()s):
// - target: Handler.toString() = "Handler (" + class name + ") {" + hex identity + "}"; kept as the class.
// - callback: "null", or a Runnable's toString(), by default class + "@" + hex identity; the identity (and
//   a JVM hidden class' "/0x..." suffix on lambdas) is dropped so that every post of the same code shares
//   one interned name.
// - what: a decimal int after the last ": ".
// A callback whose toString() contains spaces is split at its last space: the record is then less exact
// but the timing is unaffected.
#ifndef JANKPROBE_LOOPER_DISPATCH_LINE_H_
#define JANKPROBE_LOOPER_DISPATCH_LINE_H_

#include <cstdint>
#include <string_view>

namespace jp::looper {

struct DispatchNames {
  std::string_view target;    // the Handler's class ("" if the text had none)
  std::string_view callback;  // the Runnable's class, "" when msg.callback was null
  int32_t what = 0;
  bool has_what = false;      // false when the line was cut before ": what"
};

constexpr std::string_view kDispatchPrefix = ">>>>> Dispatching to ";

// False when the line does not start with the dispatch prefix.
bool ParseDispatchLine(std::string_view line, DispatchNames* out);

// The class part of a Handler.toString() / Object.toString() text.
std::string_view HandlerClass(std::string_view text);
std::string_view RunnableClass(std::string_view text);

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_DISPATCH_LINE_H_
