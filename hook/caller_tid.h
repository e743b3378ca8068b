// The calling thread's kernel tid without a syscall per call, for the hot paths' owner tests (the in-flight
// gate's owner is the app's main thread). bionic keeps the tid in the thread's own struct; glibc's gettid()
// is a syscall, so there it is cached per thread in initial-exec TLS (no allocation on first touch, unlike
// the dynamic TLS block of a dlopen'ed library).
#ifndef JANKPROBE_HOOK_CALLER_TID_H_
#define JANKPROBE_HOOK_CALLER_TID_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace jp::hook {

inline uint32_t CallerTid() noexcept {
#if defined(__BIONIC__)
  return static_cast<uint32_t>(gettid());
#else
  static thread_local uint32_t tid __attribute__((tls_model("initial-exec"))) = 0;
  if (tid == 0) tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
#endif
}

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_CALLER_TID_H_
