// Sync-barrier leak detection. Every barrier.check_ms the watchdog reads the main queue's head under the
// queue's monitor; a barrier (a message with no target) posted more than barrier.leak_ms ago is a suspect.
// It is confirmed with two probe messages on a plain Handler of the main looper, one synchronous and one
// asynchronous: if the asynchronous one runs while the synchronous one stays queued, the barrier is what
// holds the main thread's synchronous work -> a `barrier_leak` report (token, age, probe result). With
// barrier.auto_remove the barrier is removed with removeSyncBarrier(token) and the synchronous probe must
// then run: a `barrier_removed` report says whether it did.
//
// A queue that does not keep its messages in mMessages (Android 16's concurrent implementation, flagged by
// mUseConcurrent; Android 17's lock-free queue, whose mMessages stays null while it holds messages) cannot
// be inspected this way: found once at start (MainQueue::Classify), the check then says `unsupported`
// (status and one report), never "no barrier". A queue whose kind cannot be told leaves the monitor off
// with the reason. The periodic check itself calls no Java method (barrier/main_queue.h).
#ifndef JANKPROBE_BARRIER_BARRIER_MONITOR_H_
#define JANKPROBE_BARRIER_BARRIER_MONITOR_H_

#include <memory>

#include "hook/monitor.h"

namespace jp::barrier {

std::unique_ptr<hook::MonitorImpl> MakeBarrierMonitor();

}  // namespace jp::barrier

#endif  // JANKPROBE_BARRIER_BARRIER_MONITOR_H_
