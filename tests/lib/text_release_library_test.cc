// libjankprobe.so gives its rare and start-only text back after jankprobe_start and jankprobe_configure
// (hook/text_release.h, lib/startup_order.ld). The range is taken from the file's own section headers
// (.text.jp_rare up to the end of .text.jp_start_only) and the load address from dladdr, not from the
// library; page presence from /proc/self/pagemap. Each test runs in a forked child so that it starts from
// a fresh dlopen.
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fixtures/libinput/input_channel.h"
#include "tests/lib/elf_sections.h"
#include "tests/lib/library_child.h"
#include "tests/lib/library_file.h"
#include "tests/proc_threads.h"

namespace {

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
constexpr const char* kAllOff =
    "{\"input\": {\"enabled\": false}, \"idle\": {\"enabled\": false},"
    " \"barrier\": {\"enabled\": false}, \"looper\": {\"enabled\": false}}";

using jp::testing::ElfSection;
using jp::testing::FindSection;
using jp::testing::FirstSegmentEnd;
using jp::testing::InChild;
using jp::testing::LibraryApi;
using jp::testing::Released;
using jp::testing::Section;
using jp::testing::WalkElf;

bool Present(uintptr_t addr) {
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint64_t entry = 0;
  const bool ok = pread(fd, &entry, sizeof entry, static_cast<off_t>(addr / kPage * sizeof entry)) ==
                  static_cast<ssize_t>(sizeof entry);
  close(fd);
  return ok && (entry >> 63) != 0;
}

// Present pages of [first, last): their addresses.
std::vector<uintptr_t> PresentPages(uintptr_t first, uintptr_t last) {
  std::vector<uintptr_t> out;
  for (uintptr_t p = first; p < last; p += kPage) {
    if (Present(p)) out.push_back(p);
  }
  return out;
}

// Every page of the library's text mapping (r-xp of its file) from /proc/self/maps.
bool TextMapping(const char* file, uintptr_t* start, uintptr_t* end) {
  FILE* maps = fopen("/proc/self/maps", "re");
  if (!maps) return false;
  char line[4096];
  bool found = false;
  while (fgets(line, sizeof line, maps)) {
    unsigned long s, e;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &s, &e, perms) == 3 && strcmp(perms, "r-xp") == 0 && strstr(line, file)) {
      *start = s;
      *end = e;
      found = true;
    }
  }
  fclose(maps);
  return found;
}

TEST(TextReleaseLibrary, TheStartOnlyRangeIsOnWindowsOfItsOwn) {
  const Section s = FindSection(JP_LIBRARY_PATH, ".text.jp_start_only");
  ASSERT_GT(s.size, 0u) << "no .text.jp_start_only in " << JP_LIBRARY_PATH;
  // 64 KiB windows (fault-around): a fault in the steady part before it or the rare code after it never
  // maps a page of it back.
  EXPECT_EQ(s.addr % 0x10000, 0u) << std::hex << s.addr;
  EXPECT_EQ((s.addr + s.size) % 0x10000, 0u) << std::hex << s.addr + s.size;
  const Section steady = FindSection(JP_LIBRARY_PATH, ".text.jp_steady");
  ASSERT_GT(steady.size, 0u);
  const Section rare = FindSection(JP_LIBRARY_PATH, ".text.jp_rare");
  ASSERT_GT(rare.size, 0u) << "no .text.jp_rare in " << JP_LIBRARY_PATH;
  EXPECT_LE(steady.addr + steady.size, rare.addr);
  EXPECT_LE(rare.addr + rare.size, s.addr);
}

