// The rare text a running app faults in without calling us and without a report (a sampled main-thread
// gap, an idle call's record path) goes back within a sweep period of the watchdog's loop
// (hook/text_release.h: SweepRareText, kRareTextSweepNs), against the real libjankprobe.so: the range from
// the file's section headers (.text.jp_rare's first whole 64 KiB window up to the end of
// .text.jp_start_only), page presence from /proc/self/pagemap, in a forked child (a fresh dlopen). The
// faults here are plain reads of the range's pages (fault-around maps their windows, as a call would).
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hook/text_release.h"
#include "tests/fixtures/libinput/input_channel.h"
#include "tests/lib/library_child.h"
#include "tests/lib/library_file.h"

namespace {

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));

using jp::testing::FindSection;
using jp::testing::FirstSegmentEnd;
using jp::testing::LibraryApi;

size_t PresentPages(uintptr_t first, uintptr_t last) {
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SIZE_MAX;
  size_t n = 0;
  for (uintptr_t p = first; p < last; p += kPage) {
    uint64_t e = 0;
    if (pread(fd, &e, sizeof e, static_cast<off_t>(p / kPage * sizeof e)) != sizeof e) {
      n = SIZE_MAX;
      break;
    }
    n += (e >> 63) & 1;
  }
  close(fd);
  return n;
}

