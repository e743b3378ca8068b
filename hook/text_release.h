// Gives back the resident pages of code that only start, configure and stop run, once they are done.
//
// Why: lib/startup_order.ld lays our text out as [what runs after start] then, on its own 64 KiB
// fault-around windows, [what only start/configure/stop run] (config parsing, PLT installation, JNI
// resolution, monitor start-up): ~100+ KiB that an app would otherwise keep resident for its whole life.
// Those are clean file pages of a private mapping, so madvise(MADV_DONTNEED) takes them out of the
// process's RSS at no risk: the next call into them (a later remote flag) maps them again from the page
// cache (a minor fault), and the steady-state code never shares a window with them.
//
// Never drops a patch: a page another tool wrote (a breakpoint, an inline hook: a private copy, no longer
// a file page) makes the whole release refuse, with the reason in status.
#ifndef JANKPROBE_HOOK_TEXT_RELEASE_H_
#define JANKPROBE_HOOK_TEXT_RELEASE_H_

#include <cstddef>
#include <string>

namespace jp::hook {

struct TextReleaseResult {
  bool released = false;
  size_t pages = 0;           // whole pages inside the range (the ones released)
  size_t resident_pages = 0;  // of them, present before the release (what left the RSS)
  size_t page_size = 0;
  std::string reason;         // why nothing was released (empty when released)
};

// madvise(MADV_DONTNEED) over the whole pages inside [begin, end), all or nothing, if and only if they lie
// inside one private, executable, file-backed mapping that also holds `owner` (an address of the caller's
// own code: the range must be the caller's text, nothing else), that mapping is r-xp (not writable), and
// no page of the range is anything but a file page in /proc/self/pagemap (a present page that is not a
// file page, or a swapped one, is a private copy someone wrote). Otherwise nothing is touched and `reason`
// says why. Partial pages at either end are left alone.
TextReleaseResult ReleaseFileText(const void* begin, const void* end, const void* owner);

// The library's start-only range (lib/startup_order.ld's jp_start_only_text_begin/end), released as above.
// Called by jankprobe_start, jankprobe_configure and jankprobe_stop on the caller's thread once they are
// done. Does nothing when the library was linked without the range (the static libraries in tests), or
// when the environment has JANKPROBE_TEXT_RELEASE=off. Thread-safe; never throws.
void ReleaseStartOnlyText();

// {"state": "on" | "off: why" | "unavailable: why", "range_kib", "releases", "released_kib", "refusals",
//  "last_refusal"}: for the plugin's status.
std::string TextReleaseStatusJson();

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_TEXT_RELEASE_H_
