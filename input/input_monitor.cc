#include "input/input_monitor.h"

#include <string>

#include "hook/clock.h"
#include "hook/android_api.h"
#include "hook/json_out.h"
#include "input/input_message.h"
#include "input/input_proxies.h"
#include "input/input_tracker.h"

namespace jp::input {
namespace {

class InputMonitor : public hook::MonitorImpl {
 public:
  ~InputMonitor() override { Stop(); }

  bool Start(const Config& config, hook::PluginContext* context, std::string* why) override {
    if (context == nullptr || context->timeline == nullptr || context->watchdog == nullptr) {
      *why = "input: plugin context without timeline or watchdog";
      return false;
    }
    api_ = hook::ResolveAndroidApi(config.input.android_api);
    layout_ = LayoutForApi(api_.level);
    InputTracker::Settings s;
    s.layout = layout_;
    s.lag_ns = static_cast<uint64_t>(config.input.lag_ms) * hook::kNsPerMs;
    s.anr_ns = static_cast<uint64_t>(config.input.anr_ms) * hook::kNsPerMs;
    s.context = context;
    // The tracker is on before the first slot is written, so no event read meanwhile is missed.
    InputTracker::Get().Enable(s);
    install_ = ProxyInstall{};
    if (!InstallProxies(kInputLibrary, &install_, why)) {
      InputTracker::Get().Disable();
      return false;
    }
    running_ = true;
    return true;
  }

  void Retune(const Config& config) override {
    InputTracker::Get().Retune(static_cast<uint64_t>(config.input.lag_ms) * hook::kNsPerMs,
                               static_cast<uint64_t>(config.input.anr_ms) * hook::kNsPerMs);
  }

  void Stop() override {
    if (!running_) return;
    running_ = false;
    remove_errors_ = RemoveProxies();
    InputTracker::Get().Disable();
  }

  std::string StatusJson() const override {
    hook::JsonOut w;
    w.StartObject();
    w.Field("android_api", static_cast<int64_t>(api_.level));
    w.Field("api_source", api_.source);
    w.Field("layout", layout_ ? layout_->name : "unknown");
    w.Field("mode", layout_ ? "seq" : "fd");
    w.Key("imports");
    w.StartObject();
    const ProxySpec* p = Proxies();
    for (int i = 0; i < kProxyCount; ++i) w.Field(p[i].symbol, ProxyStateName(install_.state[i]));
    w.EndObject();
    w.Field("hot_path_fence", InputTracker::Get().FenceMode());
    // The tracker's clock and counters come as JSON objects of their own (written on its side).
    w.Key("clock");
    if (!w.Embed(InputTracker::Get().ClockJson())) w.Null();
    w.Key("counters");
    InputTracker::Get().WriteCounters(w);
    if (!remove_errors_.empty()) w.Field("remove_errors", remove_errors_);
    w.EndObject();
    return w.Take();
  }

 private:
  bool running_ = false;
  hook::ApiLevel api_;
  const Layout* layout_ = nullptr;
  ProxyInstall install_;
  std::string remove_errors_;
};

}  // namespace

std::unique_ptr<hook::MonitorImpl> MakeInputMonitor() { return std::make_unique<InputMonitor>(); }

}  // namespace jp::input
