// Small JNI helpers: every call that can throw is followed by a check that clears the exception and turns
// it into a readable reason, so no Java exception is ever left pending in the app's thread.
#ifndef JANKPROBE_HOOK_JNI_JNI_UTIL_H_
#define JANKPROBE_HOOK_JNI_JNI_UTIL_H_

#include <jni.h>

#include <string>

namespace jp::jni {

// If an exception is pending: clears it, writes "<what>: <ExceptionClass>: <message>" into *why (if not
// null) and returns true.
bool TakeException(JNIEnv* env, const char* what, std::string* why);

// Java string -> UTF-8 std::string ("" for null).
std::string ToStdString(JNIEnv* env, jstring s);

// A local reference frame for the scope (native threads attached for a long time would leak locals).
class ScopedLocalFrame {
 public:
  ScopedLocalFrame(JNIEnv* env, jint capacity) : env_(env), ok_(env->PushLocalFrame(capacity) == 0) {
    if (!ok_) env_->ExceptionClear();
  }
  ~ScopedLocalFrame() {
    if (ok_) env_->PopLocalFrame(nullptr);
  }
  bool ok() const { return ok_; }
  ScopedLocalFrame(const ScopedLocalFrame&) = delete;
  ScopedLocalFrame& operator=(const ScopedLocalFrame&) = delete;

 private:
  JNIEnv* env_;
  bool ok_;
};

// The JNIEnv of the calling thread, attaching it (as a daemon) if needed; a thread attached here is
// detached automatically when it exits. nullptr with *why when the VM refuses.
JNIEnv* AttachedEnv(JavaVM* vm, const char* thread_name, std::string* why);

}  // namespace jp::jni

#endif  // JANKPROBE_HOOK_JNI_JNI_UTIL_H_
