// Gives back the resident pages of code that a running app does not need, once start, configure or stop
// is done: the code only they run, and the rare paths (reports, stacks, status, export).
//
// Why: lib/startup_order.ld lays our text out as [what a running app keeps executing: hot paths, the
// watchdog's periodic checks; in the first 64 KiB fault-around window with .plt] [the rare paths
// (.text.jp_rare)] then, on 64 KiB windows of its own, [what only start/configure/stop run] (config
// parsing, PLT installation, JNI resolution, monitor start-up): ~100+ KiB that an app would otherwise
// keep resident for its whole life. Those are clean file pages of a private mapping, so
// madvise(MADV_DONTNEED) takes them out of the process's RSS at no risk: the next call into them (a
// later remote flag, a lag report) maps them again from the page cache (a minor fault).
//
// Never drops a patch: a page another tool wrote (a breakpoint, an inline hook: a private copy, no longer
// a file page) makes the whole release refuse, with the reason in status.
#ifndef JANKPROBE_HOOK_TEXT_RELEASE_H_
#define JANKPROBE_HOOK_TEXT_RELEASE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace jp::hook {

struct TextReleaseResult {
  bool released = false;
  size_t pages = 0;           // whole pages inside the range (the ones released)
  size_t resident_pages = 0;  // of them, present before the release (what left the RSS)
  size_t page_size = 0;
  std::string reason;         // why nothing was released (empty when released)
};

// A loadable segment (PT_LOAD) of an object the dynamic loader has loaded, as its program headers say.
struct LoadSegment {
  uintptr_t begin = 0, end = 0;  // load address + p_vaddr, + p_memsz
  bool executable = false, writable = false;
};

// The PT_LOAD segment that holds `addr`, from dl_iterate_phdr (the loader's own record: no /proc read, no
// syscall). False, with `why`, if no loaded object's segment holds it.
bool FindLoadSegment(const void* addr, LoadSegment* out, std::string* why);

// madvise(MADV_DONTNEED) over the whole pages inside [begin, end), all or nothing, if and only if
// - they lie inside `segment`, and that segment is executable and not writable (the caller passes the
//   segment of its own code: the range must be the caller's text, nothing else), and
// - no page of the range is anything but a file page or absent in /proc/self/pagemap: a present page that
//   is not a file page, or a swapped one, is a private copy (a patch, a breakpoint, anonymous memory
//   mapped over the text) that MADV_DONTNEED would destroy. A file page comes back from the file, and an
//   absent one has nothing to lose.
// Otherwise nothing is touched and `reason` says why. Partial pages at either end are left alone.
// Why this is enough: MADV_DONTNEED can only lose what exists nowhere but in this process's page tables
// (anonymous and copy-on-write pages); the pagemap check finds exactly those, page by page, whatever the
// mapping's current protection, and the segment check keeps the range to our own code.
TextReleaseResult ReleaseFileText(const void* begin, const void* end, const LoadSegment& segment);

// The same for read-only data: `segment` must not be writable (executable or not), the pages the same
// file pages. For the first PT_LOAD (ELF and program headers, .dynsym, .dynstr, .rodata, relocations):
// the loader reads it at load, start reads its constants, a running app need not (see
// ReleaseStartOnlyText).
TextReleaseResult ReleaseReadOnlyFilePages(const void* begin, const void* end, const LoadSegment& segment);

// The library's rare and start-only text (lib/startup_order.ld's jp_rare_text_begin up to
// jp_start_only_text_end; from jp_start_only_text_begin with an order that has no rare part), released as
// above: the segment is the one holding this function (FindLoadSegment). Then the library's first
// segment, the read-only one holding its ELF header (whole pages, as mapped): ~40 KiB that only load and
// start need, as long as the steady code reads no constant or string from it (a reader faults it back,
// and nothing is lost: the next release drops it again).
// Called by jankprobe_start, _configure, _stop, _status and _export on the caller's thread once they are
// done, and by the report delivery thread once it has delivered a burst of reports (hook/report_sink.cc:
// a lag's verdict, stack and rendering ran rare code, given back without waiting for the app's next call). Does nothing when the library was linked without the range (the static libraries in tests), or
// when the environment has JANKPROBE_TEXT_RELEASE=off. Thread-safe; never throws.
void ReleaseStartOnlyText();

// The rare text a running app runs without calling us and without a report: the watchdog's sampling of a
// main-thread gap past looper.sample_after_ms (80 ms: OnPollSample, a stack sample) and what the main
// thread runs after such a stop (an idle call past idle.record_min_us: its record path). On a loaded host,
// and in any app with an 80 ms message (the demo's first gap after JankProbe.start is one), its first call
// faults the second 64 KiB window of our text in; with no report (whose delivery releases it,
// hook/report_sink.cc), nothing gave it back until the app's next status, export, configure or stop: the
// demo's `all` kept 128 KiB of text instead of 64 in most runs on a busy host (mem9, session 9). So the
// watchdog's loop sweeps once per kRareTextSweepNs (RareTextSweepDue, in Watchdog::Loop after its
// callbacks, hook/watchdog.cc): SweepRareText reads the range's pagemap entries (one pread) and releases
// (ReleaseStartOnlyText) only if a page of it is mapped. Any thread's rare episode, sampled or not, is
// given back within a sweep period of the watchdog's next wake: after a pass, the watchdog does not park
// before the sweep it then owes (one more wake; hook/watchdog.cc, Loop).
constexpr uint64_t kRareTextSweepNs = 1'000'000'000;

// For a thread's loop: true once per kRareTextSweepNs of now_ns, the first time one period after the first
// call (*next_ns == 0: the thread's first iteration, e.g. the watchdog's while start is still running the
// start-only code that start releases itself). *next_ns is the loop's own. Always inline: it sits in the
// watchdog's loop (the steady text), and a function of its own would land in plain .text, outside
// lib/startup_order.ld's order.
__attribute__((always_inline)) inline bool RareTextSweepDue(uint64_t* next_ns, uint64_t now_ns) {
  if (now_ns < *next_ns) return false;
  const bool first = *next_ns == 0;
  *next_ns = now_ns + kRareTextSweepNs;
  return !first;
}

// Releases the range as ReleaseStartOnlyText does if any page of it is mapped; true if it called the
// release. Nothing before a first release ran (start's), without the range (static libraries) or with
// JANKPROBE_TEXT_RELEASE=off. When nothing is mapped it reads nothing from the library's first segment
// (.rodata: strings), which the releases give back: the pagemap descriptor is opened by the first release
// and kept. In the steady text (hook/text_release.cc is placed whole); thread-safe; never throws.
bool SweepRareText();

// {"state": "on" | "off: why" | "unavailable: why", "range_kib", "releases", "released_kib",
//  "headers_released_kib", "sweep_releases" (the releases a sweep made: it found a page mapped), "refusals",
//  "last_refusal"}: for the plugin's status.
std::string TextReleaseStatusJson();

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_TEXT_RELEASE_H_
