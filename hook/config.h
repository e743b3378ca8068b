// The plugin's configuration: the remote flag (what to run, where, with which thresholds) plus the device
// facts the app passes at start (what this device is). docs/config.md is the schema reference; this header
// is the C++ shape of it.
//
// A Config is only ever produced whole: ParseConfig() builds a fresh object from the JSON text and hands it
// out only when every key validated. A rejected document therefore cannot leave a half-applied config
// behind; the caller simply keeps the one it runs with.
#ifndef JANKPROBE_HOOK_CONFIG_H_
#define JANKPROBE_HOOK_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jp {

// Network types a device can report and a targeting rule can name. kUnknown is only a device fact
// ("the app did not say"); a rule cannot ask for it.
enum class NetworkType : uint8_t { kUnknown, kWifi, kCellular, kEthernet, kOther, kNone };
const char* NetworkTypeName(NetworkType type);

struct InputConfig {
  bool enabled = true;
  int32_t lag_ms = 100;      // a touch not consumed within this is a lag
  int32_t anr_ms = 5000;     // ... and within this an ANR
  int32_t android_api = 0;   // InputMessage layout to decode; 0 = read ro.build.version.sdk on the device
  bool operator==(const InputConfig& o) const;
};

struct IdleConfig {
  bool enabled = true;
  int32_t lag_ms = 200;  // one IdleHandler.queueIdle() running longer than this is reported
  // Calls at least this long get a timeline record of their own; shorter ones are counted in the
  // handler's statistics only (a 20 us call is noise in a trace and would push lags out of the ring).
  int32_t record_min_us = 1000;
  bool operator==(const IdleConfig& o) const;
};

struct BarrierConfig {
  bool enabled = true;
  int32_t check_ms = 1000;   // how often the watchdog looks at the queue head
  int32_t leak_ms = 3000;    // a sync barrier blocking sync messages this long is a leak
  bool auto_remove = false;  // remove a confirmed leaked barrier
  bool operator==(const BarrierConfig& o) const;
};

// Where the looper monitor gets its message timing (docs/config.md, looper.source).
//   kPoll: PLT hooks on epoll_wait / epoll_pwait in looper.poll_library (the gaps between the main thread's
//          waits are its dispatches): no Java work per message, no message identity;
//   kPrinter: a LooperPrinter on the main Looper: target / callback / what of every message, at the price
//          of the two strings Looper builds per message once any Printer is set;
//   kAuto: poll when its hook installs, else printer (the status says which and why).
enum class LooperSource : uint8_t { kAuto, kPoll, kPrinter };
const char* LooperSourceName(LooperSource source);

struct LooperConfig {
  bool enabled = true;
  LooperSource source = LooperSource::kAuto;
  std::string poll_library = "libutils.so";  // the library whose epoll_wait import the Looper waits in
  int32_t lag_ms = 700;
  int32_t anr_ms = 5000;
  int32_t history_ms = 10000;         // dispatch history kept for a report
  int32_t sample_after_ms = 80;       // start sampling the main-thread stack once a message runs this long
  int32_t sample_interval_ms = 52;    // ... and sample every this often while it still runs
  // Messages at least this long get a timeline record of their own; back-to-back shorter ones are merged
  // into one run record (count, busy time), so the ring holds seconds of lags instead of fast messages.
  int32_t record_min_us = 1000;
  bool operator==(const LooperConfig& o) const;
};

struct TimelineConfig {
  // Records; a power of two. 1024 x 80 B = 80 KiB, resident once the ring wraps: with fast messages merged
  // into runs (or only counted) and short idle calls folded (record_min_us) the demo app writes ~110 records/s,
  // mostly its touches, so it holds its last ~9 s, more than any report looks back (lag windows, the stall
  // before an ANR).
  uint32_t capacity = 1024;
  std::string file;          // empty = in-memory ring; else an mmap'd file that survives kill -9
  bool operator==(const TimelineConfig& o) const;
};

struct ReportConfig {
  std::vector<std::string> key_packages;  // frames whose class starts with one of these are "key frames"
  int32_t max_reports_per_minute = 10;    // per report type
  int32_t max_stack_frames = 64;
  bool operator==(const ReportConfig& o) const;
};

// Which devices the remote flag is meant for. Empty lists / zero bounds mean "no restriction".
struct TargetingConfig {
  std::vector<std::string> app_versions;  // exact, or a prefix when the entry ends in '*' ("1.4.*")
  int32_t min_api = 0;                    // 0 = no lower bound
  int32_t max_api = 0;                    // 0 = no upper bound
  std::vector<NetworkType> networks;
  std::vector<std::string> device_ids;    // always on (bypass sampling and the rules above)
  bool operator==(const TargetingConfig& o) const;
};

