// A real JVM inside a test process, set up the way an Android app runs: the android.os stand-ins on the
// system class path (the framework's place), the app's classes (jankprobe.jar + the test app) in a
// URLClassLoader of their own, and libjankprobe.so loaded by a class of that loader, so JNI_OnLoad runs
// with the app loader exactly as on a phone and a FindClass from the wrong thread fails as it would there.
//
// JNI allows one VM per process: Start() creates it once, later calls return the same harness. Every call
// that can throw clears the exception and returns it as a reason.
#ifndef JANKPROBE_TESTS_JVM_JVM_HARNESS_H_
#define JANKPROBE_TESTS_JVM_JVM_HARNESS_H_

#include <jni.h>

#include <string>
#include <vector>

namespace jp::testing {

struct JvmOptions {
  std::vector<std::string> system_classpath;  // jars/dirs for -Djava.class.path
  std::vector<std::string> app_classpath;     // jars/dirs for the app's URLClassLoader
  std::vector<std::string> jvm_args;          // extra -X / -D options
  bool check_jni = true;                      // -Xcheck:jni (off for benchmarks: it slows every JNI call)
};

// A static-method call's result; `ok` false with `why` when the call threw or a lookup failed.
struct JavaResult {
  bool ok = false;
  std::string why;
  jvalue value{};
  std::string text;  // the value of a String result
};

class JvmHarness {
 public:
  // The process's VM, created on the first call. nullptr with *why when the VM cannot be created here.
  static JvmHarness* Start(const JvmOptions& options, std::string* why);
  static JvmHarness* Get();  // nullptr before Start succeeded

  JavaVM* vm() const { return vm_; }
  // The calling thread's env (attached as a daemon if needed).
  JNIEnv* Env();
  jobject app_loader() const { return app_loader_; }

  // A class of the app loader (Class.forName(name, true, appLoader)), as a global ref cached by name.
  jclass AppClass(const std::string& binary_name, std::string* why);

  // Calls a static method of an app class. `sig` is a JNI signature; the return type picks the call.
  JavaResult CallStatic(const std::string& class_name, const char* method, const char* sig,
                        const std::vector<jvalue>& args = {});

  // A static String field of an app class: `text` (and the local ref in value.l) when set; `ok` false with
  // `why` when the lookup failed or the field is null.
  JavaResult StaticString(const std::string& class_name, const char* field);

  // A local Java string for arguments (callers run inside a local frame or accept the small leak).
  jstring NewString(const std::string& s);

  // The reason for a pending exception ("" when none), clearing it.
  std::string TakeException();

 private:
  JvmHarness() = default;
  bool Init(const JvmOptions& options, std::string* why);

  JavaVM* vm_ = nullptr;
  jobject app_loader_ = nullptr;  // global
  std::vector<std::pair<std::string, jclass>> classes_;
};

// Joins paths with ':'.
std::string JoinClasspath(const std::vector<std::string>& parts);

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_JVM_JVM_HARNESS_H_
