#include "looper/looper_monitor.h"

#include <pthread.h>

#include <mutex>
#include <string>

#include "hook/clock.h"
#include "hook/event_clock.h"
#include "hook/jni/jni_refs.h"
#include "hook/jni/jni_util.h"
#include "hook/json_out.h"
#include "hook/report.h"
#include "looper/dispatch_timing.h"
#include "looper/printer_hook.h"

namespace jp::looper {
namespace {

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

  void Retune(const Config& config) override {
    RetuneTiming(config);
    if (!running_) return;
    if (config.looper.source == want_ && config.looper.poll_library == poll_library_) return;
    // A source switch (remote flag): the new source is started after the old one is gone, so no message
    // is timed twice; if it cannot start, the old one comes back and the status says why.
    const LooperSource old_want = want_;
    const std::string old_library = poll_library_;
    std::string why;
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", &why);
    std::lock_guard<std::mutex> source_lock(source_mu_);
    StopSource(env);
    if (ApplySource(env, config.looper.source, config.looper.poll_library, &why)) {
      SetSourceError(std::string());
      return;
    }
    std::string back;
    ApplySource(env, old_want, old_library, &back);
    SetSourceError("switching to looper.source " + std::string(LooperSourceName(config.looper.source)) +
                   " failed: " + why + "; kept " + LooperSourceName(old_want));
  }

  void Stop() override {
    if (!running_) return;
    if (periodic_ >= 0) context_->watchdog->RemovePeriodic(periodic_);
    periodic_ = -1;
    std::string why;
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", &why);
    if (env) StopFrames(env);
    {
      std::lock_guard<std::mutex> source_lock(source_mu_);
      StopSource(env);
    }
    DeactivateTiming();
    running_ = false;
  }

  std::string StatusJson() const override {
    const LooperCounters c = TimingCounters();
    std::lock_guard<std::mutex> lock(mu_);
    hook::JsonOut w;
    w.StartObject();
    w.Field("source", source_);
    w.Field("source_reason", source_reason_);
    if (!source_error_.empty()) w.Field("source_error", source_error_);
    w.Field("poll_library", poll_library_);
    w.Field("poll_slots", static_cast<uint64_t>(PollSourceSlots()));
    w.Field("poll_gaps", c.poll_gaps);
    w.Field("poll_ring_full", c.poll_ring_full);
    w.Field("poll_run_records", c.poll_run_records);
    w.Field("poll_run_gaps", c.poll_run_gaps);
    w.Field("poll_folded_gaps", c.poll_folded_gaps);
    w.Field("ticker_resumes", c.ticker_resumes);
    w.Field("poll_rearms", c.poll_rearms);
    w.Field("poll_check_arms", c.poll_check_arms);
    w.Field("poll_checks", c.poll_checks);
    // The poll source times gaps with the process event clock: which counter, or why clock_gettime.
    if (source_ == "poll") {
      w.Key("clock");
      if (!w.Embed(hook::ProcessEventClock().StatusJson())) w.Null();
    }
    w.Field("printer", printer_state_);
    w.Field("chained_to", chained_to_);
    w.Field("reinstalls", reinstalls_);
    if (!replaced_by_.empty()) w.Field("last_replaced_by", replaced_by_);
    if (!check_error_.empty()) w.Field("check_error", check_error_);
    w.Field("checks", checks_);
    w.Field("messages", c.messages);
    w.Field("lags", c.lags);
    w.Field("anrs", c.anrs);
    w.Field("samples", c.samples);
    w.Field("unmatched", c.unmatched);
    w.Field("reports_dropped", c.reports_dropped);
    w.Field("history_entries", c.history_entries);
    w.Field("history_evicted", c.history_evicted);
    w.Key("frames");
    w.StartObject();
    w.Field("state", frames_state_);
    w.Field("frames", c.frames);
    w.Field("dropped", c.dropped_frames);
    w.Field("janky", c.janky_frames);
    w.Field("refresh_ms", c.refresh_ms);
    w.EndObject();
    w.EndObject();
    return w.Take();
  }

 private:
  bool Install(const Config& config, std::string* why) {
    if (!jni::Vm()) return Fail(why, "no Java VM: libjankprobe.so was not loaded with System.loadLibrary");
    JNIEnv* env = jni::AttachedEnv(jni::Vm(), "jankprobe-control", why);
    if (!env) return false;
    // The poll source tells the main thread by pthread_self(): learnt whenever we run on it (start).
    if (context_->main_tid != 0 && static_cast<uint32_t>(hook::CurrentTid()) == context_->main_tid) {
      main_pthread_ = static_cast<uintptr_t>(pthread_self());
    }
    // Timing is live before the source is: the first message after the swap is already recorded.
    ActivateTiming(context_, config);
    {
      std::lock_guard<std::mutex> source_lock(source_mu_);
      if (!ApplySource(env, config.looper.source, config.looper.poll_library, why)) {
        DeactivateTiming();
        return false;
      }
    }
    periodic_ = context_->watchdog->AddPeriodic(kPrinterCheckMs * hook::kNsPerMs, OnCheck, this);
    if (periodic_ < 0) {
      std::lock_guard<std::mutex> source_lock(source_mu_);
      StopSource(env);
      DeactivateTiming();
      return Fail(why, "the watchdog's periodic table is full");
    }
    StartFrames(env);
    running_ = true;
    return true;
  }

