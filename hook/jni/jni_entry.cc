// JNI_OnLoad and the natives of java/src/com/jankprobe/JankProbe.java.
//
// The facade's references are resolved here, once, on the thread that called System.loadLibrary: on
// Android only that thread's class loader sees the app's classes; FindClass from a native thread we attach
// later would find nothing but the boot classes. The facade's class loader is remembered for the monitors'
// references, which are resolved only when a monitor is first enabled (jni_refs.h).
//
// Two things reach back into Java from our own threads:
// - reports go to the app's ReportListener on the report delivery thread (never the main thread);
// - the watchdog captures the main thread's stack while it is stuck, with Thread.getStackTrace() on the
//   main Thread object remembered at start (the technique BlockCanary and Matrix use; it needs no signal).
#include <jni.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>

#include "hook/jni/java_stack_release.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/monitor.h"
#include "hook/timeline.h"
#include "jankprobe/jankprobe.h"

namespace jp::jni {
namespace {

struct JavaRefs {
  JavaVM* vm = nullptr;
  jclass facade = nullptr;        // com.jankprobe.JankProbe
  jmethodID on_report = nullptr;  // JankProbe$ReportListener.onReport(String)
  jmethodID current_thread = nullptr;
  jclass thread_class = nullptr;
  jmethodID get_stack_trace = nullptr;
  jmethodID frame_to_string = nullptr;
};
JavaRefs g_refs;

std::mutex g_mu;                  // guards the two global refs below
jobject g_listener = nullptr;     // global ref
jobject g_main_thread = nullptr;  // global ref to the Thread that called start()

void CallJavaListener(const char* report_json, void*) {
  std::string why;
  JNIEnv* env = AttachedEnv(g_refs.vm, "jankprobe-report", &why);
  if (!env) return;
  ScopedLocalFrame frame(env, 8);
  if (!frame.ok()) return;
  jobject listener;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    listener = g_listener ? env->NewLocalRef(g_listener) : nullptr;
  }
  if (!listener) return;
  jstring json = env->NewStringUTF(report_json);
  if (TakeException(env, "NewStringUTF", &why) || !json) return;
  NoteJavaFramesRan();
  env->CallVoidMethod(listener, g_refs.on_report, json);
  TakeException(env, "ReportListener.onReport threw", &why);  // the app's bug must not kill our thread
}

// The delivery thread (hook/report_sink.cc) is ours and attached too: what the attach and the listener's
// Java frames left below this frame goes back, as on the watchdog. Reports are rare; the next one faults
// it in again.
void DeliverToJava(const char* report_json, void* arg) {
  CallJavaListener(report_json, arg);
  ReleaseStackIfJavaRan();
}

// A failed capture's reason into the caller's buffer. Always inline: GCC made the lambda this was an
// out-of-line clone in plain .text, outside lib/startup_order.ld's order, so a failed capture faulted a
// 64 KiB window that no release covers (mem9 saw it resident in a demo run); inlined, it sits in
// CaptureMainStack, in the rare text the releases and the watchdog's sweep give back.
__attribute__((always_inline)) inline long CaptureFailed(char* buf, size_t cap, const char* why) {
  snprintf(buf, cap, "%s", why);
  return -1L;
}

long CaptureMainStack(void*, char* buf, size_t cap) {
  std::string why;
  JNIEnv* env = AttachedEnv(g_refs.vm, "jankprobe-watchdog", &why);
  if (!env) return CaptureFailed(buf, cap, why.c_str());
  ScopedLocalFrame frame(env, 64);
  if (!frame.ok()) return CaptureFailed(buf, cap, "PushLocalFrame failed");
  jobject thread;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    thread = g_main_thread ? env->NewLocalRef(g_main_thread) : nullptr;
  }
  if (!thread) return CaptureFailed(buf, cap, "main thread unknown: JankProbe.start() was not called from Java");
  NoteJavaFramesRan();  // the watchdog gives back the stack this touches once its callback returned
  auto frames = static_cast<jobjectArray>(env->CallObjectMethod(thread, g_refs.get_stack_trace));
  if (TakeException(env, "Thread.getStackTrace", &why) || !frames) return CaptureFailed(buf, cap, why.c_str());
  const jsize n = env->GetArrayLength(frames);
  size_t used = 0;
  for (jsize i = 0; i < n; ++i) {
    jobject element = env->GetObjectArrayElement(frames, i);
    auto text = static_cast<jstring>(env->CallObjectMethod(element, g_refs.frame_to_string));
    if (TakeException(env, "StackTraceElement.toString", &why)) return CaptureFailed(buf, cap, why.c_str());
    std::string line = "at " + ToStdString(env, text) + "\n";
    env->DeleteLocalRef(text);
    env->DeleteLocalRef(element);
    if (used + line.size() >= cap) break;  // keep the innermost frames, which come first
    memcpy(buf + used, line.data(), line.size());
    used += line.size();
  }
  return static_cast<long>(used);
}

