#include "looper/looper_monitor.h"

#include <mutex>
#include <string>

#include "hook/clock.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/report.h"
#include "looper/dispatch_timing.h"
#include "looper/printer_hook.h"

namespace jp::looper {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

class LooperMonitor : public hook::MonitorImpl {
 public:
  ~LooperMonitor() override { Stop(); }

  bool Start(const Config& config, hook::PluginContext* context, std::string* why) override {
    context_ = context;
    if (!Install(config, why)) {
      hook::Report r;
      r.type = "monitor_disabled";
      r.monitor = "looper";
      r.fields.push_back(hook::ReportField::String("reason", "disabled: " + *why));
      context->Submit(r);
      return false;
    }
    return true;
  }

  void Retune(const Config& config) override { RetuneTiming(config); }

  void Stop() override {
    if (!running_) return;
    if (periodic_ >= 0) context_->watchdog->RemovePeriodic(periodic_);
    periodic_ = -1;
    std::string why;
    if (JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", &why)) {
      StopFrames(env);
      printer_.Uninstall(env);
    }
    DeactivateTiming();
    running_ = false;
  }

  std::string StatusJson() const override {
    const LooperCounters c = TimingCounters();
    std::lock_guard<std::mutex> lock(mu_);
    std::string s = "{\"printer\":\"";
    s += printer_state_ + "\",\"chained_to\":\"" + Escape(chained_to_) + "\"";
    s += ",\"reinstalls\":" + std::to_string(reinstalls_);
    if (!replaced_by_.empty()) s += ",\"last_replaced_by\":\"" + Escape(replaced_by_) + "\"";
    if (!check_error_.empty()) s += ",\"check_error\":\"" + Escape(check_error_) + "\"";
    s += ",\"checks\":" + std::to_string(checks_);
    s += ",\"messages\":" + std::to_string(c.messages) + ",\"lags\":" + std::to_string(c.lags) +
         ",\"anrs\":" + std::to_string(c.anrs) + ",\"samples\":" + std::to_string(c.samples) +
         ",\"unmatched\":" + std::to_string(c.unmatched) + ",\"reports_dropped\":" + std::to_string(c.reports_dropped) +
         ",\"history_entries\":" + std::to_string(c.history_entries) +
         ",\"history_evicted\":" + std::to_string(c.history_evicted);
    s += ",\"frames\":{\"state\":\"" + Escape(frames_state_) + "\",\"frames\":" + std::to_string(c.frames) +
         ",\"dropped\":" + std::to_string(c.dropped_frames) + ",\"janky\":" + std::to_string(c.janky_frames) +
         ",\"refresh_ms\":" + std::to_string(c.refresh_ms) + "}";
    return s + "}";
  }

 private:
  bool Install(const Config& config, std::string* why) {
    if (!jni::Vm()) return Fail(why, "no Java VM: libjankprobe.so was not loaded with System.loadLibrary");
    const jni::LooperRefs& refs = jni::Looper();
    if (!refs.ok) return Fail(why, refs.why);
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", why);
    if (!env) return false;
    // Timing is live before the printer is: the first message after the swap is already recorded.
    ActivateTiming(context_, config);
    if (!printer_.Install(env, why)) {
      DeactivateTiming();
      return false;
    }
    periodic_ = context_->watchdog->AddPeriodic(kPrinterCheckMs * hook::kNsPerMs, OnCheck, this);
    if (periodic_ < 0) {
      printer_.Uninstall(env);
      DeactivateTiming();
      return Fail(why, "the watchdog's periodic table is full");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      printer_state_ = "installed";
      chained_to_ = printer_.chained_to();
    }
    StartFrames(env);
    running_ = true;
    return true;
  }

  void StartFrames(JNIEnv* env) {
    const jni::FrameRefs& refs = jni::Frames();
    std::string state = "on";
    std::string why;
    if (!refs.ok) {
      state = "disabled: " + refs.why;
    } else {
      jni::ScopedLocalFrame frame(env, 8);
      jobject ticker = env->NewObject(refs.ticker, refs.ticker_ctor);
      if (jni::TakeException(env, "new FrameTicker", &why) || !ticker) {
        state = "disabled: " + why;
      } else {
        env->CallVoidMethod(ticker, refs.ticker_start);
        if (jni::TakeException(env, "FrameTicker.start", &why)) {
          state = "disabled: " + why;
        } else {
          ticker_ = env->NewGlobalRef(ticker);
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    frames_state_ = state;
  }

  void StopFrames(JNIEnv* env) {
    if (!ticker_) return;
    env->CallVoidMethod(ticker_, jni::Frames().ticker_stop);
    jni::TakeException(env, "FrameTicker.stop", nullptr);
    env->DeleteGlobalRef(ticker_);
    ticker_ = nullptr;
  }

  static void OnCheck(uint64_t, void* arg) { static_cast<LooperMonitor*>(arg)->Check(); }

  // Watchdog thread: is our printer still the Looper's? Put it back (chaining to the newcomer) if not.
  void Check() {
    std::string why;
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-watchdog", &why);
    if (!env) {
      std::lock_guard<std::mutex> lock(mu_);
      check_error_ = why;
      return;
    }
    std::string what;
    const PrinterHook::CheckResult r = printer_.Check(env, &what);
    std::lock_guard<std::mutex> lock(mu_);
    ++checks_;
    if (r == PrinterHook::CheckResult::kFailed) {
      check_error_ = what;
      printer_state_ = "check failed";
    } else if (r == PrinterHook::CheckResult::kReinstalled) {
      ++reinstalls_;
      replaced_by_ = what;
      chained_to_ = printer_.chained_to();
      printer_state_ = "reinstalled";
      check_error_.clear();
    }
  }

  static bool Fail(std::string* why, const std::string& reason) {
    *why = reason;
    return false;
  }

  hook::PluginContext* context_ = nullptr;
  PrinterHook printer_;
  int periodic_ = -1;
  jobject ticker_ = nullptr;  // global FrameTicker while running
  bool running_ = false;

  mutable std::mutex mu_;  // the status strings and counters below (written by the check, read by status)
  std::string printer_state_ = "off";
  std::string chained_to_;
  std::string replaced_by_;
  std::string check_error_;
  std::string frames_state_ = "off";
  uint64_t reinstalls_ = 0;
  uint64_t checks_ = 0;
};

}  // namespace

std::unique_ptr<hook::MonitorImpl> MakeLooperMonitor() { return std::make_unique<LooperMonitor>(); }

}  // namespace jp::looper
