#include "hook/jni/jni_util.h"

#include <pthread.h>

#include "hook/jni/java_stack_release.h"

namespace jp::jni {
namespace {

pthread_key_t g_detach_key;
pthread_once_t g_detach_once = PTHREAD_ONCE_INIT;

// Runs at the exit of a thread we attached: a thread must not end attached (ART aborts on it).
void DetachAtExit(void* vm) { static_cast<JavaVM*>(vm)->DetachCurrentThread(); }

void MakeDetachKey() { pthread_key_create(&g_detach_key, DetachAtExit); }

}  // namespace

bool TakeException(JNIEnv* env, const char* what, std::string* why) {
  if (!env->ExceptionCheck()) return false;
  jthrowable t = env->ExceptionOccurred();
  env->ExceptionClear();
  std::string text = what;
  if (t) {
    jclass throwable = env->FindClass("java/lang/Throwable");
    jmethodID to_string = throwable ? env->GetMethodID(throwable, "toString", "()Ljava/lang/String;") : nullptr;
    if (to_string) {
      auto s = static_cast<jstring>(env->CallObjectMethod(t, to_string));
      if (!env->ExceptionCheck()) {
        text += ": " + ToStdString(env, s);
      }
      if (s) env->DeleteLocalRef(s);
    }
    env->ExceptionClear();
    if (throwable) env->DeleteLocalRef(throwable);
    env->DeleteLocalRef(t);
  }
  if (why) *why = text;
  return true;
}

std::string ToStdString(JNIEnv* env, jstring s) {
  if (!s) return std::string();
  const char* chars = env->GetStringUTFChars(s, nullptr);
  if (!chars) {
    env->ExceptionClear();
    return std::string();
  }
  std::string out(chars);
  env->ReleaseStringUTFChars(s, chars);
  return out;
}

JNIEnv* AttachedEnv(JavaVM* vm, const char* thread_name, std::string* why) {
  JNIEnv* env = nullptr;
  jint rc = vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6);
  if (rc == JNI_OK) return env;
  if (rc != JNI_EDETACHED) {
    if (why) *why = "JavaVM::GetEnv failed: " + std::to_string(rc);
    return nullptr;
  }
  JavaVMAttachArgs args{JNI_VERSION_1_6, const_cast<char*>(thread_name), nullptr};
  if (vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), &args) != JNI_OK) {
    if (why) *why = "AttachCurrentThreadAsDaemon refused";
    return nullptr;
  }
  NoteJavaFramesRan();  // the attach ran Thread's constructor on this stack
  pthread_once(&g_detach_once, MakeDetachKey);
  pthread_setspecific(g_detach_key, vm);
  return env;
}

}  // namespace jp::jni
