// Sync-barrier leak detection. Every barrier.check_ms the watchdog reads the main queue's head under the
// queue's monitor; a barrier (a message with no target) posted more than barrier.leak_ms ago is a suspect.
// It is confirmed with two probe messages on a plain Handler of the main looper, one synchronous and one
// asynchronous: if the asynchronous one runs while the synchronous one stays queued, the barrier is what
// holds the main thread's synchronous work -> a `barrier_leak` report (token, age, probe result). With
// barrier.auto_remove the barrier is removed with removeSyncBarrier(token) and the synchronous probe must
// then run: a `barrier_removed` report says whether it did.
//
// A queue whose mMessages stays null while it holds messages (Android 17's lock-free queue) cannot be
// inspected this way: the check then says `unsupported` (status and one report), never "no barrier".
#ifndef JANKPROBE_BARRIER_BARRIER_MONITOR_H_
#define JANKPROBE_BARRIER_BARRIER_MONITOR_H_

#include <memory>

#include "hook/monitor.h"

namespace jp::barrier {

std::unique_ptr<hook::MonitorImpl> MakeBarrierMonitor();

}  // namespace jp::barrier

#endif  // JANKPROBE_BARRIER_BARRIER_MONITOR_H_
