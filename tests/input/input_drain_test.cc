// The main thread's records go through the finished ring (input/finished_ring.h): end to end against the
// host libinput.so, the records reach the timeline by the watchdog's drain deadline (not before, and
// within InputTracker::kDrainPeriodNs plus the watchdog's wake-up), reports' and exports' views have each
// record exactly once before and after, switching the monitor off appends what the ring held, and a ring
// filled faster than any drain makes the main thread append the rest itself, losing nothing.
#include <poll.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "hook/report_sink.h"
#include "hook/timeline.h"
#include "input/finished_ring.h"
#include "input/input_tracker.h"
#include "tests/fixtures/libinput/input_channel.h"
#include "tests/input/input_harness.h"

namespace jp::input::testing {
namespace {

constexpr uint64_t kMs = hook::kNsPerMs;

struct RoundTrip {
  uint32_t seq;
  uint64_t before_recv, after_recv, before_finish, after_finish;
};

// One event published, read and finished by this thread (the app's main thread, the gate's owner).
bool OneRoundTrip(jpfx_channel* ch, uint32_t seq, RoundTrip* rt) {
  rt->seq = seq;
  if (jpfx_publish_motion(ch, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 1) != 0) return false;
  jpfx_event ev{};
  rt->before_recv = hook::MonotonicNs();
  if (jpfx_consume(ch, &ev) != 1 || ev.seq != seq) return false;
  rt->after_recv = hook::MonotonicNs();
  rt->before_finish = hook::MonotonicNs();
  if (jpfx_finish(ch, seq, 1, ev.consume_time) != 0) return false;
  rt->after_finish = hook::MonotonicNs();
  uint32_t f;
  int handled;
  int64_t consume;
  return jpfx_dispatcher_receive(ch, &f, &handled, &consume) == 1 && f == seq;
}

// How many records of (fd, seq) with a read time at or after `since` the events hold.
int Count(const std::vector<hook::Event>& events, const hook::StringTable& strings, int fd, uint32_t seq,
          uint64_t since) {
  int n = 0;
  for (const hook::Event& e : events) {
    if (e.kind != hook::EventKind::kInputMotion || e.ts_ns + kClockBoundNs < since) continue;
    int64_t efd = -1, eseq = -1;
    for (const hook::EventArg& a : e.args) {
      const std::string_view key = strings.Lookup(a.key);
      if (key == "fd") efd = a.as_int();
      if (key == "seq") eseq = a.as_int();
    }
    n += efd == fd && eseq == static_cast<int64_t>(seq);
  }
  return n;
}

// What a report or an export sees (the timeline plus what providers lend), and the timeline alone.
std::vector<hook::Event> ReportView() {
  const hook::PluginContext* ctx = hook::CurrentPluginContext();
  return ctx->reports->SnapshotWithInFlight(*ctx->timeline, hook::MonotonicNs(), /*running_too=*/false).events;
}
std::vector<hook::Event> TimelineAlone() { return hook::CurrentPluginContext()->timeline->Snapshot().events; }
uint64_t Counter(const char* key) { return std::stoull(InputDetail("counters", key)); }

class InputDrainTest : public ::testing::Test {
 protected:
  void SetUp() override { StartOn(33); }
  // The monitor and a fixture channel on this release's layout. lag_ms 60 s: no lag deadline fires during
  // a test, so the only drain is the ring's own deadline.
  void StartOn(int api) {
    ASSERT_EQ(h.Start(60000, 600000, api), JANKPROBE_OK) << jankprobe_last_error();
    ch = jpfx_channel_open(api, JPFX_IO_BIONIC);
    ASSERT_NE(ch, nullptr);
    fd = jpfx_app_fd(ch);
    since = hook::MonotonicNs();
  }
  void TearDown() override {
    if (ch) jpfx_channel_close(ch);
    h.Stop();
  }
  Harness h;
  jpfx_channel* ch = nullptr;
  int fd = -1;
  uint64_t since = 0;
};

TEST_F(InputDrainTest, RecordsReachTheTimelineByTheDrainDeadlineAndAreLentExactlyOnceUntilThen) {
  const uint64_t drained_before = Counter("records_drained");
  std::vector<RoundTrip> rts(5);
  for (uint32_t i = 0; i < rts.size(); ++i) ASSERT_TRUE(OneRoundTrip(ch, 1 + i, &rts[i]));
  const hook::StringTable& strings = hook::CurrentPluginContext()->timeline->strings();

  // Before the drain: the timeline does not have them yet (checked only while a drain cannot have
  // run: the deadline is a drain period after the first push), and the reports' view has each once.
  const std::vector<hook::Event> early = TimelineAlone();
  const std::vector<hook::Event> lent = ReportView();
  const uint64_t looked = hook::MonotonicNs();
  const bool before_any_drain = looked < rts[0].before_finish + InputTracker::kDrainPeriodNs - 20 * kMs;
  for (const RoundTrip& rt : rts) {
    if (before_any_drain) {
      EXPECT_EQ(Count(early, strings, fd, rt.seq, since), 0) << "seq " << rt.seq;
    }
    EXPECT_EQ(Count(lent, strings, fd, rt.seq, since), 1) << "seq " << rt.seq;
  }
  if (before_any_drain) {
    EXPECT_EQ(Counter("records_in_ring"), rts.size());
  }

  // The drain deadline appends them, nobody else calls anything: wait (bounded) until the timeline has
  // all of them and note when.
  uint64_t appeared = 0;
  const uint64_t give_up = hook::MonotonicNs() + 5000 * kMs;
  while (hook::MonotonicNs() < give_up) {
    const std::vector<hook::Event> now = TimelineAlone();
    bool all = true;
    for (const RoundTrip& rt : rts) all = all && Count(now, strings, fd, rt.seq, since) == 1;
    if (all) {
      appeared = hook::MonotonicNs();
      break;
    }
    SleepUntil(hook::MonotonicNs() + 2 * kMs);
  }
  ASSERT_NE(appeared, 0u) << "the records never reached the timeline";
  // Not before the deadline (armed by the first push, a drain period after it)...
  EXPECT_GE(appeared + kClockBoundNs, rts[0].before_finish + InputTracker::kDrainPeriodNs);
  // ...and not much after it: the watchdog's wake-up on a loaded 2-core host, generously.
  EXPECT_LE(appeared, rts[0].after_finish + InputTracker::kDrainPeriodNs + 500 * kMs);
  EXPECT_EQ(Counter("records_drained") - drained_before, rts.size());
  EXPECT_EQ(Counter("records_in_ring"), 0u);
  EXPECT_EQ(Counter("records_ring_full"), 0u);

  // After the drain the view still has each exactly once (lent copies are gone, not doubled).
  const std::vector<hook::Event> after = ReportView();
  for (const RoundTrip& rt : rts) EXPECT_EQ(Count(after, strings, fd, rt.seq, since), 1) << "seq " << rt.seq;
  // The records carry the event's times (ground truth: the brackets around the app's calls).
  for (const Record& r : InputRecords()) {
    for (const RoundTrip& rt : rts) {
      if (r.fd != fd || r.seq != rt.seq || r.ts_ns + kClockBoundNs < since) continue;
      EXPECT_GE(r.ts_ns + kClockBoundNs, rt.before_recv);
      EXPECT_LE(r.ts_ns, rt.after_recv + kClockBoundNs);
      EXPECT_GE(r.ts_ns + r.dur_ns + kClockBoundNs, rt.before_finish);
      EXPECT_LE(r.ts_ns + r.dur_ns, rt.after_finish + kClockBoundNs);
      EXPECT_EQ(r.name, "MOVE");
    }
  }
}

TEST_F(InputDrainTest, AnExportBetweenDrainsHasEveryTouchOnce) {
  std::vector<RoundTrip> rts(3);
  for (uint32_t i = 0; i < rts.size(); ++i) ASSERT_TRUE(OneRoundTrip(ch, 10 + i, &rts[i]));
  const std::string path = ::testing::TempDir() + "input_drain_export_" + std::to_string(getpid()) + ".json";
  ASSERT_EQ(jankprobe_export(path.c_str(), JANKPROBE_EXPORT_CHROME_TRACE), JANKPROBE_OK) << jankprobe_last_error();
  const bool before_any_drain = hook::MonotonicNs() < rts[0].before_finish + InputTracker::kDrainPeriodNs - 20 * kMs;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  rapidjson::Document d;
  d.Parse(text.str().c_str());
  ASSERT_FALSE(d.HasParseError());
  for (const RoundTrip& rt : rts) {
    int n = 0;
    for (const auto& e : d["traceEvents"].GetArray()) {
      if (!e.HasMember("args") || !e["args"].IsObject()) continue;
      const auto& a = e["args"];
      n += a.HasMember("fd") && a.HasMember("seq") && a["fd"].IsInt() && a["fd"].GetInt() == fd &&
           a["seq"].IsInt() && a["seq"].GetInt() == static_cast<int>(rt.seq);
    }
    EXPECT_EQ(n, 1) << "seq " << rt.seq;
  }
  // Meaningful only if the export ran while the records were still lent (the usual case by far).
  if (before_any_drain) {
    EXPECT_GT(Counter("records_in_ring"), 0u);
  }
}

TEST_F(InputDrainTest, SwitchingInputOffAppendsWhatTheRingHeld) {
  std::vector<RoundTrip> rts(4);
  for (uint32_t i = 0; i < rts.size(); ++i) ASSERT_TRUE(OneRoundTrip(ch, 20 + i, &rts[i]));
  ASSERT_EQ(jankprobe_configure(Harness::Config(60000, 600000, 33, /*enabled=*/false).c_str()), JANKPROBE_OK)
      << jankprobe_last_error();
  // No drain call, no waiting: Disable appended them, and nothing is lent any more.
  const hook::StringTable& strings = hook::CurrentPluginContext()->timeline->strings();
  const std::vector<hook::Event> now = TimelineAlone();
  const std::vector<hook::Event> view = ReportView();
  for (const RoundTrip& rt : rts) {
    EXPECT_EQ(Count(now, strings, fd, rt.seq, since), 1) << "seq " << rt.seq;
    EXPECT_EQ(Count(view, strings, fd, rt.seq, since), 1) << "seq " << rt.seq;
  }
}

TEST_F(InputDrainTest, AFullRingMakesTheMainThreadAppendItselfAndNothingIsLost) {
  const uint64_t full_before = Counter("records_ring_full");
  constexpr uint32_t kExtra = 40;
  const uint32_t n = FinishedRing::kSlots + kExtra;
  std::vector<RoundTrip> rts(n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_TRUE(OneRoundTrip(ch, 100 + i, &rts[i]));
  const uint64_t full = Counter("records_ring_full") - full_before;
  const uint64_t in_ring = Counter("records_in_ring");
  // No drain can have run before the deadline a drain period after the first push: then exactly the
  // events past the ring's capacity were appended by the main thread, and the ring holds the rest.
  if (hook::MonotonicNs() < rts[0].before_finish + InputTracker::kDrainPeriodNs - 20 * kMs) {
    EXPECT_EQ(full, kExtra);
    EXPECT_EQ(in_ring, FinishedRing::kSlots);
  } else {
    GTEST_LOG_(INFO) << "a drain ran meanwhile (slow host): exact split not checked";
  }
  const hook::StringTable& strings = hook::CurrentPluginContext()->timeline->strings();
  const std::vector<hook::Event> view = ReportView();
  for (const RoundTrip& rt : rts) ASSERT_EQ(Count(view, strings, fd, rt.seq, since), 1) << "seq " << rt.seq;
  InputTracker::Get().DrainFinished();
  const std::vector<hook::Event> now = TimelineAlone();
  for (const RoundTrip& rt : rts) ASSERT_EQ(Count(now, strings, fd, rt.seq, since), 1) << "seq " << rt.seq;
  EXPECT_EQ(Counter("records_in_ring"), 0u);
}

// The same on the demo's release (API 34), whose layout has the owner's compiled fast path (33's reads and
// sends go the general way: no fast-path figure there).
class InputDrainApi34Test : public InputDrainTest {
 protected:
  void SetUp() override {
    StartOn(34);
    if (HasFatalFailure()) return;
    // The channel's first event (and the process's: the owner's thread pointer is learnt there) takes
    // its own ways in.
    RoundTrip rt;
    ASSERT_TRUE(OneRoundTrip(ch, 1, &rt));
    InputTracker::Get().DrainFinished();
  }
};

// The ring's cached tail falls a whole ring behind once per FinishedRing::kSlots pushes; the owner's fast
// path reads the consumer's tail itself then, so no FINISHED of the owner goes the general way for it
// (until session 9 one in kSlots did, with its cold code and lines on the app's thread).
TEST_F(InputDrainApi34Test, TheOwnersFinishedStayOnTheFastPathAcrossRingWraps) {
  const uint64_t full_before = Counter("records_ring_full");
  constexpr uint32_t kBatch = 32;
  const uint32_t n = 3 * FinishedRing::kSlots + kBatch;  // the head passes the cached tail 3 times
  uint64_t general_finishes = 0;
  for (uint32_t i = 0; i < n; ++i) {
    // This thread is the dispatcher too: only the app's FINISHED send is counted (the publish and the
    // dispatcher's read of the FINISHED are not the fast path's packets).
    const uint32_t seq = 1000 + i;
    ASSERT_EQ(jpfx_publish_motion(ch, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
    jpfx_event ev{};
    ASSERT_EQ(jpfx_consume(ch, &ev), 1);
    const uint64_t sends_before = Counter("owner_general_sends");
    ASSERT_EQ(jpfx_finish(ch, seq, 1, ev.consume_time), 0);
    general_finishes += Counter("owner_general_sends") - sends_before;
    uint32_t f;
    int handled;
    int64_t consume;
    ASSERT_EQ(jpfx_dispatcher_receive(ch, &f, &handled, &consume), 1);
    if (i % kBatch == kBatch - 1) InputTracker::Get().DrainFinished();  // the watchdog's part, sooner
  }
  EXPECT_EQ(general_finishes, 0u);
  EXPECT_EQ(Counter("records_ring_full") - full_before, 0u);  // every record went through the ring
  InputTracker::Get().DrainFinished();
  EXPECT_EQ(Counter("records_in_ring"), 0u);
}

// While the owner's events come the watchdog keeps the next deadline armed itself (a drain period ahead
// here, lag_ms being 60 s), so the main thread does not arm after each scan; once they stop, one scan
// finds nothing to drain and the chain ends. Observed through the scans: the drain's, then the one it
// armed, then none.
TEST_F(InputDrainApi34Test, TheWatchdogArmsTheNextScanWhileEventsComeAndStopsAfter) {
  // A quiet start: the scans of an earlier test's events (their keep-alive) are over.
  const uint64_t give_up = hook::MonotonicNs() + 5000 * kMs;
  uint64_t scans_before = Counter("deadline_scans");
  for (uint64_t quiet_since = hook::MonotonicNs(); hook::MonotonicNs() < quiet_since + 2 * InputTracker::kDrainPeriodNs;) {
    ASSERT_LT(hook::MonotonicNs(), give_up) << "the scans never stopped";
    SleepUntil(hook::MonotonicNs() + 10 * kMs);
    const uint64_t scans = Counter("deadline_scans");
    if (scans != scans_before) quiet_since = hook::MonotonicNs(), scans_before = scans;
  }
  const uint64_t drained_before = Counter("records_drained");
  RoundTrip rt;
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(OneRoundTrip(ch, 2000 + i, &rt));
  // The drain's scan (armed by the first push), bounded generously for a loaded host.
  while (Counter("records_drained") < drained_before + 3 && hook::MonotonicNs() < give_up) {
    SleepUntil(hook::MonotonicNs() + 5 * kMs);
  }
  ASSERT_EQ(Counter("records_drained"), drained_before + 3) << "the drain never ran";
  // The next scan comes with no event: the watchdog armed it (a drain period after the drain).
  while (Counter("deadline_scans") < scans_before + 2 && hook::MonotonicNs() < give_up) {
    SleepUntil(hook::MonotonicNs() + 5 * kMs);
  }
  EXPECT_EQ(Counter("deadline_scans"), scans_before + 2);
  // It drained nothing, so it armed nothing: no scan in the next five drain periods.
  SleepUntil(hook::MonotonicNs() + 5 * InputTracker::kDrainPeriodNs);
  EXPECT_EQ(Counter("deadline_scans"), scans_before + 2);
  EXPECT_EQ(Counter("pending"), 0u);
}

// Reads that alternate between two channels: each read whose fd is not the one the owner's channel hint
// holds takes ReceivedRest for the table's look (since session 9; it was inline in the entry), which moves
// the hint and notes a channel it has not seen validated. No read goes the general way, every event is
// recorded once, and malformed reads on the second channel afterwards leave it timed by event: it was
// noted valid (a channel never noted valid is switched to fd mode by ChannelTable::kInvalidBeforeFdMode).
TEST_F(InputDrainApi34Test, ReadsAlternatingBetweenTwoChannelsStayOnTheFastPathAndNoteBothValid) {
  jpfx_channel* ch2 = jpfx_channel_open(34, JPFX_IO_BIONIC);
  ASSERT_NE(ch2, nullptr);
  const int fd2 = jpfx_app_fd(ch2);
  constexpr uint32_t kPairs = 8;
  uint64_t general_reads = 0;
  for (uint32_t i = 0; i < 2 * kPairs; ++i) {
    jpfx_channel* const c = i % 2 == 0 ? ch : ch2;
    const uint32_t seq = (i % 2 == 0 ? 3000 : 4000) + i / 2;
    ASSERT_EQ(jpfx_publish_motion(c, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
    // Only the app's read is counted (this thread is the dispatcher too: its read of the FINISHED is
    // not an event the fast path takes).
    const uint64_t reads_before = Counter("owner_general_reads");
    jpfx_event ev{};
    ASSERT_EQ(jpfx_consume(c, &ev), 1);
    general_reads += Counter("owner_general_reads") - reads_before;
    ASSERT_EQ(jpfx_finish(c, seq, 1, ev.consume_time), 0);
    uint32_t f;
    int handled;
    int64_t consume;
    ASSERT_EQ(jpfx_dispatcher_receive(c, &f, &handled, &consume), 1);
  }
  EXPECT_EQ(general_reads, 0u);
  InputTracker::Get().DrainFinished();
  const std::vector<hook::Event> events = TimelineAlone();
  const hook::StringTable& strings = hook::CurrentPluginContext()->timeline->strings();
  for (uint32_t i = 0; i < kPairs; ++i) {
    EXPECT_EQ(Count(events, strings, fd, 3000 + i, since), 1) << "seq " << 3000 + i;
    EXPECT_EQ(Count(events, strings, fd2, 4000 + i, since), 1) << "seq " << 4000 + i;
  }
  // Short packets read with an InputMessage-sized buffer on the second channel: as many as switch a
  // channel never noted valid to fd mode.
  const uint8_t shorty[3] = {1, 2, 3};
  uint8_t inbuf[4096];
  for (uint32_t i = 0; i < ChannelTable::kInvalidBeforeFdMode; ++i) {
    ASSERT_EQ(jpfx_send_raw(JPFX_IO_BIONIC, jpfx_dispatcher_fd(ch2), shorty, sizeof shorty), 3);
    ASSERT_EQ(jpfx_recv_raw(JPFX_IO_BIONIC, fd2, inbuf, jpfx_message_size(34)), 3);
  }
  EXPECT_EQ(Counter("fd_mode_channels"), 0u);
  jpfx_channel_close(ch2);
}

}  // namespace
}  // namespace jp::input::testing
