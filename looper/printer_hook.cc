#include "looper/printer_hook.h"

#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"

namespace jp::looper {

std::string PrinterHook::ClassName(JNIEnv* env, jobject o) {
  if (!o) return "none";
  const jni::LooperRefs& refs = jni::Looper();
  jclass c = env->GetObjectClass(o);
  auto name = static_cast<jstring>(env->CallObjectMethod(c, refs.class_get_name));
  std::string out = jni::TakeException(env, "Class.getName", nullptr) ? "?" : jni::ToStdString(env, name);
  if (name) env->DeleteLocalRef(name);
  env->DeleteLocalRef(c);
  return out;
}

void PrinterHook::SetHead(JNIEnv* env, jobject head) {
  if (head_) env->DeleteGlobalRef(head_);
  head_ = head ? env->NewGlobalRef(head) : nullptr;
}

bool PrinterHook::SetOurs(JNIEnv* env, jobject previous, std::string* why) {
  const jni::PrinterRefs& refs = jni::Printer();
  jobject ours = env->NewObject(refs.printer, refs.printer_ctor, previous);
  if (jni::TakeException(env, "new LooperPrinter", why) || !ours) return false;
  env->CallVoidMethod(looper_, refs.set_message_logging, ours);
  if (jni::TakeException(env, "Looper.setMessageLogging", why)) {
    env->DeleteLocalRef(ours);
    return false;
  }
  if (printer_) {
    env->CallVoidMethod(printer_, refs.printer_retire);
    jni::TakeException(env, "LooperPrinter.retire", nullptr);
    env->DeleteGlobalRef(printer_);
  }
  printer_ = env->NewGlobalRef(ours);
  env->DeleteLocalRef(ours);
  SetHead(env, nullptr);  // ours is the Looper's printer again
  chained_to_ = ClassName(env, previous);
  return true;
}

bool PrinterHook::Install(JNIEnv* env, std::string* why) {
  // The printer's set is resolved here, not at the looper monitor's start: only this source needs
  // LooperPrinter (the class load, its natives). ClassName needs the looper's set.
  const jni::PrinterRefs& refs = jni::Printer();
  const jni::LooperRefs& looper_refs = jni::Looper();
  if (!refs.ok || !looper_refs.ok) {
    *why = refs.ok ? looper_refs.why : refs.why;
    return false;
  }
  jni::ScopedLocalFrame frame(env, 16);
  jobject looper = jni::MainLooper(env, why);
  if (!looper) return false;
  jobject current = env->GetObjectField(looper, refs.looper_logging);
  if (jni::TakeException(env, "read Looper.mLogging", why)) return false;
  if (current && env->IsInstanceOf(current, refs.printer)) {
    *why = "Looper.mLogging already holds a com.jankprobe.LooperPrinter (a second jankprobe?)";
    return false;
  }
  looper_ = env->NewGlobalRef(looper);
  if (!SetOurs(env, current, why)) {
    env->DeleteGlobalRef(looper_);
    looper_ = nullptr;
    return false;
  }
  return true;
}

PrinterHook::CheckResult PrinterHook::Check(JNIEnv* env, std::string* what) {
  if (!looper_ || !printer_) {
    *what = "not installed";
    return CheckResult::kFailed;
  }
  const jni::PrinterRefs& refs = jni::Printer();
  jni::ScopedLocalFrame frame(env, 16);
  jobject current = env->GetObjectField(looper_, refs.looper_logging);
  if (jni::TakeException(env, "read Looper.mLogging", what)) return CheckResult::kFailed;
  if (env->IsSameObject(current, printer_) || (head_ && env->IsSameObject(current, head_))) return CheckResult::kInPlace;
  *what = current ? ClassName(env, current) : "null";
  // A newcomer that chained to our printer: ours still sees every line behind it. Wrapping it again would
  // make a tool that does the same (Matrix's LooperMonitor) wrap ours again, and so on, a longer chain for
  // every message each round. Left in front, remembered as the head to expect.
  if (current) {
    const jboolean chained = env->CallStaticBooleanMethod(refs.printer, refs.printer_chains_to, current, printer_);
    if (!jni::TakeException(env, "LooperPrinter.chainsTo", nullptr) && chained) {
      SetHead(env, current);
      return CheckResult::kBehindNewcomer;
    }
  }
  std::string why;
  if (!SetOurs(env, current, &why)) {
    *what = why;
    return CheckResult::kFailed;
  }
  return CheckResult::kReinstalled;
}

void PrinterHook::Uninstall(JNIEnv* env) {
  if (!looper_) return;
  const jni::PrinterRefs& refs = jni::Printer();
  jni::ScopedLocalFrame frame(env, 16);
  SetHead(env, nullptr);
  if (printer_) {
    jobject current = env->GetObjectField(looper_, refs.looper_logging);
    if (!jni::TakeException(env, "read Looper.mLogging", nullptr) && env->IsSameObject(current, printer_)) {
      jobject previous = env->CallObjectMethod(printer_, refs.printer_previous);
      if (!jni::TakeException(env, "LooperPrinter.previous", nullptr)) {
        env->CallVoidMethod(looper_, refs.set_message_logging, previous);
        jni::TakeException(env, "Looper.setMessageLogging", nullptr);
      }
    }
    // Still referenced by a printer that chained to ours, or by a dispatch in flight: it must only forward.
    env->CallVoidMethod(printer_, refs.printer_retire);
    jni::TakeException(env, "LooperPrinter.retire", nullptr);
    env->DeleteGlobalRef(printer_);
    printer_ = nullptr;
  }
  env->DeleteGlobalRef(looper_);
  looper_ = nullptr;
}

}  // namespace jp::looper
