// See text_release.h. Runs on the thread that called start, configure, stop, status or export, once they
// are done, or on the report delivery thread after a burst: no lock of the plugin or of the report sink is
// held, nothing here runs on a hooked path.
//
// Layout rule this depends on (tools/footprint/startup_order.py): this file, and the callers on the stack
// while it runs (jankprobe_start / _configure / _stop and their JNI natives), sit in the steady-state part of the
// text (ReportSink::DeliveryLoop by its section name, hook/report_sink.cc). Code that ran after the madvise
// in the released range would fault its window straight back.
#include "hook/text_release.h"

#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "hook/json_out.h"

// Defined by lib/startup_order.ld in libjankprobe.so; absent (null) in other links. The start-only range is
// 64 KiB aligned at both ends; the rare part (.text.jp_rare) runs from jp_rare_text_begin up to it.
extern "C" {
extern const char jp_start_only_text_begin[] __attribute__((weak, visibility("hidden")));
extern const char jp_start_only_text_end[] __attribute__((weak, visibility("hidden")));
extern const char jp_rare_text_begin[] __attribute__((weak, visibility("hidden")));
// The ELF header as loaded (GNU ld and lld define it when the headers are in a loaded segment).
extern const char __ehdr_start[] __attribute__((weak, visibility("hidden")));
}

namespace jp::hook {
namespace {

// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kPagePresent = 1ull << 63;
constexpr uint64_t kPageSwapped = 1ull << 62;
constexpr uint64_t kPageFileOrSharedAnon = 1ull << 61;
// The kernel's fault-around maps the cached pages of the 64 KiB-aligned window around a file fault (with
// 4 KiB pages; lib/startup_order.ld aligns the start-only range to it, and the library loads 64 KiB aligned).
constexpr uintptr_t kFaultAroundWindow = 0x10000;

std::string Hex(uintptr_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%" PRIxPTR, v);
  return buf;
}

std::string Errno(const char* what) { return std::string(what) + ": " + strerror(errno); }

struct SegmentQuery {
  uintptr_t addr;
  LoadSegment* out;
  bool found;
};

int FindSegmentOf(dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<SegmentQuery*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (q->addr < begin || q->addr - begin >= ph.p_memsz) continue;
    q->out->begin = begin;
    q->out->end = begin + ph.p_memsz;
    q->out->executable = (ph.p_flags & PF_X) != 0;
    q->out->writable = (ph.p_flags & PF_W) != 0;
    q->found = true;
    return 1;  // stops the iteration
  }
  return 0;
}

// Checks every page of [first, first + pages * page_size) in /proc/self/pagemap: each must be absent or a
// file page. Counts the present ones.
bool AllFilePages(uintptr_t first, size_t pages, size_t page_size, size_t* resident, std::string* why) {
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = Errno("open /proc/self/pagemap (needed to prove no page was patched)");
    return false;
  }
  bool ok = true;
  uint64_t entries[64];
  for (size_t done = 0; ok && done < pages;) {
    const size_t want = pages - done < 64 ? pages - done : 64;
    const off_t at = static_cast<off_t>((first / page_size + done) * sizeof(uint64_t));
    const ssize_t n = pread(fd, entries, want * sizeof(uint64_t), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || n % sizeof(uint64_t) != 0) {
      *why = n < 0 ? Errno("read /proc/self/pagemap") : "short read of /proc/self/pagemap";
      ok = false;
      break;
    }
    const size_t got = static_cast<size_t>(n) / sizeof(uint64_t);
    for (size_t i = 0; i < got; ++i) {
      const uint64_t e = entries[i];
      const uintptr_t page = first + (done + i) * page_size;
      if ((e & kPageSwapped) || ((e & kPagePresent) && !(e & kPageFileOrSharedAnon))) {
        *why = "page " + Hex(page) + " is a private copy, not a file page (text patched by another tool?)";
        ok = false;
        break;
      }
      if (e & kPagePresent) ++*resident;
    }
    done += got;
  }
  close(fd);
  return ok;
}

struct ReleaseState {
  std::mutex mu;
  uint64_t releases = 0;
  uint64_t released_bytes = 0;
  uint64_t header_released_bytes = 0;
  uint64_t refusals = 0;
  size_t range_bytes = 0;
  std::string state = "on";
  std::string last_refusal;
};

ReleaseState& State() {
  static ReleaseState* state = new ReleaseState();  // leaked: a late status call may race exit
  return *state;
}

bool DisabledByEnvironment() {
  const char* v = getenv("JANKPROBE_TEXT_RELEASE");
  return v && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0);
}

}  // namespace

bool FindLoadSegment(const void* addr, LoadSegment* out, std::string* why) {
  SegmentQuery q{reinterpret_cast<uintptr_t>(addr), out, false};
  dl_iterate_phdr(FindSegmentOf, &q);
  if (!q.found) *why = "no loaded object's segment holds " + Hex(q.addr);
  return q.found;
}

