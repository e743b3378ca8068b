// Gives back the stack pages that Java frames left resident on a native thread we run (the watchdog).
//
// HotSpot touches a whole shadow zone below sp (20 pages on x86_64) at every Java call it makes on a thread,
// interpreted or compiled, and attaching a thread runs Java (Thread's constructor): an attached native
// thread keeps ~88 KiB of stack resident although its own native work needs a few KiB. The watchdog attaches
// once and its steady state makes no Java call (the barrier check reads fields only), so after a Java
// episode its loop gives those pages back once, at its shallowest point; the next Java episode (a lag's
// stack, a barrier removal, the frame ticker's resume) touches them again and is followed by one more
// release. Pages more than a red zone below sp hold no live data (a signal frame written there later is
// written after the release), so a page given back is simply a zero page at its next touch.
#ifndef JANKPROBE_HOOK_JNI_JAVA_STACK_RELEASE_H_
#define JANKPROBE_HOOK_JNI_JAVA_STACK_RELEASE_H_

#include <cstddef>
#include <cstdint>

namespace jp::jni {

// Set on the calling thread by whatever ran Java frames on it: AttachedEnv when it attached the thread,
// and the watchdog-side code that calls Java methods. __thread (no dynamic initialiser): a plain TLS load.
extern __thread bool t_java_frames_ran __attribute__((visibility("hidden")));
inline void NoteJavaFramesRan() { t_java_frames_ran = true; }

// How much of the stack below the caller's frame is kept: the native depth the watchdog's callbacks reach
// below its loop (a few KiB) with room to spare, so the release does not just move faults into them.
constexpr size_t kStackKeptBelowCaller = 16 * 1024;
// Never looked at: the lowest part of the stack, where a VM puts its own protected zones (HotSpot's
// reserved/yellow/red pages, ART's overflow region), above the thread library's guard page.
constexpr size_t kStackBottomUntouched = 64 * 1024;

struct StackReleaseCounts {
  uint64_t releases = 0;        // calls that looked (after Java ran)
  uint64_t released_bytes = 0;  // resident bytes given back, over all calls
  uint64_t failures = 0;        // calls that gave up; last_error says why
  const char* last_error = "";  // static text
};
StackReleaseCounts StackReleaseCountsNow();

// Gives back the resident pages of the calling thread's stack that lie below its caller's frame minus
// kStackKeptBelowCaller and above the stack's bottom plus its guard and kStackBottomUntouched: only pages
// mincore reports resident, in runs (a page the VM protected was never touched, so it is never included),
// with madvise(MADV_DONTNEED). Clears t_java_frames_ran. Returns the bytes given back, or -1 (the reason
// in StackReleaseCountsNow().last_error). Out of line and cold: it runs once per Java episode.
long ReleaseStackBelowCaller() __attribute__((noinline, cold));

// For the thread's loop, at its shallowest point: one TLS load in the usual case.
inline void ReleaseStackIfJavaRan() {
  if (__builtin_expect(t_java_frames_ran, false)) ReleaseStackBelowCaller();
}

}  // namespace jp::jni

#endif  // JANKPROBE_HOOK_JNI_JAVA_STACK_RELEASE_H_
