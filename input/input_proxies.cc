#include "input/input_proxies.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hook/jni/jni_refs.h"
#include "input/hot_path.h"
#include "input/input_tracker.h"
#include "plt/prev_cache.h"

extern "C" {
// The fortified entry points as bionic declares them (glibc has __recvfrom_chk with the same prototype and
// no __sendto_chk). Declared here because neither libc's headers expose both.
using SendtoChkFn = ssize_t (*)(int, const void*, size_t, size_t, int, const struct sockaddr*, socklen_t);
using RecvfromChkFn = ssize_t (*)(int, void*, size_t, size_t, int, struct sockaddr*, socklen_t*);
}

namespace jp::input {
namespace {

using RecvfromFn = ssize_t (*)(int, void*, size_t, int, struct sockaddr*, socklen_t*);
using SendtoFn = ssize_t (*)(int, const void*, size_t, int, const struct sockaddr*, socklen_t);
using RecvFn = ssize_t (*)(int, void*, size_t, int);
using SendFn = ssize_t (*)(int, const void*, size_t, int);

void* g_prev[kProxyCount];
jp_plt_hook* g_hook[kProxyCount];

// The previous target per proxy, cached for the first call sites (return addresses) that ask after an
// install (plt/prev_cache.h: what it saves, and its rules with InstallProxies), from any thread: the
// dispatcher's publish and the app's FINISHED are different call sites of one send function when the
// library inlines its Send() (each gets its entry). A call that misses asks the engine as JP_PLT_PREV
// does, in an out-of-line half that gets the arguments as they came.
// Each in its own lines. After the original call a proxy reads nothing of its own: the tracker is at a
// link-time address (InputTracker::Instance; until session 8 its address sat beside the cache's first
// entry, loaded after the call, and every load of the tracker's lines waited for that one).
struct alignas(64) ProxyLine {
  plt::PrevCache cache;  // its first member is the first entry (plt/prev_cache.h): the line's first 16 bytes
};
ProxyLine g_line[kProxyCount];

// The original call. The slow half is a separate function that gets the arguments as they came, so that
// the proxy keeps only what the tracker needs across its one call: the proxy checks the cache's first
// entry (FindFirst), the slow half the others and then the engine (Get).
template <int I, typename Fn, typename... Args>
JP_INPUT_COLD ssize_t CallPrevSlow(const void* ra, Args... args) noexcept {
  return reinterpret_cast<Fn>(g_line[I].cache.Get(&g_hook[I], &g_prev[I], ra))(args...);
}
template <int I, typename Fn, typename... Args>
__attribute__((always_inline)) inline ssize_t CallPrev(const void* ra, Args... args) noexcept {
  InputTracker::PrefetchPerEventLines();  // first: the call's time in the kernel covers their fetch
  if (void* const cached = g_line[I].cache.FindFirst(ra); __builtin_expect(cached != nullptr, 1)) {
    return reinterpret_cast<Fn>(cached)(args...);
  }
  return CallPrevSlow<I, Fn>(ra, args...);
}

// No tail calls from the proxies' original call: the engine's lookup needs our caller's return address,
// and the tracker runs after the call. The tracker's call is the tail call (it returns n).
JP_INPUT_PROXY ssize_t ProxyRecvfrom(int fd, void* buf, size_t len, int flags, struct sockaddr* from,
                                     socklen_t* fromlen) {
  const ssize_t n = CallPrev<0, RecvfromFn>(__builtin_return_address(0), fd, buf, len, flags, from, fromlen);
  return InputTracker::ProxyReceived(fd, buf, n, len);
}

JP_INPUT_PROXY ssize_t ProxySendto(int fd, const void* buf, size_t len, int flags, const struct sockaddr* to,
                                   socklen_t tolen) {
  InputTracker::PrefetchFinishedSlot(fd, buf, len);
  const ssize_t n = CallPrev<1, SendtoFn>(__builtin_return_address(0), fd, buf, len, flags, to, tolen);
  return InputTracker::ProxySent(fd, buf, n);
}

JP_INPUT_PROXY ssize_t ProxySendtoChk(int fd, const void* buf, size_t len, size_t buflen, int flags,
                                      const struct sockaddr* to, socklen_t tolen) {
  InputTracker::PrefetchFinishedSlot(fd, buf, len);
  const ssize_t n = CallPrev<2, SendtoChkFn>(__builtin_return_address(0), fd, buf, len, buflen, flags, to, tolen);
  return InputTracker::ProxySent(fd, buf, n);
}

JP_INPUT_PROXY ssize_t ProxyRecv(int fd, void* buf, size_t len, int flags) {
  const ssize_t n = CallPrev<3, RecvFn>(__builtin_return_address(0), fd, buf, len, flags);
  return InputTracker::ProxyReceived(fd, buf, n, len);
}

JP_INPUT_PROXY ssize_t ProxySend(int fd, const void* buf, size_t len, int flags) {
  InputTracker::PrefetchFinishedSlot(fd, buf, len);
  const ssize_t n = CallPrev<4, SendFn>(__builtin_return_address(0), fd, buf, len, flags);
  return InputTracker::ProxySent(fd, buf, n);
}

JP_INPUT_PROXY ssize_t ProxyRecvfromChk(int fd, void* buf, size_t len, size_t buflen, int flags, struct sockaddr* from,
                                        socklen_t* fromlen) {
  const ssize_t n =
      CallPrev<5, RecvfromChkFn>(__builtin_return_address(0), fd, buf, len, buflen, flags, from, fromlen);
  return InputTracker::ProxyReceived(fd, buf, n, len);
}

const ProxySpec kProxies[kProxyCount] = {
    {"recvfrom", reinterpret_cast<void*>(&ProxyRecvfrom), &g_prev[0], &g_hook[0]},
    {"sendto", reinterpret_cast<void*>(&ProxySendto), &g_prev[1], &g_hook[1]},
    {"__sendto_chk", reinterpret_cast<void*>(&ProxySendtoChk), &g_prev[2], &g_hook[2]},
    {"recv", reinterpret_cast<void*>(&ProxyRecv), &g_prev[3], &g_hook[3]},
    {"send", reinterpret_cast<void*>(&ProxySend), &g_prev[4], &g_hook[4]},
    {"__recvfrom_chk", reinterpret_cast<void*>(&ProxyRecvfromChk), &g_prev[5], &g_hook[5]},
};

bool NotImported(const std::string& error) { return error.find(" not import ") != std::string::npos; }

}  // namespace

const ProxySpec* Proxies() { return kProxies; }

const char* ProxyStateName(ProxyInstall::State state) {
  switch (state) {
    case ProxyInstall::State::kHooked: return "hooked";
    case ProxyInstall::State::kPending: return "pending";
    case ProxyInstall::State::kNotImported: return "not imported";
    case ProxyInstall::State::kFailed: return "failed";
  }
  return "?";
}

bool InstallProxies(const char* caller, ProxyInstall* out, std::string* why) {
  // Before any slot is written: the tracker the proxies reach at its address (InputTracker::Instance) is
  // constructed (the monitor's Enable did it already; this keeps it true for any caller).
  (void)InputTracker::Get();
  // Before any slot is written, and again below once every install returned (plt/prev_cache.h).
  for (ProxyLine& l : g_line) l.cache.Clear();
  int used = 0;
  std::string failures;
  for (int i = 0; i < kProxyCount; ++i) {
    const ProxySpec& p = kProxies[i];
    jp_plt_hook* h = jp_plt_hook_install(caller, p.symbol, p.proxy, p.prev);
    if (h == nullptr) {
      out->error[i] = jp_plt_last_error();
      if (NotImported(out->error[i])) {
        out->state[i] = ProxyInstall::State::kNotImported;
      } else {
        out->state[i] = ProxyInstall::State::kFailed;
        failures += std::string(failures.empty() ? "" : "; ") + p.symbol + ": " + out->error[i];
      }
      continue;
    }
    __atomic_store_n(p.handle, h, __ATOMIC_RELEASE);
    out->slots[i] = jp_plt_hook_slot_count(h);
    // Zero slots on success means libinput.so is not loaded yet: the engine patches it at dlopen.
    out->state[i] = out->slots[i] > 0 ? ProxyInstall::State::kHooked : ProxyInstall::State::kPending;
    ++used;
  }
  for (ProxyLine& l : g_line) l.cache.Clear();
  // The main thread's wake from a blocking wait asks for the two proxies' lines its events take (a read
  // through recvfrom, the FINISHED through __sendto_chk: libinput's fortified recv/send): read-only after
  // their fill and touched by nothing else the thread runs, they were cold at every event (in situ, the
  // first entry's load held 24-48 % of ProxySendtoChk's samples).
  jni::SetWakeLines(jni::WakeLinesHint(&g_line[0], &g_line[2]));
  if (failures.empty() && used == 0) failures = std::string(caller) + " imports none of the socket calls an InputChannel makes";
  if (!failures.empty()) {
    RemoveProxies();
    *why = "hooking " + std::string(caller) + ": " + failures;
    return false;
  }
  return true;
}

std::string RemoveProxies() {
  jni::SetWakeLines(0);
  std::string errors;
  for (int i = 0; i < kProxyCount; ++i) {
    jp_plt_hook* h = __atomic_load_n(kProxies[i].handle, __ATOMIC_ACQUIRE);
    if (h == nullptr || !jp_plt_hook_is_active(h)) continue;
    // A hook still chained behind another tool stays inactive and passes through (the tracker is off too).
    if (jp_plt_hook_remove(h) < 0) {
      errors += std::string(errors.empty() ? "" : "; ") + kProxies[i].symbol + ": " + jp_plt_last_error();
    }
  }
  return errors;
}

}  // namespace jp::input
