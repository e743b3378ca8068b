// Against a libinput.so that imports only what a fortified bionic build does: the monitor hooks those two,
// reports the other four as not imported, and still times events through them.
#include <poll.h>

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

}  // namespace
}  // namespace jp::input::testing
