#include "input/input_monitor.h"

#include <string>

#include "hook/clock.h"
#include "hook/android_api.h"
#include "input/input_message.h"
#include "input/input_proxies.h"
#include "input/input_tracker.h"

namespace jp::input {
namespace {

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

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
    std::string out = "{\"android_api\":" + std::to_string(api_.level) + ",\"api_source\":" + Quoted(api_.source) +
                      ",\"layout\":" + Quoted(layout_ ? layout_->name : "unknown") +
                      ",\"mode\":" + Quoted(layout_ ? "seq" : "fd") + ",\"imports\":{";
    const ProxySpec* p = Proxies();
    for (int i = 0; i < kProxyCount; ++i) {
      out += std::string(i ? "," : "") + Quoted(p[i].symbol) + ":" + Quoted(ProxyStateName(install_.state[i]));
    }
    out += "},\"hot_path_fence\":" + Quoted(InputTracker::Get().FenceMode());
    out += ",\"clock\":" + InputTracker::Get().ClockJson();
    out += ",\"counters\":" + InputTracker::Get().CountersJson();
    if (!remove_errors_.empty()) out += ",\"remove_errors\":" + Quoted(remove_errors_);
    return out + "}";
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
