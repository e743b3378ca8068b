// The LooperPrinter on the main Looper: installed chaining to the printer already there (Looper.mLogging,
// which has no getter, read through JNI), checked periodically on the watchdog thread, and put back when
// someone replaced or cleared it (WebView sets its own printer; apps call setMessageLogging(null)).
//
// A re-install chains to the newcomer and retires our previous printer (it keeps forwarding, because the
// newcomer may chain to it, but stops timing), so every line is timed exactly once. A newcomer that
// chains to our printer itself is not wrapped: ours keeps timing behind it (two tools that each re-wrap
// a printer not their own would otherwise grow the chain forever). Uninstall puts the
// printer we chained to back if ours is still in place, otherwise only retires ours.
//
// Every call takes the JNIEnv of the calling thread and reports failures as a reason.
#ifndef JANKPROBE_LOOPER_PRINTER_HOOK_H_
#define JANKPROBE_LOOPER_PRINTER_HOOK_H_

#include <jni.h>

#include <string>

namespace jp::looper {

class PrinterHook {
 public:
  // kBehindNewcomer: the Looper's printer is a newcomer that chains to ours (LooperPrinter.chainsTo):
  // left in front, ours times every line behind it.
  enum class CheckResult { kInPlace, kReinstalled, kBehindNewcomer, kFailed };

  bool Install(JNIEnv* env, std::string* why);
  // Whether our printer is still mLogging; re-installs if not. *what gets what was found instead
  // ("null" or the newcomer's class) on kReinstalled, the reason on kFailed.
  CheckResult Check(JNIEnv* env, std::string* what);
  void Uninstall(JNIEnv* env);

  bool installed() const { return printer_ != nullptr; }
  // The class of the printer we chained to at the last (re)install ("none" when there was none).
  const std::string& chained_to() const { return chained_to_; }

 private:
  bool SetOurs(JNIEnv* env, jobject previous, std::string* why);
  void SetHead(JNIEnv* env, jobject head);
  std::string ClassName(JNIEnv* env, jobject o);

  jobject looper_ = nullptr;   // global: the main Looper
  jobject printer_ = nullptr;  // global: our active LooperPrinter
  jobject head_ = nullptr;     // global: a newcomer in front of it that chains to it (null: ours is mLogging)
  std::string chained_to_;
};

}  // namespace jp::looper

#endif  // JANKPROBE_LOOPER_PRINTER_HOOK_H_