// What the app says about this device at start. Not part of the remote flag.
struct DeviceFacts {
  std::string device_id;
  std::string app_version;
  int32_t api_level = 0;  // 0 = unknown
  NetworkType network = NetworkType::kUnknown;
  bool operator==(const DeviceFacts& o) const;
};

struct Config {
  bool enabled = true;
  double sample_rate = 1.0;  // share of devices, decided by SampleHash(device.device_id)
  TargetingConfig targeting;
  InputConfig input;
  IdleConfig idle;
  BarrierConfig barrier;
  LooperConfig looper;
  TimelineConfig timeline;
  ReportConfig report;
  DeviceFacts device;
  bool operator==(const Config& o) const;
  bool operator!=(const Config& o) const { return !(*this == o); }
};

// Hard limits on the document, so that a hostile or broken remote flag costs bounded time and memory.
struct ConfigLimits {
  static constexpr size_t kMaxDocumentBytes = 256 * 1024;
  static constexpr int kMaxDepth = 16;              // objects/arrays nested inside each other
  static constexpr size_t kMaxStringBytes = 4096;   // any string or key anywhere in the document
  static constexpr size_t kMaxIdBytes = 128;        // device ids, app versions, package prefixes
  static constexpr size_t kMaxListEntries = 256;    // app_versions, networks, key_packages
  static constexpr size_t kMaxDeviceIds = 1024;     // targeting.device_ids
  static constexpr size_t kMaxWarnings = 32;        // further warnings are counted in one last entry
  static constexpr uint32_t kMinTimelineCapacity = 64;
  static constexpr uint32_t kMaxTimelineCapacity = 1u << 20;
};

struct ConfigParseResult {
  std::optional<Config> config;        // engaged only when the document was accepted
  std::string error;                   // why it was rejected ("input.lag_ms: expected ..., got -5")
  std::vector<std::string> warnings;   // accepted but suspicious ("looper.lag_msec: unknown key")
  bool ok() const { return config.has_value(); }
};

// Parses and validates a config document. Device facts missing from the document's "device" object are
// taken from `device_defaults` (so a remote flag applied at runtime can omit them and keep the ones given
// at start). Never throws; a document that fails any check yields no config at all.
ConfigParseResult ParseConfig(std::string_view json, const DeviceFacts& device_defaults = DeviceFacts{});

// Parses `json` and, only if it is accepted, replaces *running with it. Returns false and leaves *running
// untouched otherwise; *error gets the reason. Either output pointer may be null except `running`.
bool ParseConfigInto(std::string_view json, Config* running, std::string* error,
                     std::vector<std::string>* warnings);

// Serialises a config to JSON that ParseConfig() reads back to an equal Config (used for status and
// reports, and to check the parser against itself).
std::string ConfigToJson(const Config& config);

// The device's sampling position: FNV-1a 64 of the id's bytes, mixed by the MurmurHash3 fmix64 finaliser,
// top 53 bits scaled to [0, 1). The same id always gives the same value, on every ABI.
double SampleHash(std::string_view device_id);

// Whether the plugin should run on this device under this config: enabled, targeted, sampled in (or
// listed in targeting.device_ids). *why (if not null) gets the deciding reason either way.
bool ShouldRun(const Config& config, std::string* why);

enum class Monitor : uint8_t { kInput, kIdle, kBarrier, kLooper };
constexpr size_t kMonitorCount = 4;
const char* MonitorName(Monitor monitor);

// True if the monitor should be running: ShouldRun() and the monitor's own "enabled".
bool MonitorActive(const Config& config, Monitor monitor);

enum class MonitorChange : uint8_t {
  kUnchanged,  // same state, same thresholds (or off before and after)
  kStarted,    // off before, on now
  kStopped,    // on before, off now
  kRetuned,    // on before and after, thresholds differ
};
const char* MonitorChangeName(MonitorChange change);

// What applying `after` in place of `before` means for the running plugin.
struct ConfigDiff {
  MonitorChange monitors[kMonitorCount] = {};
  std::string details[kMonitorCount];  // for kRetuned: "lag_ms 100 -> 150, anr_ms 5000 -> 4000"
  bool timeline_changed = false;       // capacity or file differ: the ring must be rebuilt
  bool report_changed = false;         // key packages, rate limit or frame limit differ
  MonitorChange of(Monitor m) const { return monitors[static_cast<size_t>(m)]; }
  bool any() const;
  std::string Describe() const;  // "input: retuned (lag_ms 100 -> 150); idle: stopped"
};
ConfigDiff DiffConfigs(const Config& before, const Config& after);

}  // namespace jp

#endif  // JANKPROBE_HOOK_CONFIG_H_
