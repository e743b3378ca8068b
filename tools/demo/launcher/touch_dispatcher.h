// The system side of the demo's InputChannel: an InputDispatcher stand-in that publishes a stream of touch
// gestures at 120 events per second through the libinput.so fixture, reads the app's FINISHED signals, and,
// like Android's dispatcher, stops streaming ahead while the oldest unfinished event is older than 500 ms
// (so a stuck app has a bounded backlog, not a full socket). Also the fd watcher that tells the app's
// receiver when the channel is readable, which a phone's Looper does with epoll inside nativePollOnce.
#ifndef JANKPROBE_TOOLS_DEMO_LAUNCHER_TOUCH_DISPATCHER_H_
#define JANKPROBE_TOOLS_DEMO_LAUNCHER_TOUCH_DISPATCHER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "tests/fixtures/libinput/input_channel.h"

namespace jp::demo {

class TouchDispatcher {
 public:
  static constexpr int64_t kPeriodNs = 1000000000LL / 120;  // 120 touches per second within a gesture
  static constexpr int kGestureEvents = 96;                // DOWN, 94 MOVEs, UP: 0.8 s of swiping
  static constexpr int kGapTicks = 12;                     // 100 ms with the finger up between gestures
  static constexpr int64_t kStreamAheadNs = 500000000LL;   // InputDispatcher's STREAM_AHEAD_EVENT_TIMEOUT

  TouchDispatcher() = default;
  ~TouchDispatcher();
  TouchDispatcher(const TouchDispatcher&) = delete;
  TouchDispatcher& operator=(const TouchDispatcher&) = delete;

  // Opens the channel (Android 14 layout, bionic's recvfrom + __sendto_chk). false with *why on failure.
  bool Open(std::string* why);
  void Start();
  void Stop();

  // The app side's calls. The fixture's channel has one scratch buffer for both ends (a real channel's
  // ends live in two processes), so every call on it is serialised here.
  int Consume(jpfx_event* out);
  int Finish(uint32_t seq, int64_t consume_time);
  int app_fd() const { return channel_ ? jpfx_app_fd(channel_) : -1; }
  uint64_t published() const { return published_.load(); }
  uint64_t finished() const { return finished_.load(); }
  uint64_t held_back_ticks() const { return held_back_.load(); }
  uint64_t errors() const { return errors_.load(); }

 private:
  void Loop();
  void DrainFinished(int64_t now);

  jpfx_channel* channel_ = nullptr;
  std::mutex channel_mu_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::map<uint32_t, int64_t> outstanding_;  // seq -> publish time; dispatcher thread only
  std::atomic<uint64_t> published_{0}, finished_{0}, held_back_{0}, errors_{0};
};

// Watches the app's end of the channel and calls on_readable (on its own thread) once per readable edge:
// after a call it waits for Rearm() (the app drained the channel) before looking again.
class FdWatcher {
 public:
  FdWatcher() = default;
  ~FdWatcher();
  FdWatcher(const FdWatcher&) = delete;
  FdWatcher& operator=(const FdWatcher&) = delete;

  bool Start(int fd, std::function<void()> on_readable, std::function<void()> on_exit, std::string* why);
  void Rearm();
  void Stop();

 private:
  void Loop();

  int fd_ = -1;
  int rearm_fd_ = -1;
  int stop_fd_ = -1;
  std::function<void()> on_readable_;
  std::function<void()> on_exit_;
  std::thread thread_;
};

int64_t MonotonicNs();

}  // namespace jp::demo

#endif  // JANKPROBE_TOOLS_DEMO_LAUNCHER_TOUCH_DISPATCHER_H_
