// plt/raw_wait.h: the epoll_pwait syscall made by inline asm gives what libc's epoll_wait gives, case by
// case: each test makes the same call both ways on the same state and compares (the kernel's -errno against
// libc's -1 and errno). Run natively and in the cross builds under qemu-user (tests/plt/raw_wait.cmake),
// so a wrong syscall number or register binding on any of the four ABIs fails here: qemu runs the guest's
// syscall table, and a wrong number is another syscall (or ENOSYS) with other results.
#include "plt/raw_wait.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include "hook/clock.h"  // header-only: the engine-only cross builds compile it too

namespace jp::plt {
namespace {

// qemu-i386 (Debian 12) never returns from pthread_create in a guest: the cross i686 run sets this, and
// the signal test then has the kernel's interval timer send the signal instead of another thread.
bool ThreadsUnavailable() { return std::getenv("JP_TEST_NO_THREADS") != nullptr; }

// libc's epoll_wait in the raw call's terms: the count, or -errno.
long LibcWait(int epfd, epoll_event* events, int max, int timeout) {
  errno = 0;
  const int n = epoll_wait(epfd, events, max, timeout);
  return n >= 0 ? n : -errno;
}

// An epoll instance watching eventfds for input, each registered with its own data word.
class EpollWithEventfds {
 public:
  explicit EpollWithEventfds(int count) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < count; ++i) {
      const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = DataOf(i);
      if (fd < 0 || epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) ok_ = false;
      fds_[i] = fd;
    }
    count_ = count;
    ok_ = ok_ && epfd_ >= 0;
  }
  ~EpollWithEventfds() {
    for (int i = 0; i < count_; ++i) close(fds_[i]);
    close(epfd_);
  }
  // A value no uninitialised or zeroed slot holds, different per fd.
  static uint64_t DataOf(int i) { return 0x5eed0000f00d0000ull + static_cast<uint64_t>(i); }
  void MakeReadable(int i) {
    const uint64_t one = 1;
    ASSERT_EQ(write(fds_[i], &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
  }
  bool ok() const { return ok_; }
  int epfd() const { return epfd_; }

 private:
  int epfd_ = -1;
  int fds_[4] = {-1, -1, -1, -1};
  int count_ = 0;
  bool ok_ = true;
};

// An event's data word by value: struct epoll_event is packed on x86_64 (the word at byte 4), and gtest's
// comparisons take their arguments by reference, which UBSan rightly calls a misaligned binding.
uint64_t Data(const epoll_event& e) { return e.data.u64; }

// Events filled with a pattern no result holds, so an entry the call did not write is seen.
void Poison(epoll_event* events, int n) {
  for (int i = 0; i < n; ++i) {
    events[i].events = 0xdeadbeef;
    events[i].data.u64 = 0xdeadbeefdeadbeefull;
  }
}

TEST(RawEpollWait, IsAvailableOnTheFourAbis) {
#if defined(__x86_64__) || defined(__aarch64__) || defined(__arm__) || defined(__i386__)
  EXPECT_TRUE(kHaveRawEpollWait);
#else
  GTEST_SKIP() << "not one of the four ABIs: callers keep calling libc";
#endif
}

TEST(RawEpollWait, AReadableEventfdGivesOneEventWithItsData) {
  if (!kHaveRawEpollWait) GTEST_SKIP() << "no raw call on this ABI";
  EpollWithEventfds ep(3);
  ASSERT_TRUE(ep.ok());
  ep.MakeReadable(1);
  for (int timeout : {0, 1000, -1}) {  // ready before the call: none of them blocks
    epoll_event raw[8], libc[8];
    Poison(raw, 8);
    Poison(libc, 8);
    ASSERT_EQ(RawEpollWait(ep.epfd(), raw, 8, timeout), 1) << "timeout " << timeout;
    ASSERT_EQ(LibcWait(ep.epfd(), libc, 8, timeout), 1) << "timeout " << timeout;
    EXPECT_EQ(raw[0].events, static_cast<uint32_t>(EPOLLIN));
    EXPECT_EQ(Data(raw[0]), EpollWithEventfds::DataOf(1));
    EXPECT_EQ(raw[0].events, libc[0].events);
    EXPECT_EQ(Data(raw[0]), Data(libc[0]));
    EXPECT_EQ(Data(raw[1]), 0xdeadbeefdeadbeefull) << "only the ready event is written";
  }
}

TEST(RawEpollWait, SeveralReadableFdsUpToMax) {
  if (!kHaveRawEpollWait) GTEST_SKIP() << "no raw call on this ABI";
  EpollWithEventfds ep(3);
  ASSERT_TRUE(ep.ok());
  ep.MakeReadable(0);
  ep.MakeReadable(2);
  epoll_event raw[8], libc[8];
  ASSERT_EQ(RawEpollWait(ep.epfd(), raw, 8, 0), 2);
  ASSERT_EQ(LibcWait(ep.epfd(), libc, 8, 0), 2);
  // Level-triggered and nothing read: both calls see the same two, in the same order.
  for (int i = 0; i < 2; ++i) EXPECT_EQ(Data(raw[i]), Data(libc[i])) << i;
  EXPECT_NE(Data(raw[0]), Data(raw[1]));
  // max 1: one of them.
  EXPECT_EQ(RawEpollWait(ep.epfd(), raw, 1, 0), 1);
  EXPECT_EQ(LibcWait(ep.epfd(), libc, 1, 0), 1);
}

TEST(RawEpollWait, NothingReadyTimesOutAfterTheTimeout) {
  if (!kHaveRawEpollWait) GTEST_SKIP() << "no raw call on this ABI";
  EpollWithEventfds ep(1);
  ASSERT_TRUE(ep.ok());
  epoll_event events[4];
  for (int round = 0; round < 2; ++round) {
    const bool raw = round == 0;
    const uint64_t t0 = hook::MonotonicNs();
    const long n = raw ? RawEpollWait(ep.epfd(), events, 4, 1) : LibcWait(ep.epfd(), events, 4, 1);
    const uint64_t waited = hook::MonotonicNs() - t0;
    EXPECT_EQ(n, 0) << (raw ? "raw" : "libc");
    // The kernel sleeps at least the timeout (rounded up to its clock's granularity). The margin is for the
    // two clock reads' distance from the kernel's own: 50 us.
    EXPECT_GE(waited + 50000, 1000000u) << (raw ? "raw" : "libc") << " returned after " << waited << " ns";
  }
  // And timeout 0 returns at once with nothing.
  EXPECT_EQ(RawEpollWait(ep.epfd(), events, 4, 0), 0);
  EXPECT_EQ(LibcWait(ep.epfd(), events, 4, 0), 0);
}

TEST(RawEpollWait, BadArgumentsGiveTheKernelsErrno) {
  if (!kHaveRawEpollWait) GTEST_SKIP() << "no raw call on this ABI";
  epoll_event events[4];
  const int closed = dup(0);
  ASSERT_GE(closed, 0);
  close(closed);
  errno = 0;
  EXPECT_EQ(RawEpollWait(closed, events, 4, 0), -EBADF);
  EXPECT_EQ(errno, 0) << "the raw call leaves errno alone";
  EXPECT_EQ(LibcWait(closed, events, 4, 0), -EBADF);
  EXPECT_EQ(RawEpollWait(-1, events, 4, -1), -EBADF) << "a blocking call with a bad fd fails at once";
  EXPECT_EQ(LibcWait(-1, events, 4, -1), -EBADF);
  // Not an epoll fd, and a max of 0.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  EXPECT_EQ(RawEpollWait(pipe_fds[0], events, 4, 0), -EINVAL);
  EXPECT_EQ(LibcWait(pipe_fds[0], events, 4, 0), -EINVAL);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  EpollWithEventfds ep(1);
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(RawEpollWait(ep.epfd(), events, 0, 0), -EINVAL);
  EXPECT_EQ(LibcWait(ep.epfd(), events, 0, 0), -EINVAL);
}

std::atomic<int> g_signals{0};
void CountSignal(int) { g_signals.fetch_add(1, std::memory_order_relaxed); }

// A handler installed without SA_RESTART for the test's life, the previous one put back after.
class SignalWithoutRestart {
 public:
  explicit SignalWithoutRestart(int sig) : sig_(sig) {
    struct sigaction sa {};
    sa.sa_handler = CountSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: an interrupted wait returns EINTR (epoll never restarts anyway)
    sigaction(sig_, &sa, &old_);
  }
  ~SignalWithoutRestart() { sigaction(sig_, &old_, nullptr); }

 private:
  int sig_;
  struct sigaction old_ {};
};

// A blocking wait (timeout -1, nothing ever ready) interrupted by a signal. The signal is sent again every
// millisecond until the wait returned: one that lands before the thread is inside the wait only runs the
// handler, and the next one finds it waiting. So this never depends on timing; a wait that ignored the
// signal hangs until ctest's timeout.
long InterruptedWait(bool raw, int epfd) {
  epoll_event events[4];
  const int sig = ThreadsUnavailable() ? SIGALRM : SIGUSR1;
  SignalWithoutRestart handler(sig);
  long n = 0;
  if (ThreadsUnavailable()) {
    // The kernel's interval timer sends SIGALRM to the process: this thread, the only one.
    itimerval every_ms{};
    every_ms.it_interval.tv_usec = 1000;
    every_ms.it_value.tv_usec = 1000;
    setitimer(ITIMER_REAL, &every_ms, nullptr);
    n = raw ? RawEpollWait(epfd, events, 4, -1) : LibcWait(epfd, events, 4, -1);
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
  } else {
    std::atomic<bool> returned{false};
    const pthread_t waiter = pthread_self();
    std::thread sender([&] {
      while (!returned.load()) {
        pthread_kill(waiter, sig);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    n = raw ? RawEpollWait(epfd, events, 4, -1) : LibcWait(epfd, events, 4, -1);
    returned = true;
    sender.join();
  }
  return n;
}

TEST(RawEpollWait, ASignalInterruptsABlockingWaitWithEintr) {
  if (!kHaveRawEpollWait) GTEST_SKIP() << "no raw call on this ABI";
  EpollWithEventfds ep(1);
  ASSERT_TRUE(ep.ok());
  const int before = g_signals.load();
  EXPECT_EQ(InterruptedWait(true, ep.epfd()), -EINTR);
  const int raw_signals = g_signals.load() - before;
  EXPECT_GE(raw_signals, 1) << "the handler ran";
  EXPECT_EQ(InterruptedWait(false, ep.epfd()), -EINTR);
}

// The call the poll source makes on the main thread: a blocking wait that another thread's event ends.
TEST(RawEpollWait, ABlockingWaitReturnsTheEventAnotherThreadMakes) {
  if (!kHaveRawEpollWait) GTEST_SKIP() << "no raw call on this ABI";
  if (ThreadsUnavailable()) GTEST_SKIP() << "no threads under this emulator (qemu-i386 hangs in pthread_create)";
  for (int round = 0; round < 2; ++round) {
    const bool raw = round == 0;
    EpollWithEventfds ep(2);
    ASSERT_TRUE(ep.ok());
    epoll_event events[4];
    Poison(events, 4);
    std::thread writer([&] { ep.MakeReadable(1); });  // before or during the wait: either way one event
    const long n = raw ? RawEpollWait(ep.epfd(), events, 4, -1) : LibcWait(ep.epfd(), events, 4, -1);
    writer.join();
    ASSERT_EQ(n, 1) << (raw ? "raw" : "libc");
    EXPECT_EQ(Data(events[0]), EpollWithEventfds::DataOf(1)) << (raw ? "raw" : "libc");
  }
}

}  // namespace
}  // namespace jp::plt
