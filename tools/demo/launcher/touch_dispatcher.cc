#include "tools/demo/launcher/touch_dispatcher.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace jp::demo {
namespace {

constexpr int kApi = 34;
constexpr int32_t kActionDown = 0;  // AMOTION_EVENT_ACTION_*
constexpr int32_t kActionUp = 1;
constexpr int32_t kActionMove = 2;

void SleepUntil(int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1000000000LL), static_cast<long>(ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

TouchDispatcher::~TouchDispatcher() {
  Stop();
  if (channel_) jpfx_channel_close(channel_);
}

bool TouchDispatcher::Open(std::string* why) {
  channel_ = jpfx_channel_open(kApi, JPFX_IO_BIONIC);
  if (!channel_) {
    *why = std::string("jpfx_channel_open(api 34): ") + std::strerror(errno);
    return false;
  }
  return true;
}

int TouchDispatcher::Consume(jpfx_event* out) {
  std::lock_guard<std::mutex> lock(channel_mu_);
  return jpfx_consume(channel_, out);
}

int TouchDispatcher::Finish(uint32_t seq, int64_t consume_time) {
  std::lock_guard<std::mutex> lock(channel_mu_);
  return jpfx_finish(channel_, seq, 1, consume_time);
}

void TouchDispatcher::Start() { thread_ = std::thread([this] { Loop(); }); }

void TouchDispatcher::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void TouchDispatcher::DrainFinished(int64_t now) {
  (void)now;
  for (;;) {
    uint32_t seq = 0;
    int handled = 0;
    int64_t consume_time = 0;
    int rc;
    {
      std::lock_guard<std::mutex> lock(channel_mu_);
      rc = jpfx_dispatcher_receive(channel_, &seq, &handled, &consume_time);
    }
    if (rc == 0) return;
    if (rc < 0) {
      errors_.fetch_add(1);
      return;
    }
    if (rc == 1 && outstanding_.erase(seq) == 1) finished_.fetch_add(1);
  }
}

void TouchDispatcher::Loop() {
  uint32_t seq = 1;
  int position = 0;  // index in gesture (0..kGestureEvents-1), then gap ticks
  int64_t tick = MonotonicNs();
  while (!stop_.load(std::memory_order_relaxed)) {
    tick += kPeriodNs;
    SleepUntil(tick);
    const int64_t now = MonotonicNs();
    DrainFinished(now);
    if (position >= kGestureEvents) {  // finger up
      if (++position >= kGestureEvents + kGapTicks) position = 0;
      continue;
    }
    if (!outstanding_.empty() && now - outstanding_.begin()->second > kStreamAheadNs) {
      held_back_.fetch_add(1);  // the app is behind: wait as InputDispatcher does
      continue;
    }
    const int32_t action = position == 0 ? kActionDown : position == kGestureEvents - 1 ? kActionUp : kActionMove;
    int rc;
    {
      std::lock_guard<std::mutex> lock(channel_mu_);
      rc = jpfx_publish_motion(channel_, seq, action, now, 1);
    }
    if (rc == -EAGAIN) continue;  // socket full: try the same event next tick
    if (rc != 0) {
      errors_.fetch_add(1);
      continue;
    }
    outstanding_.emplace(seq, now);
    published_.fetch_add(1);
    ++seq;
    ++position;
  }
}

FdWatcher::~FdWatcher() { Stop(); }

bool FdWatcher::Start(int fd, std::function<void()> on_readable, std::function<void()> on_exit, std::string* why) {
  fd_ = fd;
  on_readable_ = std::move(on_readable);
  on_exit_ = std::move(on_exit);
  rearm_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (rearm_fd_ < 0 || stop_fd_ < 0) {
    *why = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  thread_ = std::thread([this] { Loop(); });
  return true;
}

void FdWatcher::Rearm() {
  const uint64_t one = 1;
  if (rearm_fd_ >= 0) (void)!write(rearm_fd_, &one, sizeof one);
}

void FdWatcher::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  if (rearm_fd_ >= 0) close(rearm_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
  rearm_fd_ = stop_fd_ = -1;
}

void FdWatcher::Loop() {
  bool armed = true;
  for (;;) {
    pollfd fds[2] = {{armed ? fd_ : rearm_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN)) break;
    if (armed && (fds[0].revents & (POLLIN | POLLERR | POLLHUP))) {
      armed = false;
      on_readable_();
    } else if (!armed && (fds[0].revents & POLLIN)) {
      uint64_t v;
      (void)!read(rearm_fd_, &v, sizeof v);
      armed = true;
    }
  }
  if (on_exit_) on_exit_();
}

}  // namespace jp::demo