// What a running app keeps executing (.text.jp_steady: the hot group, the release, the calm set) shares
// the first 64 KiB window of text with .init and .plt: a running app keeps one window of our text.
TEST(TextReleaseLibrary, TheSteadyTextSharesOneWindowWithInitAndPlt) {
  // Sizes are those of the build the order is generated from and that ships (Release); instrumented or
  // less optimised code is laid out by the same names but takes more room.
  if (JP_SANITIZED || !JP_RELEASE_BUILD) GTEST_SKIP() << "the window's size holds for the Release build";
  const Section init = FindSection(JP_LIBRARY_PATH, ".init");
  const Section plt = FindSection(JP_LIBRARY_PATH, ".plt");
  const Section steady = FindSection(JP_LIBRARY_PATH, ".text.jp_steady");
  ASSERT_GT(init.size, 0u);
  ASSERT_GT(plt.size, 0u);
  ASSERT_GT(steady.size, 0u);
  const uint64_t window = init.addr / 0x10000 * 0x10000;
  EXPECT_GE(plt.addr, window);
  EXPECT_LE(steady.addr + steady.size, window + 0x10000)
      << std::hex << ".text.jp_steady ends at 0x" << steady.addr + steady.size << ", past the window at 0x"
      << window << ": regenerate lib/startup_order.ld (tools/footprint/startup_order.py), or the calm set grew"
      << " past 64 KiB";
}

// For each of `parts`, the function symbol of the file's .symtab whose (mangled) name contains it and is not
// a split-off part (".cold"), read with libelf in one pass: its address and size; {0, 0} if none or unreadable.
std::vector<Section> FindFunctions(const char* path, const std::vector<const char*>& parts) {
  std::vector<Section> out(parts.size());
  WalkElf(path, [&](const ElfSection& sec) {
    if (sec.header.sh_type != SHT_SYMTAB) return;
    for (size_t i = 0; i < sec.count(); ++i) {
      GElf_Sym sym;
      const char* name = nullptr;
      if (!sec.Symbol(i, &sym, &name) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || strchr(name, '.')) continue;
      for (size_t k = 0; k < parts.size(); ++k) {
        if (strstr(name, parts[k])) out[k] = {sym.st_value, sym.st_size};
      }
    }
  });
  return out;
}

// Every wake of the app's main thread runs the looper's poll source: the proxy, the blocking wait with the
// wake's inline part, the gap's edges and the clock copy's refill. lib/startup_order.ld lays them out first
// in the hot group (tools/footprint/startup_order.py, WAKE_FIRST), so that a wake's code is one text page:
// on a host where every wake comes back cold each page is a page walk of its own (BENCHMARKS.md, session 11).
TEST(TextReleaseLibrary, TheLooperWakePathLiesOnOneTextPage) {
  if (JP_SANITIZED || !JP_RELEASE_BUILD) GTEST_SKIP() << "the sizes hold for the Release build";
  const std::vector<const char*> kWakePath = {"looper8internal12_GLOBAL__N_19ProxyWaitILi0E",
                                               "looper8internal12_GLOBAL__N_18WaitSlowILi0E",
                                               "looper8internal12_GLOBAL__N_114MainSlowBefore",
                                               "looper8internal12_GLOBAL__N_19AfterLookILb1E",
                                               "looper8internal12_GLOBAL__N_118RefillMainGapClock"};
  const std::vector<Section> found = FindFunctions(JP_LIBRARY_PATH, kWakePath);
  constexpr uint64_t kTextPage = 4096;
  uint64_t page = UINT64_MAX;
  for (size_t k = 0; k < kWakePath.size(); ++k) {
    const char* const part = kWakePath[k];
    const Section& f = found[k];
    ASSERT_GT(f.size, 0u) << part << " not in the symbol table of " << JP_LIBRARY_PATH << " (renamed?)";
    if (page == UINT64_MAX) page = f.addr / kTextPage;
    EXPECT_EQ(f.addr / kTextPage, page) << std::hex << part << " starts at 0x" << f.addr << ", not on page 0x"
                                        << page * kTextPage << ": regenerate lib/startup_order.ld";
    EXPECT_EQ((f.addr + f.size - 1) / kTextPage, page) << std::hex << part << " ends at 0x" << f.addr + f.size;
  }
}

