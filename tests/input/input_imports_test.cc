// Against a libinput.so that imports only what a fortified bionic build does: the monitor hooks those two,
// reports the other four as not imported, and still times events through them.
#include <poll.h>

#include "hook/jni/jni_refs.h"
#include "tests/fixtures/libinput/input_channel.h"
#include "tests/input/input_harness.h"

namespace jp::input::testing {
namespace {

TEST(InputImports, HooksWhatLibinputImportsAndSaysWhatItDoesNot) {
  Harness h;
  ASSERT_EQ(h.Start(1000, 5000, 34), JANKPROBE_OK) << jankprobe_last_error();
  EXPECT_EQ(InputDetail("imports", "recvfrom"), "hooked");
  EXPECT_EQ(InputDetail("imports", "__sendto_chk"), "hooked");
  for (const char* sym : {"sendto", "recv", "send", "__recvfrom_chk"}) {
    EXPECT_EQ(InputDetail("imports", sym), "not imported") << sym;
  }
  jpfx_channel* ch = jpfx_channel_open(34, JPFX_IO_GLIBC);  // the variant ignores the flavour
  ASSERT_NE(ch, nullptr);
  ASSERT_EQ(jpfx_publish_key(ch, 4, 1, static_cast<int64_t>(hook::MonotonicNs())), 0);
  pollfd p{jpfx_app_fd(ch), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1);
  jpfx_event ev{};
  const uint64_t before = hook::MonotonicNs();
  ASSERT_EQ(jpfx_consume(ch, &ev), 1);
  ASSERT_EQ(jpfx_finish(ch, 4, 1, ev.consume_time), 0);
  const uint64_t after = hook::MonotonicNs();
  const std::vector<Record> records = InputRecords();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind, hook::EventKind::kInputKey);
  EXPECT_EQ(records[0].name, "UP");
  EXPECT_EQ(records[0].seq, 4);
  EXPECT_GE(records[0].ts_ns + kClockBoundNs, before);
  EXPECT_LE(records[0].ts_ns + records[0].dur_ns, after + kClockBoundNs);
  jpfx_channel_close(ch);
  h.Stop();
}

uintptr_t WakeHint() { return jni::g_main_gap.gate.owner_words().wake_lines.load(std::memory_order_relaxed); }

// The main thread's wake from a blocking wait asks for the lines the hint names (looper/poll_timing.cc,
// AfterBlock): the two proxies' cache lines while the monitor is on, nothing once it stopped.
TEST(InputImports, NamesTheProxiesLinesForTheWakeWhileHooked) {
  ASSERT_EQ(WakeHint(), 0u);
  Harness h;
  ASSERT_EQ(h.Start(1000, 5000, 34), JANKPROBE_OK) << jankprobe_last_error();
  const uintptr_t hint = WakeHint();
  ASSERT_NE(hint, 0u);
  // Two distinct lines, the second after the first: recvfrom's and __sendto_chk's (a 128-byte ProxyLine
  // each, two apart), both in the library's static storage beside the gate's own block.
  const uintptr_t first = hint & ~jni::kWakeLineBits;
  const uintptr_t lines = hint & jni::kWakeLineBits;
  EXPECT_EQ(lines, 4u);
  const uintptr_t block = reinterpret_cast<uintptr_t>(&jni::g_main_gap);
  EXPECT_LT(first > block ? first - block : block - first, uintptr_t{1} << 24) << "not the library's storage";
  h.Stop();
  EXPECT_EQ(WakeHint(), 0u);
}

TEST(WakeLinesHint, EncodesALineAndTheDistanceToTheSecond) {
  alignas(64) static char lines[64 * 70];
  EXPECT_EQ(jni::WakeLinesHint(lines, lines + 256), reinterpret_cast<uintptr_t>(lines) | 4);
  EXPECT_EQ(jni::WakeLinesHint(lines, lines), reinterpret_cast<uintptr_t>(lines));      // one line
  EXPECT_EQ(jni::WakeLinesHint(lines, lines + 64 * 63), reinterpret_cast<uintptr_t>(lines) | 63);
  EXPECT_EQ(jni::WakeLinesHint(lines, lines + 64 * 64), reinterpret_cast<uintptr_t>(lines));  // too far: first only
  EXPECT_EQ(jni::WakeLinesHint(lines + 64, lines), reinterpret_cast<uintptr_t>(lines + 64));  // before it: first only
  EXPECT_EQ(jni::WakeLinesHint(lines, lines + 100), reinterpret_cast<uintptr_t>(lines));      // not a line apart
  EXPECT_EQ(jni::WakeLinesHint(lines + 8, lines + 264), 0u);  // not a line's start: no hint
}

}  // namespace
}  // namespace jp::input::testing
