// epoll_wait as the kernel call itself, with no libc wrapper around it: RawEpollWait.
//
// Why: the looper's poll source (looper/poll_timing.cc, WaitSlow<0>) calls the main thread's blocking
// epoll_wait in libutils.so. The wake from that sleep comes back with cold caches (on a phone after deep
// idle, on a host whose other tenants ran meanwhile), and every code line touched first after it is a miss.
// Through libc the wake runs libc's wrapper lines first (glibc: the syscall's return,
// __pthread_disable_asynccancel, ret; bionic: epoll_wait -> epoll_pwait -> __epoll_pwait's returns), then
// returns into ours: two cold text paths per wake. With the syscall instruction inline in the caller the
// wake returns into one line of ours.
//
// Why here, in the engine's folder (plt/): the engine and its tests are what the cross-ABI builds compile
// and run under qemu-user (scripts/run.sh cross_abi: aarch64, armhf, i686), so the four asm variants below
// are each executed by tests/plt/raw_wait_test.cc against libc's epoll_wait, not only compiled. Header-only:
// the caller inlines it.
//
// The call is epoll_pwait with a NULL signal mask, which epoll(7) / epoll_pwait(2) define as epoll_wait:
// arm64 (and every asm-generic ABI) has no epoll_wait syscall at all, and bionic's epoll_wait makes this
// same call on every ABI. With a NULL mask the kernel never reads the mask's size (set_user_sigmask returns
// at once); it is passed as libc passes it (8 bytes, the kernel's sigset_t) where a register is free.
//
// Syscall numbers, from the kernel's tables (torvalds/linux) and Debian 12's linux-libc-dev headers, which
// agree:
//   x86_64  281  arch/x86/entry/syscalls/syscall_64.tbl  ("281 common epoll_pwait")
//   i386    319  arch/x86/entry/syscalls/syscall_32.tbl  ("319 i386 epoll_pwait")
//   arm     346  arch/arm/tools/syscall.tbl              ("346 common epoll_pwait", EABI: __NR_SYSCALL_BASE 0)
//   arm64    22  include/uapi/asm-generic/unistd.h       ("#define __NR_epoll_pwait 22")
//
// What differs from libc's wrapper: errno is not touched (the result is the kernel's: a count, or -errno),
// and glibc's wrapper is a pthread cancellation point while this is not (bionic has no pthread_cancel; the
// poll source only uses it for the main thread's wait). Other ABIs: kHaveRawEpollWait is false and callers
// keep calling libc.
#ifndef JANKPROBE_PLT_RAW_WAIT_H_
#define JANKPROBE_PLT_RAW_WAIT_H_

#include <errno.h>
#include <sys/epoll.h>

namespace jp::plt {

#if defined(__x86_64__) || defined(__aarch64__) || (defined(__arm__) && defined(__ARM_EABI__)) || defined(__i386__)
inline constexpr bool kHaveRawEpollWait = true;
#else
inline constexpr bool kHaveRawEpollWait = false;
#endif

// epoll_wait(epfd, events, max, timeout) made as the epoll_pwait syscall (NULL mask): the number of ready
// events, or -errno (-EINTR, -EBADF, -EINVAL, -EFAULT) as the kernel returns it. Never touches errno.
inline long RawEpollWait(int epfd, struct epoll_event* events, int max, int timeout) {
#if defined(__x86_64__)
  // Number in rax, arguments in rdi rsi rdx r10 r8 r9; the instruction itself writes rcx (the return
  // address) and r11 (rflags); the kernel writes the events (memory).
  register long a4 __asm__("r10") = timeout;
  register long a5 __asm__("r8") = 0;  // sigmask: NULL
  register long a6 __asm__("r9") = 8;  // sigsetsize (not read with a NULL mask)
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "0"(281L), "D"(static_cast<long>(epfd)), "S"(events), "d"(static_cast<long>(max)), "r"(a4),
                     "r"(a5), "r"(a6)
                   : "rcx", "r11", "memory");
  return ret;
#elif defined(__aarch64__)
  // Number in x8, arguments in x0-x5, the result in x0; the kernel preserves every other register.
  register long x0 __asm__("x0") = epfd;
  register long x1 __asm__("x1") = reinterpret_cast<long>(events);
  register long x2 __asm__("x2") = max;
  register long x3 __asm__("x3") = timeout;
  register long x4 __asm__("x4") = 0;  // sigmask: NULL
  register long x5 __asm__("x5") = 8;  // sigsetsize (not read with a NULL mask)
  register long x8 __asm__("x8") = 22;
  __asm__ volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5), "r"(x8) : "memory");
  return x0;
#elif defined(__arm__) && defined(__ARM_EABI__)
  // EABI: number in r7, arguments in r0-r5, the result in r0. r7 is the frame pointer in Thumb code
  // (Debian's and the NDK's default), and GCC refuses a register variable bound to it there ("r7 cannot be
  // used in asm here") whenever the function keeps a frame pointer; so the number comes in any register
  // and r7 is saved in ip (r12, a scratch register the call may clobber) and restored around the svc. No
  // stack push: sp stays put, so an operand the compiler addresses from sp could not move under us.
  register long r0 __asm__("r0") = epfd;
  register long r1 __asm__("r1") = reinterpret_cast<long>(events);
  register long r2 __asm__("r2") = max;
  register long r3 __asm__("r3") = timeout;
  register long r4 __asm__("r4") = 0;  // sigmask: NULL
  register long r5 __asm__("r5") = 8;  // sigsetsize (not read with a NULL mask)
  __asm__ volatile(
      "mov ip, r7\n\t"
      "mov r7, %[nr]\n\t"
      "svc #0\n\t"
      "mov r7, ip"
      : "+r"(r0)
      : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), [nr] "r"(346L)
      : "ip", "memory");
  return r0;
#elif defined(__i386__)
  // int $0x80: number in eax, arguments in ebx ecx edx esi edi (ebp, the sixth, is left alone: the mask's
  // size is not read with a NULL mask, and ebp is the frame pointer in builds that keep one). ebx holds
  // the GOT pointer in PIC code, which older GCCs (before 5) keep out of asm operands; so epfd comes in
  // any register and is swapped into ebx around the call (if the compiler picked ebx, the swaps are no-ops).
  long ret;
  long fd = epfd;
  __asm__ volatile(
      "xchgl %%ebx, %[fd]\n\t"
      "int $0x80\n\t"
      "xchgl %%ebx, %[fd]"
      : "=a"(ret), [fd] "+r"(fd)
      : "0"(319L), "c"(events), "d"(max), "S"(timeout), "D"(0L)
      : "memory");
  return ret;
#else
  (void)epfd;
  (void)events;
  (void)max;
  (void)timeout;
  return -ENOSYS;  // never called: kHaveRawEpollWait is false here
#endif
}

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_RAW_WAIT_H_
