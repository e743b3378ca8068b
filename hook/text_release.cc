// See text_release.h. Runs on the thread that called start, configure or stop, once they are done: no
// lock of the plugin is held, nothing here runs on a hooked path.
//
// Layout rule this depends on (tools/footprint/startup_order.py): this file, and the callers on the stack
// while it runs (jankprobe_start / _configure / _stop and their JNI natives), sit in the steady-state part of the
// text. Code that ran after the madvise in the start-only range would fault its window straight back.
#include "hook/text_release.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "hook/json_out.h"

// Defined by lib/startup_order.ld in libjankprobe.so (64 KiB aligned); absent (null) in other links.
extern "C" {
extern const char jp_start_only_text_begin[] __attribute__((weak, visibility("hidden")));
extern const char jp_start_only_text_end[] __attribute__((weak, visibility("hidden")));
}

namespace jp::hook {
namespace {

// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kPagePresent = 1ull << 63;
constexpr uint64_t kPageSwapped = 1ull << 62;
constexpr uint64_t kPageFileOrSharedAnon = 1ull << 61;

std::string Hex(uintptr_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%" PRIxPTR, v);
  return buf;
}

std::string Errno(const char* what) { return std::string(what) + ": " + strerror(errno); }

struct Mapping {
  uintptr_t start = 0, end = 0;
  char perms[5] = {};
  uint64_t inode = 0;
};

// One /proc/self/maps line: "start-end perms offset dev inode [path]". False if it does not parse.
bool ParseMapsLine(const char* line, Mapping* m) {
  char* p;
  m->start = strtoull(line, &p, 16);
  if (*p != '-') return false;
  m->end = strtoull(p + 1, &p, 16);
  if (*p != ' ') return false;
  ++p;
  for (int i = 0; i < 4; ++i) {
    if (!p[i]) return false;
    m->perms[i] = p[i];
  }
  p += 4;
  strtoull(p, &p, 16);  // offset
  while (*p == ' ') ++p;
  while (*p && *p != ' ') ++p;  // dev
  m->inode = strtoull(p, &p, 10);
  return true;
}

// The mapping holding `addr`, read line by line from /proc/self/maps (a JVM has ~1000 lines: no copy of
// the whole file).
bool FindMapping(uintptr_t addr, Mapping* out, std::string* why) {
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = Errno("open /proc/self/maps");
    return false;
  }
  char buf[4096 + 1];
  size_t have = 0;
  bool found = false, skipping = false;  // skipping: the rest of a line longer than the buffer
  for (;;) {
    const ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = Errno("read /proc/self/maps");
      break;
    }
    have += static_cast<size_t>(n);
    buf[have] = '\0';
    size_t used = 0;
    while (char* nl = static_cast<char*>(memchr(buf + used, '\n', have - used))) {
      *nl = '\0';
      Mapping m;
      if (!skipping && ParseMapsLine(buf + used, &m) && m.start <= addr && addr < m.end) {
        *out = m;
        found = true;
        break;
      }
      skipping = false;
      used = static_cast<size_t>(nl - buf) + 1;
    }
    if (found || n == 0) break;
    if (used == 0 && have == sizeof buf - 1) {
      // A line longer than the buffer (only a path makes one): its head was parsed before, if ever; the
      // rest is skipped up to its newline.
      Mapping m;
      if (!skipping && ParseMapsLine(buf, &m) && m.start <= addr && addr < m.end) {
        *out = m;
        found = true;
        break;
      }
      skipping = true;
      have = 0;
      continue;
    }
    memmove(buf, buf + used, have - used);
    have -= used;
  }
  close(fd);
  if (!found && why->empty()) *why = "no mapping holds " + Hex(addr);
  return found;
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

TextReleaseResult ReleaseFileText(const void* begin, const void* end, const void* owner) {
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
  Mapping m;
  std::string why;
  if (!FindMapping(first, &m, &why)) {
    r.reason = "range start not mapped: " + why;
    return r;
  }
  const uintptr_t own = reinterpret_cast<uintptr_t>(owner);
  if (!(m.start <= own && own < m.end)) {
    r.reason = "range " + Hex(first) + "-" + Hex(last) + " is not in the mapping of our code (" + Hex(own) + ")";
    return r;
  }
  if (last > m.end) {
    r.reason = "range " + Hex(first) + "-" + Hex(last) + " runs past its mapping (ends " + Hex(m.end) + ")";
    return r;
  }
  if (strcmp(m.perms, "r-xp") != 0 || m.inode == 0) {
    r.reason = std::string("mapping is ") + m.perms + (m.inode == 0 ? " anonymous" : "") +
               ", not a private read-only executable file mapping";
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

void ReleaseStartOnlyText() {
  ReleaseState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!jp_start_only_text_begin || !jp_start_only_text_end) {
    s.state = "unavailable: this build has no start-only text range";
    return;
  }
  s.range_bytes = static_cast<size_t>(jp_start_only_text_end - jp_start_only_text_begin);
  if (DisabledByEnvironment()) {
    s.state = "off: JANKPROBE_TEXT_RELEASE=off";
    return;
  }
  // The range must be in the same loaded object as this function (dladdr), and in one mapping with it.
  Dl_info range_info{}, own_info{};
  const void* owner = reinterpret_cast<const void*>(&ReleaseStartOnlyText);
  if (!dladdr(jp_start_only_text_begin, &range_info) || !dladdr(owner, &own_info) ||
      range_info.dli_fbase != own_info.dli_fbase) {
    ++s.refusals;
    s.last_refusal = "the start-only range is not in this library's object";
    return;
  }
  const TextReleaseResult r = ReleaseFileText(jp_start_only_text_begin, jp_start_only_text_end, owner);
  if (!r.released) {
    ++s.refusals;
    s.last_refusal = r.reason;
    return;
  }
  s.state = "on";
  ++s.releases;
  s.released_bytes += static_cast<uint64_t>(r.resident_pages) * r.page_size;
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
  w.Key("refusals");
  w.Uint64(s.refusals);
  w.Key("last_refusal");
  w.String(s.last_refusal);
  w.EndObject();
  return w.Take();
}

}  // namespace jp::hook