jint NativeStart(JNIEnv* env, jclass, jstring config) {
  jobject thread = env->CallStaticObjectMethod(g_refs.thread_class, g_refs.current_thread);
  if (!TakeException(env, "Thread.currentThread", nullptr) && thread) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_main_thread) {
      g_main_thread = env->NewGlobalRef(thread);
      hook::SetMainThreadTid(static_cast<uint32_t>(hook::CurrentTid()));
    }
  }
  hook::SetStackCaptureHook(CaptureMainStack, nullptr);
  const std::string json = ToStdString(env, config);
  return jankprobe_start(config ? json.c_str() : nullptr);
}

jint NativeConfigure(JNIEnv* env, jclass, jstring config) {
  const std::string json = ToStdString(env, config);
  return jankprobe_configure(config ? json.c_str() : nullptr);
}

void NativeStop(JNIEnv*, jclass) { jankprobe_stop(); }

jint NativeExport(JNIEnv* env, jclass, jstring path, jint format) {
  const std::string p = ToStdString(env, path);
  return jankprobe_export(p.c_str(), format);
}

jstring NativeLastError(JNIEnv* env, jclass) { return env->NewStringUTF(jankprobe_last_error()); }
jstring NativeStatus(JNIEnv* env, jclass) { return env->NewStringUTF(jankprobe_status()); }

void NativeSetListener(JNIEnv* env, jclass, jobject listener) {
  jobject old;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    old = g_listener;
    g_listener = listener ? env->NewGlobalRef(listener) : nullptr;
  }
  if (old) env->DeleteGlobalRef(old);
  jankprobe_set_report_listener(listener ? DeliverToJava : nullptr, nullptr);
}

bool Resolve(JNIEnv* env, std::string* why) {
  jclass facade = env->FindClass("com/jankprobe/JankProbe");
  if (TakeException(env, "FindClass com/jankprobe/JankProbe", why) || !facade) return false;
  g_refs.facade = static_cast<jclass>(env->NewGlobalRef(facade));
  jclass listener = env->FindClass("com/jankprobe/JankProbe$ReportListener");
  if (TakeException(env, "FindClass JankProbe$ReportListener", why) || !listener) return false;
  g_refs.on_report = env->GetMethodID(listener, "onReport", "(Ljava/lang/String;)V");
  if (TakeException(env, "ReportListener.onReport", why)) return false;
  jclass thread = env->FindClass("java/lang/Thread");
  if (TakeException(env, "FindClass java/lang/Thread", why) || !thread) return false;
  g_refs.thread_class = static_cast<jclass>(env->NewGlobalRef(thread));
  g_refs.current_thread = env->GetStaticMethodID(thread, "currentThread", "()Ljava/lang/Thread;");
  g_refs.get_stack_trace = env->GetMethodID(thread, "getStackTrace", "()[Ljava/lang/StackTraceElement;");
  jclass element = env->FindClass("java/lang/StackTraceElement");
  if (TakeException(env, "Thread / StackTraceElement methods", why) || !element) return false;
  g_refs.frame_to_string = env->GetMethodID(element, "toString", "()Ljava/lang/String;");
  if (TakeException(env, "StackTraceElement.toString", why)) return false;

  static const JNINativeMethod kNatives[] = {
      {const_cast<char*>("nativeStart"), const_cast<char*>("(Ljava/lang/String;)I"), reinterpret_cast<void*>(NativeStart)},
      {const_cast<char*>("nativeConfigure"), const_cast<char*>("(Ljava/lang/String;)I"), reinterpret_cast<void*>(NativeConfigure)},
      {const_cast<char*>("nativeStop"), const_cast<char*>("()V"), reinterpret_cast<void*>(NativeStop)},
      {const_cast<char*>("nativeExport"), const_cast<char*>("(Ljava/lang/String;I)I"), reinterpret_cast<void*>(NativeExport)},
      {const_cast<char*>("nativeLastError"), const_cast<char*>("()Ljava/lang/String;"), reinterpret_cast<void*>(NativeLastError)},
      {const_cast<char*>("nativeStatus"), const_cast<char*>("()Ljava/lang/String;"), reinterpret_cast<void*>(NativeStatus)},
      {const_cast<char*>("nativeSetListener"), const_cast<char*>("(Lcom/jankprobe/JankProbe$ReportListener;)V"),
       reinterpret_cast<void*>(NativeSetListener)},
  };
  env->RegisterNatives(facade, kNatives, sizeof kNatives / sizeof kNatives[0]);
  if (TakeException(env, "RegisterNatives", why)) return false;
  return RememberClassLoader(env, facade, why);
}

}  // namespace
}  // namespace jp::jni

// Returning JNI_ERR makes System.loadLibrary throw UnsatisfiedLinkError: the app sees the reason in its
// own logs instead of a half-initialised plugin.
extern "C" JNIEXPORT jint JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jp::jni::g_refs.vm = vm;
  jp::jni::SetVm(vm);
  std::string why;
  if (!jp::jni::Resolve(env, &why)) {
    fprintf(stderr, "jankprobe: JNI_OnLoad failed: %s\n", why.c_str());
    return JNI_ERR;
  }
  // The monitors' own references are resolved when a monitor first starts (jni_refs.h), through the class
  // loader remembered here; a failure there only disables that monitor (its Start says why).
  return JNI_VERSION_1_6;
}