long Releases(const char* status) {
  const char* at = status ? strstr(status, "\"text_release\":{") : nullptr;
  const char* key = at ? strstr(at, "\"releases\":") : nullptr;
  return key ? strtol(key + 11, nullptr, 10) : -1;
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// One touch through the fixture channel, handled at once (the watchdog wakes for the app's events, as in
// a running app); false if the channel failed.
bool OneTouch(jpfx_channel* ch, uint32_t seq) {
  if (jpfx_publish_motion(ch, seq, 1, static_cast<int64_t>(NowNs()), 1) != 0) return false;
  jpfx_event ev;
  if (jpfx_consume(ch, &ev) != 1 || jpfx_finish(ch, ev.seq, 1, ev.consume_time) != 0) return false;
  uint32_t fseq;
  int handled;
  int64_t ct;
  while (jpfx_dispatcher_receive(ch, &fseq, &handled, &ct) > 0) {
  }
  usleep(20 * 1000);
  return true;
}

// The child: start the input monitor (its watchdog runs), fault the range in, keep touches coming (the
// watchdog wakes for them, as in a running app) and see the range go within two sweep periods.
// `headers_only`: the fault is a read of the first segment alone (a rare path's string or table in .rodata).
// `quiet_off`: where the start-only part of the range begins. The checks of what must stay away look at
// that part only: the rare part before it may hold code a host-only run keeps executing (without a JVM the
// fixture's finishes take the tracker's general path, InputTracker::FinishRest, in .text.jp_rare), which
// the sweeps then give back every period.
int SweptAfterAFault(void* so, uintptr_t first_off, uintptr_t last_off, uintptr_t quiet_off, uintptr_t headers_end,
                     bool headers_only) {
  const LibraryApi api(so);
  CHILD_CHECK(api.start && api.status && api.last_error && api.stop, 10, "missing exports");
  CHILD_CHECK(api.base != 0, 11, "dladdr");
  const uintptr_t base = api.base;
  const uintptr_t first = base + first_off, last = base + last_off, quiet = base + quiet_off;
  CHILD_CHECK(api.start("{\"input\": {\"enabled\": true, \"lag_ms\": 5000, \"anr_ms\": 10000, \"android_api\": 34},"
                    " \"idle\": {\"enabled\": false}, \"barrier\": {\"enabled\": false},"
                    " \"looper\": {\"enabled\": false}}") == 0,
              12, "jankprobe_start: %s", api.last_error());
  const long before = Releases(api.status());  // status releases once more when it returns
  CHILD_CHECK(before >= 1, 13, "no releases count in the status");
  jpfx_channel* ch = jpfx_channel_open(34, JPFX_IO_BIONIC);
  CHILD_CHECK(ch, 16, "cannot open the fixture channel: %s", strerror(errno));
  // The first touches run code of their own once (the channel's first event): a sweep and a half of
  // them first, so that what follows starts from a steady state with nothing of the range mapped.
  uint32_t seq = 1;
  for (const uint64_t warm = NowNs() + 3 * jp::hook::kRareTextSweepNs / 2; NowNs() < warm; ++seq) {
    CHILD_CHECK(OneTouch(ch, seq), 17, "touch %u", seq);
  }
  CHILD_CHECK(PresentPages(quiet, last) == 0, 14, "the start-only text is resident in steady state");
  CHILD_CHECK(PresentPages(base, base + headers_end) == 0, 27, "the first segment is resident in steady state");
  // A rare path runs: here a read of one byte per 64 KiB window of the range (its start-only part: what
  // the steady state never maps), or of the first segment.
  const uintptr_t fault_first = headers_only ? base : quiet, fault_last = headers_only ? base + headers_end : last;
  unsigned sum = 0;
  for (uintptr_t p = fault_first; p < fault_last; p += 0x10000) sum += *reinterpret_cast<const volatile unsigned char*>(p);
  const size_t faulted = PresentPages(fault_first, fault_last);
  CHILD_CHECK(faulted > 0 && faulted != SIZE_MAX, 15, "reading the range mapped nothing (sum %u)", sum);
  // Ground truth, bounded: two sweep periods and a half of touches.
  const uint64_t give_up = NowNs() + 5 * jp::hook::kRareTextSweepNs / 2;
  size_t left = faulted;
  for (; left != 0 && NowNs() < give_up; ++seq) {
    CHILD_CHECK(OneTouch(ch, seq), 18, "touch %u", seq);
    left = PresentPages(fault_first, fault_last);
  }
  CHILD_CHECK(left == 0, 20, "%zu of %zu faulted pages still resident 2.5 sweep periods later", left, faulted);
  // The release gave the first segment back too; the sweeps that follow, finding nothing mapped, must not
  // read anything from it (its .rodata holds every string): it stays away for more than a period.
  for (const uint64_t quiet = NowNs() + 3 * jp::hook::kRareTextSweepNs / 2; NowNs() < quiet; ++seq) {
    CHILD_CHECK(OneTouch(ch, seq), 22, "touch %u", seq);
  }
  const size_t headers = PresentPages(base, base + headers_end);
  CHILD_CHECK(headers == 0, 25, "%zu pages of the first segment resident after the sweeps that found nothing",
              headers);
  CHILD_CHECK(PresentPages(quiet, last) == 0, 26, "the start-only text came back without a rare path");
  CHILD_CHECK(first <= quiet, 28, "the range's rare part begins after its start-only part");
  const long after = Releases(api.status());
  CHILD_CHECK(after >= before + 2, 21, "releases %ld before, %ld now: the sweep's release is not counted", before,
              after);
  jpfx_channel_close(ch);
  api.stop();
  return 0;
}

void RunSweepChild(bool headers_only) {
  const jp::testing::Released range = jp::testing::ReleasedRange(JP_LIBRARY_PATH);
  ASSERT_GT(range.last, range.first) << "no .text.jp_rare / .text.jp_start_only in " << JP_LIBRARY_PATH;
  const jp::testing::Section start_only = FindSection(JP_LIBRARY_PATH, ".text.jp_start_only");
  const uintptr_t headers_end = FirstSegmentEnd(JP_LIBRARY_PATH);
  ASSERT_GT(headers_end, 0u);
  jp::testing::InChild(JP_LIBRARY_PATH, [&](void* so) {
    return SweptAfterAFault(so, range.first, range.last, start_only.addr, headers_end, headers_only);
  });
}

TEST(TextReleaseSweep, RareTextFaultedInWhileRunningGoesBackWithinASweepPeriod) {
  if (JP_SANITIZED) GTEST_SKIP() << "sanitizer runtimes run our code in their own ways";
  RunSweepChild(false);
}

TEST(TextReleaseSweep, TheFirstSegmentFaultedInAloneGoesBackWithinASweepPeriod) {
  if (JP_SANITIZED) GTEST_SKIP() << "sanitizer runtimes run our code in their own ways";
  RunSweepChild(true);
}

// The loop's side: once per period, never on the thread's first iteration (start may still run there).
TEST(TextReleaseSweep, DueOncePerPeriodAndNotOnTheFirstIteration) {
  uint64_t next = 0;
  const uint64_t t0 = 1'000'000'000'000ull;
  EXPECT_FALSE(jp::hook::RareTextSweepDue(&next, t0)) << "the first iteration sweeps";
  EXPECT_FALSE(jp::hook::RareTextSweepDue(&next, t0 + jp::hook::kRareTextSweepNs - 1));
  EXPECT_TRUE(jp::hook::RareTextSweepDue(&next, t0 + jp::hook::kRareTextSweepNs));
  EXPECT_FALSE(jp::hook::RareTextSweepDue(&next, t0 + jp::hook::kRareTextSweepNs + 1)) << "twice in a period";
  EXPECT_FALSE(jp::hook::RareTextSweepDue(&next, t0 + 2 * jp::hook::kRareTextSweepNs - 1));
  EXPECT_TRUE(jp::hook::RareTextSweepDue(&next, t0 + 2 * jp::hook::kRareTextSweepNs));
}

// Linked from the static libraries (no lib/startup_order.ld range): nothing to sweep, no release tried.
TEST(TextReleaseSweep, WithoutTheLinkerRangeTheSweepDoesNothing) {
  EXPECT_FALSE(jp::hook::SweepRareText());
  EXPECT_NE(jp::hook::TextReleaseStatusJson().find("\"state\":\"on\""), std::string::npos)
      << jp::hook::TextReleaseStatusJson();
}

}  // namespace