TEST(TextReleaseLibrary, AfterStartAndConfigureNoPageOfTheRangeIsResidentAndTheLibraryStillWorks) {
  if (JP_SANITIZED) GTEST_SKIP() << "sanitizer runtimes run our code in their own ways";
  const Released s = jp::testing::ReleasedRange(JP_LIBRARY_PATH);
  ASSERT_GT(s.last, s.first) << "no .text.jp_rare / .text.jp_start_only in " << JP_LIBRARY_PATH;
  InChild(JP_LIBRARY_PATH, [&](void* so) {
    const LibraryApi api(so);
    CHILD_CHECK(api.start && api.configure && api.stop && api.status, 10, "missing exports");
    CHILD_CHECK(api.base != 0, 11, "dladdr");
    const uintptr_t base = api.base;
    const uintptr_t first = base + s.first, last = base + s.last;

    const uintptr_t headers_end = FirstSegmentEnd(JP_LIBRARY_PATH);
    CHILD_CHECK(headers_end > 0, 24, "no read-only first PT_LOAD in the file");

    CHILD_CHECK(api.start(kAllOff) == 0, 12, "jankprobe_start failed");
    std::vector<uintptr_t> left = PresentPages(first, last);
    CHILD_CHECK(left.empty(), 13, "after start %zu pages of the range resident, first %lx", left.size(),
                static_cast<unsigned long>(left.empty() ? 0 : left[0] - base));
    // The first segment too (the loader and start read it; with every monitor off nothing runs after).
    left = PresentPages(base, base + headers_end);
    CHILD_CHECK(left.empty(), 25, "after start %zu pages of the first segment resident, first +%lx", left.size(),
                static_cast<unsigned long>(left.empty() ? 0 : left[0] - base));

    // Outside the range nothing is dropped: every page of our mappings resident before a configure is
    // still resident after it (a release may only remove pages inside the range).
    uintptr_t text_start = 0, text_end = 0;
    CHILD_CHECK(TextMapping("libjankprobe.so", &text_start, &text_end), 14, "no r-xp mapping of the library");
    CHILD_CHECK(text_start <= first && last <= text_end, 15, "range outside the text mapping");
    const std::vector<uintptr_t> before = PresentPages(text_start, text_end);
    CHILD_CHECK(!before.empty(), 16, "no resident text at all?");

    // A remote flag: config parsing runs again from the released pages (they fault back in), and is
    // released again when configure is done.
    CHILD_CHECK(api.configure("{\"input\": {\"enabled\": false}, \"idle\": {\"enabled\": false},"
                          " \"barrier\": {\"enabled\": false}, \"looper\": {\"enabled\": false},"
                          " \"report\": {\"max_reports_per_minute\": 3}}") == 0,
                17, "jankprobe_configure failed");
    left = PresentPages(first, last);
    CHILD_CHECK(left.empty(), 18, "after configure %zu pages of the range resident", left.size());
    for (uintptr_t p : before) {
      CHILD_CHECK(Present(p), 19, "page +%lx outside the range was dropped", static_cast<unsigned long>(p - base));
    }
    const std::string st = api.status();
    CHILD_CHECK(st.find("\"started\":true") != std::string::npos, 20, "status: %s", st.c_str());
    // The status says so: released twice (start, configure), nothing refused. Status itself read .rodata
    // (its strings) and ran status code, and gives both back when it returns (plugin_api.cc): neither the
    // range nor the first segment is resident after it, and the next status counts that third release.
    CHILD_CHECK(st.find("\"text_release\":{\"state\":\"on\"") != std::string::npos &&
                    st.find("\"releases\":2,") != std::string::npos && st.find("\"refusals\":0,") != std::string::npos,
                23, "status: %s", st.c_str());
    left = PresentPages(first, last);
    CHILD_CHECK(left.empty(), 26, "after status %zu pages of the range resident", left.size());
    left = PresentPages(base, base + headers_end);
    CHILD_CHECK(left.empty(), 27, "after status %zu pages of the first segment resident", left.size());
    const std::string st2 = api.status();
    CHILD_CHECK(st2.find("\"releases\":3,") != std::string::npos, 28, "second status: %s", st2.c_str());
    api.stop();
    CHILD_CHECK(api.start(kAllOff) == 0, 21, "start after stop failed");
    CHILD_CHECK(PresentPages(first, last).empty(), 22, "after the second start pages resident");
    api.stop();
    return 0;
  });
}