namespace {

// The checks and the madvise shared by text and read-only data: whole pages of [begin, end) inside a
// non-writable `segment`, each absent or a file page.
TextReleaseResult ReleaseCleanPages(const void* begin, const void* end, const LoadSegment& segment,
                                    bool must_be_executable) {
  TextReleaseResult r;
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) {
    r.reason = "page size unknown";
    return r;
  }
  r.page_size = static_cast<size_t>(page);
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin), e = reinterpret_cast<uintptr_t>(end);
  const uintptr_t first = (b + r.page_size - 1) / r.page_size * r.page_size;
  const uintptr_t last = e / r.page_size * r.page_size;
  if (!begin || !end || e <= b) {
    r.reason = "empty range";
    return r;
  }
  if (last <= first) {
    r.reason = "the range holds no whole page";
    return r;
  }
  if (segment.writable || (must_be_executable && !segment.executable)) {
    r.reason = std::string("the segment of our code is ") + (segment.writable ? "writable" : "not executable") +
               (must_be_executable ? ", not read-only executable text" : ", not read-only");
    return r;
  }
  if (first < segment.begin || last > segment.end) {
    r.reason = "range " + Hex(first) + "-" + Hex(last) + " is not inside the segment of our code (" +
               Hex(segment.begin) + "-" + Hex(segment.end) + ")";
    return r;
  }
  r.pages = (last - first) / r.page_size;
  if (!AllFilePages(first, r.pages, r.page_size, &r.resident_pages, &r.reason)) return r;
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) {
    r.reason = Errno("madvise(MADV_DONTNEED)");
    return r;
  }
  r.released = true;
  return r;
}

// The first segment's pages as the releases give them back, for the sweeps (SweepRareText): computed by
// the release (FindLoadSegment reads the program headers, which lie in that very segment).
std::atomic<uintptr_t> g_sweep_headers_begin{0}, g_sweep_headers_end{0};

// The first segment (the one holding the ELF header), read-only, released whole: the loader maps whole
// pages, so its last partial page is file content too.
void ReleaseHeaderSegment(ReleaseState& s) {
  if (!__ehdr_start) return;
  LoadSegment first;
  std::string why;
  if (!FindLoadSegment(__ehdr_start, &first, &why)) {
    ++s.refusals;
    s.last_refusal = "headers' segment not found: " + why;
    return;
  }
  const long page = sysconf(_SC_PAGESIZE);
  if (page > 0) first.end = (first.end + static_cast<uintptr_t>(page) - 1) / static_cast<uintptr_t>(page) *
                            static_cast<uintptr_t>(page);
  g_sweep_headers_begin.store(first.begin, std::memory_order_relaxed);
  g_sweep_headers_end.store(first.end, std::memory_order_relaxed);
  const TextReleaseResult r =
      ReleaseReadOnlyFilePages(reinterpret_cast<const void*>(first.begin), reinterpret_cast<const void*>(first.end),
                               first);
  if (!r.released) {
    ++s.refusals;
    s.last_refusal = "headers: " + r.reason;
    return;
  }
  s.header_released_bytes += static_cast<uint64_t>(r.resident_pages) * r.page_size;
}

}  // namespace

TextReleaseResult ReleaseFileText(const void* begin, const void* end, const LoadSegment& segment) {
  return ReleaseCleanPages(begin, end, segment, true);
}

TextReleaseResult ReleaseReadOnlyFilePages(const void* begin, const void* end, const LoadSegment& segment) {
  return ReleaseCleanPages(begin, end, segment, false);
}

namespace {

// What the sweeps (SweepRareText) use without reading anything from the library's first segment: its
// .rodata holds every string literal (the pagemap path, the environment variable's name), and that segment
// is given back by each release; a sweep that found nothing to release but read one of them would fault
// the segment's 36 KiB back for good (mem9 measured it: 3 of 4 `all` runs). Both are set by the first
// release (start's), which reads the strings before it gives the segment back.
std::atomic<int> g_sweep_pagemap_fd{-1};  // /proc/self/pagemap, kept open for the process's life
std::atomic<bool> g_sweep_enabled{false};   // a release ran with the range and the environment allowing it
std::atomic<uint64_t> g_sweep_releases{0};  // sweeps that found a page mapped and called the release

// Where the released text begins (the range ends at jp_start_only_text_end). The rare part before the
// start-only range goes too: start runs some of it (a report path's setup, a JNI lookup shared with the
// watchdog) and would leave its windows resident, and a running app that lags nowhere never needs it.
// From its first whole 64 KiB window on: the window it shares with the end of the steady text comes back
// with any fault there (fault-around), and is paid for anyway. An order without a rare part releases the
// start-only range alone. Only with the range (jp_start_only_text_begin/_end set).
const char* ReleasedTextBegin() {
  const char* begin = jp_start_only_text_begin;
  if (jp_rare_text_begin) {
    const uintptr_t rare = reinterpret_cast<uintptr_t>(jp_rare_text_begin);
    const uintptr_t window = (rare + kFaultAroundWindow - 1) / kFaultAroundWindow * kFaultAroundWindow;
    if (window < reinterpret_cast<uintptr_t>(jp_start_only_text_begin)) {
      begin = jp_rare_text_begin + (window - rare);
    }
  }
  return begin;
}

}  // namespace

