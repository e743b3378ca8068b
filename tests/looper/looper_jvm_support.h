// What the looper monitor's JVM tests (printer source: looper_jvm_test, poll source: looper_poll_jvm_test)
// share: the LooperScenarios calls of the test app and the looper's status details.
#ifndef JANKPROBE_TESTS_LOOPER_LOOPER_JVM_SUPPORT_H_
#define JANKPROBE_TESTS_LOOPER_LOOPER_JVM_SUPPORT_H_

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {

inline constexpr const char* kScenarios = "com.example.app.LooperScenarios";

using Clock = std::chrono::steady_clock;
inline double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

// The looper monitor's status details (re-parsed on every call; tests/jvm/status_json.h).
struct LooperStatus : MonitorStatus {
  const rapidjson::Value& Frames() const { return (*details)["frames"]; }
};

inline LooperStatus Status() {
  LooperStatus s;
  ReadStatus("looper", &s);
  return s;
}

// A static int method of LooperScenarios (-1000 when the call failed).
inline int Scenario(const char* method, const char* sig = "()I", const std::vector<jvalue>& args = {}) {
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(8);
  JavaResult r = Jvm()->CallStatic(kScenarios, method, sig, args);
  env->PopLocalFrame(nullptr);
  EXPECT_TRUE(r.ok) << method << ": " << r.why;
  return r.ok ? r.value.i : -1000;
}

inline std::string ScenarioString(const char* method) { return CallStaticString(kScenarios, method); }

// The stand-in Choreographer's count of frame callbacks run, in every instance.
inline int64_t FrameCallbacksRun() { return CallStaticLong("android.view.Choreographer", "callbacksRun"); }

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_LOOPER_LOOPER_JVM_SUPPORT_H_