  // Starts the source `want` asks for (source_mu_ held). auto: poll if its hooks install, else printer.
  bool ApplySource(JNIEnv* env, LooperSource want, const std::string& library, std::string* why) {
    want_ = want;
    {
      std::lock_guard<std::mutex> lock(mu_);
      poll_library_ = library;
    }
    std::string poll_why;
    if (want != LooperSource::kPrinter) {
      if (StartPollSource(library.c_str(), main_pthread_, context_->main_tid, &poll_why)) {
        SetSource("poll", std::string(want == LooperSource::kAuto ? "auto: " : "configured: ") + "epoll_wait hooked in " +
                              library + " (" + std::to_string(PollSourceSlots()) + " GOT slots)");
        return true;
      }
      if (want == LooperSource::kPoll) return Fail(why, "looper.source poll: " + poll_why);
    }
    if (!env) return Fail(why, "no JNIEnv on this thread for the printer source");
    if (!printer_.Install(env, why)) return false;  // resolves the printer's set first (LooperPrinter)
    {
      std::lock_guard<std::mutex> lock(mu_);
      printer_state_ = "installed";
      chained_to_ = printer_.chained_to();
    }
    SetSource("printer", want == LooperSource::kAuto ? "auto: poll unavailable (" + poll_why + ")" : "configured");
    return true;
  }

  // Stops whichever source runs (source_mu_ held). Leaves no GOT slot patched and no printer of ours set.
  void StopSource(JNIEnv* env) {
    if (source_ == "poll") StopPollSource();
    if (source_ == "printer" && env) printer_.Uninstall(env);
    std::lock_guard<std::mutex> lock(mu_);
    if (source_ == "printer") printer_state_ = "off";
    source_ = "off";
    source_kind_ = SourceKind::kOff;
  }

  void SetSource(const std::string& source, const std::string& reason) {
    std::lock_guard<std::mutex> lock(mu_);
    source_ = source;
    source_kind_ = source == "poll" ? SourceKind::kPoll : source == "printer" ? SourceKind::kPrinter : SourceKind::kOff;
    source_reason_ = reason;
  }

  void SetSourceError(const std::string& error) {
    std::lock_guard<std::mutex> lock(mu_);
    source_error_ = error;
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

  // Watchdog thread. Poll: move the finished gaps into the history. Printer: is our printer still the
  // Looper's? Put it back (chaining to the newcomer) if not.
  void Check() {
    std::unique_lock<std::mutex> source_lock(source_mu_, std::try_to_lock);
    if (!source_lock.owns_lock()) return;  // a switch is in progress; the next period checks
    if (source_kind_ == SourceKind::kPoll) {
      DrainPollSource();
      return;
    }
    if (source_kind_ != SourceKind::kPrinter) return;
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
    } else if (r == PrinterHook::CheckResult::kBehindNewcomer) {
      replaced_by_ = what;
      printer_state_ = "behind " + what;
      check_error_.clear();
    }
  }

  static bool Fail(std::string* why, const std::string& reason) {
    *why = reason;
    return false;
  }

  hook::PluginContext* context_ = nullptr;
  std::mutex source_mu_;  // the source in use: start / stop / switch / the periodic check
  PrinterHook printer_;
  uintptr_t main_pthread_ = 0;
  LooperSource want_ = LooperSource::kAuto;
  std::string poll_library_;
  int periodic_ = -1;
  jobject ticker_ = nullptr;  // global FrameTicker while running
  bool running_ = false;

  mutable std::mutex mu_;  // the status strings and counters below (written by the check, read by status)
  std::string source_ = "off";  // "poll", "printer" or "off" (written under source_mu_ and mu_)
  // The same as a number, for the watchdog's periodic Check(): comparing source_ with a literal there read
  // the literal from .rodata, which kept the library's first segment resident after start had given it
  // back (hook/text_release.h). Written with source_.
  enum class SourceKind : uint8_t { kOff, kPoll, kPrinter };
  SourceKind source_kind_ = SourceKind::kOff;
  std::string source_reason_;
  std::string source_error_;
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