// The watchdog thread's voluntary context switches (it sleeps between its periodic checks): -1 if there is
// no such thread.
long WatchdogWakeups() {
  const std::vector<pid_t> tids = jp::testing::ThreadsNamed("jp-watchdog");
  if (tids.empty()) return -1;
  const uint64_t n = jp::testing::VoluntarySwitches(tids.back());
  return n == UINT64_MAX ? -1 : static_cast<long>(n);
}

// A thread that start launches runs on across the release: the watchdog's loop (entered once, before the
// release) and its periodic checks must all be steady-state text, or its next iteration faults a window of
// the range straight back (tools/footprint/startup_order.py: a start's other threads count as "after").
TEST(TextReleaseLibrary, TheWatchdogRunningAcrossTheReleaseFaultsNothingBack) {
  if (JP_SANITIZED) GTEST_SKIP() << "sanitizer runtimes run our code in their own ways";
  const Released s = jp::testing::ReleasedRange(JP_LIBRARY_PATH);
  ASSERT_GT(s.last, s.first) << "no .text.jp_rare / .text.jp_start_only in " << JP_LIBRARY_PATH;
  InChild(JP_LIBRARY_PATH, [&](void* so) {
    const LibraryApi api(so);
    CHILD_CHECK(api.start && api.stop && api.last_error, 10, "missing exports");
    CHILD_CHECK(api.base != 0, 11, "dladdr");
    const uintptr_t base = api.base;
    // The input monitor against the host libinput.so fixture this test links: it runs the watchdog.
    CHILD_CHECK(api.start("{\"input\": {\"enabled\": true, \"lag_ms\": 150, \"anr_ms\": 5000, \"android_api\": 34},"
                      " \"idle\": {\"enabled\": false}, \"barrier\": {\"enabled\": false},"
                      " \"looper\": {\"enabled\": false}}") == 0,
                12, "jankprobe_start: %s", api.last_error());
    const long first = WatchdogWakeups();
    CHILD_CHECK(first >= 0, 13, "no jp-watchdog thread with the input monitor on");
    // Touches through the fixture's channel (the proxies run, each consumed event arms a deadline on the
    // watchdog) until it went round its loop three more times after the release (5 s at most): ground
    // truth that the thread ran across it.
    jpfx_channel* ch = jpfx_channel_open(34, JPFX_IO_BIONIC);
    CHILD_CHECK(ch, 16, "cannot open the fixture channel: %s", strerror(errno));
    long now = first;
    for (uint32_t seq = 1; seq < 5000 && now < first + 3; ++seq) {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      const int64_t t = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
      CHILD_CHECK(jpfx_publish_motion(ch, seq, seq == 1 ? 0 : 2, t, 1) == 0, 17, "publish");
      jpfx_event ev;
      CHILD_CHECK(jpfx_consume(ch, &ev) == 1, 18, "consume");
      CHILD_CHECK(jpfx_finish(ch, ev.seq, 1, ev.consume_time) == 0, 19, "finish");
      uint32_t fseq;
      int handled;
      int64_t ct;
      while (jpfx_dispatcher_receive(ch, &fseq, &handled, &ct) > 0) {
      }
      usleep(1000);
      now = WatchdogWakeups();
    }
    jpfx_channel_close(ch);
    CHILD_CHECK(now >= first + 3, 14, "the watchdog did not wake (%ld -> %ld)", first, now);
    const std::vector<uintptr_t> left = PresentPages(base + s.first, base + s.last);
    CHILD_CHECK(left.empty(), 15, "%zu pages of the range came back while the watchdog ran, first +%lx",
                left.size(), static_cast<unsigned long>(left.empty() ? 0 : left[0] - base));
    if (JP_RELEASE_BUILD) {
      // In the build that ships (Release, the one lib/startup_order.ld is generated from) that is all of
      // our text a running app keeps: the first 64 KiB window, from .init on. A page elsewhere is a
      // function the proxies or the watchdog run that the order does not place (plain .text).
      const Section init = FindSection(JP_LIBRARY_PATH, ".init");
      uintptr_t text_start = 0, text_end = 0;
      CHILD_CHECK(init.size > 0 && TextMapping("libjankprobe.so", &text_start, &text_end), 20, "no .init / text");
      const uintptr_t window = base + init.addr / 0x10000 * 0x10000;
      for (uintptr_t p : PresentPages(text_start, text_end)) {
        CHILD_CHECK(window <= p && p < window + 0x10000, 21,
                    "text page +%lx (outside the first window +%lx) is resident after a steady-state run: a "
                    "function the running app calls is not in the calm set (regenerate lib/startup_order.ld)",
                    static_cast<unsigned long>(p - base), static_cast<unsigned long>(window - base));
      }
    }
    api.stop();
    return 0;
  });
}