void ReleaseStartOnlyText() {
  ReleaseState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!jp_start_only_text_begin || !jp_start_only_text_end) {
    s.state = "unavailable: this build has no start-only text range";
    return;
  }
  const char* begin = ReleasedTextBegin();
  s.range_bytes = static_cast<size_t>(jp_start_only_text_end - begin);
  if (DisabledByEnvironment()) {
    s.state = "off: JANKPROBE_TEXT_RELEASE=off";
    return;
  }
  if (g_sweep_pagemap_fd.load(std::memory_order_acquire) < 0) {
    const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    int none = -1;
    if (fd >= 0 && !g_sweep_pagemap_fd.compare_exchange_strong(none, fd, std::memory_order_acq_rel)) close(fd);
  }
  g_sweep_enabled.store(true, std::memory_order_release);
  // The range must lie in the segment of this very function: our own object's text.
  LoadSegment own;
  std::string why;
  if (!FindLoadSegment(reinterpret_cast<const void*>(&ReleaseStartOnlyText), &own, &why)) {
    ++s.refusals;
    s.last_refusal = "our own code's segment not found: " + why;
    return;
  }
  const TextReleaseResult r = ReleaseFileText(begin, jp_start_only_text_end, own);
  if (!r.released) {
    ++s.refusals;
    s.last_refusal = r.reason;
    return;
  }
  s.state = "on";
  ++s.releases;
  s.released_bytes += static_cast<uint64_t>(r.resident_pages) * r.page_size;
  ReleaseHeaderSegment(s);
}

namespace {

// Whether a page of [first, last) (page-aligned) is mapped, from the kept pagemap descriptor; an entry that
// cannot be read counts as mapped (the release then checks and says why).
bool AnyPageMapped(int fd, uintptr_t first, uintptr_t last, uintptr_t page) {
  uint64_t entries[64];
  for (uintptr_t at = first; at < last;) {
    const size_t want = (last - at) / page < 64 ? (last - at) / page : 64;
    const ssize_t n = pread(fd, entries, want * sizeof(uint64_t), static_cast<off_t>(at / page * sizeof(uint64_t)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || n % sizeof(uint64_t) != 0) return true;
    const size_t got = static_cast<size_t>(n) / sizeof(uint64_t);
    for (size_t i = 0; i < got; ++i) {
      if (entries[i] & (kPagePresent | kPageSwapped)) return true;
    }
    at += got * page;
  }
  return false;
}

}  // namespace

bool SweepRareText() {
  if (!g_sweep_enabled.load(std::memory_order_acquire)) return false;  // no range, released off, or no start yet
  const int fd = g_sweep_pagemap_fd.load(std::memory_order_acquire);
  const long page_l = sysconf(_SC_PAGESIZE);
  if (fd < 0 || page_l <= 0) return false;
  const auto page = static_cast<uintptr_t>(page_l);
  const uintptr_t first = (reinterpret_cast<uintptr_t>(ReleasedTextBegin()) + page - 1) / page * page;
  const uintptr_t last = reinterpret_cast<uintptr_t>(jp_start_only_text_end) / page * page;
  // The rare and start-only text, then the first segment (a rare path's read of a string or a table in
  // .rodata maps its 36 KiB back without any rare text): either calls the release, whose own checks
  // decide (and refuse a page that is not a clean file page).
  if (!AnyPageMapped(fd, first, last, page) &&
      !AnyPageMapped(fd, g_sweep_headers_begin.load(std::memory_order_relaxed),
                     g_sweep_headers_end.load(std::memory_order_relaxed), page)) {
    return false;
  }
  g_sweep_releases.fetch_add(1, std::memory_order_relaxed);
  ReleaseStartOnlyText();
  return true;
}

std::string TextReleaseStatusJson() {
  ReleaseState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  JsonOut w;
  w.StartObject();
  w.Key("state");
  w.String(s.state);
  w.Key("range_kib");
  w.Uint64(s.range_bytes / 1024);
  w.Key("releases");
  w.Uint64(s.releases);
  w.Key("released_kib");
  w.Uint64(s.released_bytes / 1024);
  w.Key("headers_released_kib");
  w.Uint64(s.header_released_bytes / 1024);
  w.Key("sweep_releases");
  w.Uint64(g_sweep_releases.load(std::memory_order_relaxed));
  w.Key("refusals");
  w.Uint64(s.refusals);
  w.Key("last_refusal");
  w.String(s.last_refusal);
  w.EndObject();
  return w.Take();
}

}  // namespace jp::hook
