// The PLT proxies installed into libinput.so: the socket calls an InputChannel makes, with their real
// prototypes (bionic's fortified __sendto_chk / __recvfrom_chk take 7 arguments). Each calls the original
// (the previous target cached per call site, else the engine's jp_plt_hook_prev_for) and hands the result
// to the InputTracker; nothing else.
#ifndef JANKPROBE_INPUT_INPUT_PROXIES_H_
#define JANKPROBE_INPUT_INPUT_PROXIES_H_

#include <string>

#include "jankprobe/plt.h"

namespace jp::input {

struct ProxySpec {
  const char* symbol;
  void* proxy;
  void** prev;
  jp_plt_hook** handle;
};

constexpr int kProxyCount = 6;
// recvfrom, sendto, __sendto_chk, recv, send, __recvfrom_chk, in that order.
const ProxySpec* Proxies();

// What installing the proxies into `caller` did, per symbol.
struct ProxyInstall {
  enum class State { kHooked, kPending, kNotImported, kFailed };
  State state[kProxyCount] = {};
  size_t slots[kProxyCount] = {};
  std::string error[kProxyCount];
};
const char* ProxyStateName(ProxyInstall::State state);

// Installs every proxy the caller imports. false + *why when one fails for another reason than "does not
// import", or when it imports none; everything installed is removed again then.
bool InstallProxies(const char* caller, ProxyInstall* out, std::string* why);
// Removes every installed proxy. "" or the reasons removal reported.
std::string RemoveProxies();

}  // namespace jp::input

#endif  // JANKPROBE_INPUT_INPUT_PROXIES_H_