// A counter of a status's text_release object ("releases", "sweep_releases"); -1 if absent.
long TextReleaseCounter(const std::string& status, const std::string& name) {
  const size_t at = status.find("\"text_release\":{");
  if (at == std::string::npos) return -1;
  const std::string key = "\"" + name + "\":";
  const size_t found = status.find(key, at);
  return found == std::string::npos ? -1 : strtol(status.c_str() + found + key.size(), nullptr, 10);
}
long Releases(const std::string& status) { return TextReleaseCounter(status, "releases"); }

// What the report listener saw, in the child: it runs on the delivery thread.
struct Delivery {
  uintptr_t first = 0, last = 0;  // the released range, as loaded
  std::atomic<int> reports{0};
  std::atomic<long> resident_at_listener{-1};  // pages of the range resident while the listener ran
};
Delivery g_delivery;

void CountResidentOnReport(const char*, void*) {
  g_delivery.resident_at_listener = static_cast<long>(PresentPages(g_delivery.first, g_delivery.last).size());
  ++g_delivery.reports;
}

// A lag report runs rare code (the verdict, the rendering, the delivery) and maps its windows back in; the
// delivery thread gives them back once it has delivered what it found queued (hook/report_sink.cc), and the
// watchdog sweeps once the callback that submitted the report has returned (its tail may run rare code after
// the delivery's release: Watchdog::RequestRareTextSweep), without waiting for the app's next status, export
// or stop.
TEST(TextReleaseLibrary, AfterAReportWasDeliveredNoPageOfTheRangeIsResident) {
  if (JP_SANITIZED) GTEST_SKIP() << "sanitizer runtimes run our code in their own ways";
  const Released s = jp::testing::ReleasedRange(JP_LIBRARY_PATH);
  ASSERT_GT(s.last, s.first) << "no .text.jp_rare / .text.jp_start_only in " << JP_LIBRARY_PATH;
  InChild(JP_LIBRARY_PATH, [&](void* so) {
    const LibraryApi api(so);
    CHILD_CHECK(api.start && api.stop && api.status && api.last_error && api.set_listener, 10, "missing exports");
    CHILD_CHECK(api.base != 0, 11, "dladdr");
    const uintptr_t base = api.base;
    g_delivery.first = base + s.first;
    g_delivery.last = base + s.last;
    api.set_listener(&CountResidentOnReport, nullptr);
    // The input monitor against the host libinput.so fixture: a touch held past lag_ms is a touch_lag report.
    CHILD_CHECK(api.start("{\"input\": {\"enabled\": true, \"lag_ms\": 40, \"anr_ms\": 5000, \"android_api\": 34},"
                      " \"idle\": {\"enabled\": false}, \"barrier\": {\"enabled\": false},"
                      " \"looper\": {\"enabled\": false}}") == 0,
                12, "jankprobe_start: %s", api.last_error());
    // The count before the report (this status releases once more when it returns).
    const std::string st0 = api.status();
    const long before = Releases(st0), sweeps_before = TextReleaseCounter(st0, "sweep_releases");
    CHILD_CHECK(before >= 1 && sweeps_before >= 0, 13, "no releases counts in the status: %s", st0.c_str());

    jpfx_channel* ch = jpfx_channel_open(34, JPFX_IO_BIONIC);
    CHILD_CHECK(ch, 14, "cannot open the fixture channel: %s", strerror(errno));
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    CHILD_CHECK(jpfx_publish_motion(ch, 1, 1, int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec, 1) == 0, 15, "publish");
    jpfx_event ev;
    CHILD_CHECK(jpfx_consume(ch, &ev) == 1, 16, "consume");
    usleep(150 * 1000);  // the app "handles" the touch for 150 ms: past lag_ms, the length of the lag
    CHILD_CHECK(jpfx_finish(ch, ev.seq, 1, ev.consume_time) == 0, 17, "finish");
    uint32_t fseq;
    int handled;
    int64_t ct;
    while (jpfx_dispatcher_receive(ch, &fseq, &handled, &ct) > 0) {
    }
    // Ground truth, bounded: the listener ran (the report reached the app), then the range is given back.
    for (int i = 0; i < 5000 && g_delivery.reports.load() == 0; ++i) usleep(1000);
    CHILD_CHECK(g_delivery.reports.load() >= 1, 18, "no report delivered within 5 s");
    std::vector<uintptr_t> left = PresentPages(g_delivery.first, g_delivery.last);
    for (int i = 0; i < 2000 && !left.empty(); ++i) {
      usleep(1000);
      left = PresentPages(g_delivery.first, g_delivery.last);
    }
    CHILD_CHECK(left.empty(), 20, "%zu pages of the range still resident 2 s after the delivery (%ld at the "
                "listener), first +%lx; releases %ld before the touch; status: %s", left.size(),
                g_delivery.resident_at_listener.load(), static_cast<unsigned long>(left.empty() ? 0 : left[0] - base),
                before, api.status());
    // The delivery thread's release is counted: the status before, its own release, at least one more.
    const std::string st = api.status();
    CHILD_CHECK(Releases(st) >= before + 2, 21, "releases %ld before, now: %s", before, st.c_str());
    // The report did bring rare text back (else this test proves nothing): the listener saw it resident, or
    // the watchdog's sweep found it mapped before the listener ran (nothing else releases in between).
    CHILD_CHECK(g_delivery.resident_at_listener.load() > 0 || TextReleaseCounter(st, "sweep_releases") > sweeps_before,
                19, "no page of the range was resident while the listener ran and no sweep found one: the report "
                "ran no rare code? %s", st.c_str());
    jpfx_channel_close(ch);
    api.stop();
    api.set_listener(nullptr, nullptr);
    return 0;
  });
}

