// The test app launched once per test process on the JVM harness: the stand-ins jar on the system class
// path, jankprobe.jar + the test app jar in the app loader, libjankprobe.so loaded by com.example.app.TestApp,
// and the main looper thread calling JankProbe.start(config). The paths come from the test target's compile
// definitions (jp_add_jvm_test in jvm_harness.cmake).
#ifndef JANKPROBE_TESTS_JVM_APP_UNDER_TEST_H_
#define JANKPROBE_TESTS_JVM_APP_UNDER_TEST_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/jvm/jvm_harness.h"

namespace jp::testing {

constexpr const char* kTestApp = "com.example.app.TestApp";

// Tests run with -Xcheck:jni; a benchmark defines JP_JVM_CHECK_JNI=0 to measure JNI at its real cost.
#ifndef JP_JVM_CHECK_JNI
#define JP_JVM_CHECK_JNI 1
#endif

inline jvalue L(jobject o) {
  jvalue v{};
  v.l = o;
  return v;
}
inline jvalue J(jlong j) {
  jvalue v{};
  v.j = j;
  return v;
}
inline jvalue I(jint i) {
  jvalue v{};
  v.i = i;
  return v;
}
inline jvalue Z(bool b) {
  jvalue v{};
  v.z = b ? JNI_TRUE : JNI_FALSE;
  return v;
}

struct AppLaunch {
  bool ok = false;       // JVM up, library loaded, main thread started
  std::string why;       // when !ok
  int start_rc = 0;      // JankProbe.start's return code
};

// Launches on the first call; later calls return the first result.
inline const AppLaunch& LaunchApp(const std::string& config) {
  static AppLaunch launch = [&config] {
    AppLaunch l;
    JvmOptions options;
    options.system_classpath = {JP_JVM_SYSTEM_CP};
    options.app_classpath = {JP_JVM_JANKPROBE_JAR, JP_JVM_APP_JAR};
    options.check_jni = JP_JVM_CHECK_JNI != 0;
#ifdef JP_JVM_LIBRARY_PATH
    options.jvm_args.push_back(std::string("-Djava.library.path=") + JP_JVM_LIBRARY_PATH);  // libutils.so
#endif
    JvmHarness* jvm = JvmHarness::Start(options, &l.why);
    if (!jvm) return l;
    JNIEnv* env = jvm->Env();
    JavaResult r = jvm->CallStatic(kTestApp, "loadNative", "(Ljava/lang/String;)V",
                                   {L(jvm->NewString(JP_LIBJANKPROBE))});
    if (!r.ok) {
      l.why = "System.load(libjankprobe.so): " + r.why;
      return l;
    }
    r = jvm->CallStatic(kTestApp, "startMain", "(Ljava/lang/String;)I", {L(jvm->NewString(config))});
    if (!r.ok) {
      l.why = "TestApp.startMain: " + r.why;
      return l;
    }
    (void)env;
    l.start_rc = r.value.i;
    l.ok = true;
    return l;
  }();
  return launch;
}

inline JvmHarness* Jvm() { return JvmHarness::Get(); }

// The first report of `type` containing `needle` ("" = any) within timeout_ms, or "".
inline std::string AwaitReport(const std::string& type, const std::string& needle, long timeout_ms) {
  JvmHarness* jvm = Jvm();
  JNIEnv* env = jvm->Env();
  env->PushLocalFrame(8);
  JavaResult r = jvm->CallStatic(kTestApp, "awaitReport", "(Ljava/lang/String;Ljava/lang/String;J)Ljava/lang/String;",
                                 {L(jvm->NewString(type)),
                                  L(needle.empty() ? nullptr : jvm->NewString(needle)),
                                  J(timeout_ms)});
  env->PopLocalFrame(nullptr);
  return r.ok ? r.text : std::string();
}

// A static ()String method of `cls`, in a local frame of its own: its text, or "error: <why>".
inline std::string CallStaticString(const char* cls, const char* method) {
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(8);
  JavaResult r = Jvm()->CallStatic(cls, method, "()Ljava/lang/String;");
  env->PopLocalFrame(nullptr);
  return r.ok ? r.text : "error: " + r.why;
}

// A static ()J method of `cls`, in a local frame of its own: its value, or -1 (and a failed expectation)
// when the call did not return one.
inline int64_t CallStaticLong(const char* cls, const char* method) {
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(8);
  JavaResult r = Jvm()->CallStatic(cls, method, "()J");
  env->PopLocalFrame(nullptr);
  EXPECT_TRUE(r.ok) << cls << "." << method << ": " << r.why;
  return r.ok ? static_cast<int64_t>(r.value.j) : -1;
}

inline std::string CallString(const char* method) { return CallStaticString(kTestApp, method); }

inline int CallInt(const char* method, const char* sig = "()I", const std::vector<jvalue>& args = {}) {
  JavaResult r = Jvm()->CallStatic(kTestApp, method, sig, args);
  return r.ok ? r.value.i : -1000;
}

// The timeline as Chrome trace JSON (JankProbe.export through the test app into a temporary file), or ""
// when the export failed.
inline std::string ExportedTrace() {
  char path[] = "/tmp/jp-trace-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return std::string();
  close(fd);
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(4);
  const int rc = CallInt("exportTrace", "(Ljava/lang/String;)I", {L(Jvm()->NewString(path))});
  env->PopLocalFrame(nullptr);
  EXPECT_EQ(rc, 0) << "exportTrace";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return rc == 0 ? text.str() : std::string();
}

inline int Configure(const std::string& config) {
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(8);
  const int rc = CallInt("configure", "(Ljava/lang/String;)I", {L(Jvm()->NewString(config))});
  env->PopLocalFrame(nullptr);
  return rc;
}

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_JVM_APP_UNDER_TEST_H_
