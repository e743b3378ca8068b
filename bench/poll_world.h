// The plugin side the looper's poll source needs, without the JVM or the plugin object: a timeline, a
// watchdog, the context naming them (this thread's tid as the main thread's), and the looper timing
// activated with the default config. Shared by looper_poll_bench (linked with the static parts) and the
// library twin (bench/library_twin.cc, inside a copy of the shipped library).
#ifndef JANKPROBE_BENCH_POLL_WORLD_H_
#define JANKPROBE_BENCH_POLL_WORLD_H_

#include <memory>
#include <string>

#include "hook/clock.h"
#include "hook/config.h"
#include "hook/monitor.h"
#include "hook/timeline.h"
#include "hook/watchdog.h"
#include "looper/dispatch_timing.h"

namespace jp::bench {

struct PollWorld {
  std::unique_ptr<hook::Timeline> timeline;
  hook::Watchdog watchdog;
  hook::PluginContext ctx;

  // Once per process, on the thread that will be the main thread. False with *why on failure.
  bool Start(std::string* why) {
    timeline = hook::Timeline::Create(hook::Timeline::Options(), why);
    if (!timeline || !watchdog.Start(why)) return false;
    ctx.timeline = timeline.get();
    ctx.watchdog = &watchdog;
    ctx.main_tid = static_cast<uint32_t>(hook::CurrentTid());
    looper::ActivateTiming(&ctx, Config());
    return true;
  }
};

}  // namespace jp::bench

#endif  // JANKPROBE_BENCH_POLL_WORLD_H_