TEST(TextReleaseLibrary, JankprobeTextReleaseOffKeepsThePages) {
  if (JP_SANITIZED) GTEST_SKIP() << "sanitizer runtimes run our code in their own ways";
  const Released s = jp::testing::ReleasedRange(JP_LIBRARY_PATH);
  ASSERT_GT(s.last, s.first) << "no .text.jp_rare / .text.jp_start_only in " << JP_LIBRARY_PATH;
  InChild(JP_LIBRARY_PATH, [&](void* so) {
    setenv("JANKPROBE_TEXT_RELEASE", "off", 1);
    const LibraryApi api(so);
    CHILD_CHECK(api.start && api.stop, 10, "missing exports");
    CHILD_CHECK(api.base != 0, 11, "dladdr");
    const uintptr_t base = api.base;
    CHILD_CHECK(api.start(kAllOff) == 0, 12, "jankprobe_start failed");
    // Start ran code from the range (config parsing lives there): with the release off it stays resident.
    CHILD_CHECK(!PresentPages(base + s.first, base + s.last).empty(), 13, "range not resident");
    CHILD_CHECK(api.status, 14, "missing jankprobe_status");
    const std::string st = api.status();
    CHILD_CHECK(st.find("\"text_release\":{\"state\":\"off") != std::string::npos &&
                    st.find("\"releases\":0,") != std::string::npos,
                15, "status: %s", st.c_str());
    api.stop();
    return 0;
  });
}

}  // namespace
