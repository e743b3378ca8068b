// End to end: the real input monitor hooked into the host libinput.so, a dispatcher publishing events with
// known eventTime, the app side (this thread) consuming and finishing them after scripted delays. Every
// timing is checked against brackets the test itself measured around the app's calls (ground truth).
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "tests/fixtures/libinput/input_channel.h"
#include "tests/input/input_harness.h"

namespace jp::input::testing {
namespace {

constexpr double kMsTolerance = 1.0;

struct Script {
  bool motion;
  int32_t action;
  uint32_t pointers;
  int64_t dispatch_ns;  // eventTime = publish time - this
  int64_t handle_ns;    // how long the app holds it
};

struct Seen {
  int fd;
  uint32_t seq;
  int64_t event_time;
  int64_t consume_time;
  uint64_t before_recv, after_recv, before_finish, after_finish;
  int64_t scripted_handle_ns;
};

// Polls the app fd and consumes one event; brackets the call that returned it.
bool ConsumeOne(jpfx_channel* ch, jpfx_event* ev, uint64_t* before, uint64_t* after, int timeout_ms = 2000) {
  const uint64_t give_up = hook::MonotonicNs() + static_cast<uint64_t>(timeout_ms) * hook::kNsPerMs;
  while (hook::MonotonicNs() < give_up) {
    pollfd p{jpfx_app_fd(ch), POLLIN, 0};
    poll(&p, 1, 50);
    *before = hook::MonotonicNs();
    const int r = jpfx_consume(ch, ev);
    *after = hook::MonotonicNs();
    if (r == 1) return true;
    if (r < 0) return false;
  }
  return false;
}

void FinishBracketed(jpfx_channel* ch, Seen* s, int handled = 1) {
  s->before_finish = hook::MonotonicNs();
  ASSERT_EQ(jpfx_finish(ch, s->seq, handled, s->consume_time), 0);
  s->after_finish = hook::MonotonicNs();
}

// One touch round trip as an app does it: the dispatcher publishes a MOVE with this seq, the app consumes
// it (bracketed) and finishes it (bracketed), the dispatcher takes the FINISHED. False if the publish or
// the consume failed (the caller decides whether that ends its loop or its test).
bool RoundTripOne(jpfx_channel* ch, uint32_t seq, Seen* s) {
  if (jpfx_publish_motion(ch, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 1) != 0) return false;
  jpfx_event ev{};
  if (!ConsumeOne(ch, &ev, &s->before_recv, &s->after_recv)) return false;
  s->fd = jpfx_app_fd(ch);
  s->seq = ev.seq;
  s->consume_time = ev.consume_time;
  FinishBracketed(ch, s);
  uint32_t f;
  int hd;
  int64_t c;
  while (jpfx_dispatcher_receive(ch, &f, &hd, &c) != 1) {
  }
  return true;
}

const Record* FindRecord(const std::vector<Record>& records, int fd, uint32_t seq) {
  const Record* found = nullptr;
  for (const Record& r : records) {
    if (r.fd == fd && r.seq == static_cast<int64_t>(seq)) {
      EXPECT_EQ(found, nullptr) << "two records for fd " << fd << " seq " << seq;
      found = &r;
    }
  }
  return found;
}

void ExpectRecordMatches(const std::vector<Record>& records, const Seen& s) {
  const Record* r = FindRecord(records, s.fd, s.seq);
  ASSERT_NE(r, nullptr) << "no record for fd " << s.fd << " seq " << s.seq;
  EXPECT_GE(r->ts_ns + kClockBoundNs, s.before_recv);
  EXPECT_LE(r->ts_ns, s.after_recv + kClockBoundNs);
  EXPECT_GE(r->ts_ns + r->dur_ns + kClockBoundNs, s.before_finish);
  EXPECT_LE(r->ts_ns + r->dur_ns, s.after_finish + kClockBoundNs);
  if (s.scripted_handle_ns > 0) {
    // The app slept to an absolute time; what it overslept is measured, the rest must match the script.
    // The proxy's own timestamps fall somewhere inside the recv and finish calls: a thread preempted
    // inside one (a loaded 2-core CI machine) widens the ground truth by that call's window, no more.
    const double overslept_ms = static_cast<double>(s.before_finish - (s.after_recv + s.scripted_handle_ns)) / 1e6;
    const double windows_ms =
        static_cast<double>((s.after_recv - s.before_recv) + (s.after_finish - s.before_finish)) / 1e6;
    EXPECT_NEAR(static_cast<double>(r->dur_ns) / 1e6, static_cast<double>(s.scripted_handle_ns) / 1e6,
                kMsTolerance + overslept_ms + windows_ms);
  }
}

const rapidjson::Value* FindReport(const std::vector<rapidjson::Document>& reports, int fd, uint32_t seq) {
  for (const auto& d : reports) {
    // The monitor's fields sit at the top level of a report ("seq" there is the report's own number).
    if (d.HasMember("fd") && d["fd"].GetInt() == fd && d.HasMember("event_seq") && d["event_seq"].GetUint() == seq) {
      return &d;
    }
  }
  return nullptr;
}

struct LayoutCase {
  int api;
  int io;
};

class InputGroundTruth : public ::testing::TestWithParam<LayoutCase> {
 protected:
  void TearDown() override { h.Stop(); }
  Harness h;
};

TEST_P(InputGroundTruth, HandleAndDispatchWithinOneMsOfTheScript) {
  const LayoutCase lc = GetParam();
  ASSERT_EQ(h.Start(/*lag_ms=*/1, /*anr_ms=*/5000, lc.api), JANKPROBE_OK) << jankprobe_last_error();
  const std::string unmatched_before = InputDetail("counters", "unmatched_finished");
  jpfx_channel* ch = jpfx_channel_open(lc.api, lc.io);
  ASSERT_NE(ch, nullptr);
  const std::vector<Script> script = {
      {false, 0, 0, 2000000, 3000000},       // key DOWN
      {false, 1, 0, 1000000, 4000000},       // key UP
      {true, 0, 1, 3000000, 5000000},        // DOWN, 1 pointer
      {true, 0x105, 2, 1000000, 3000000},    // POINTER_DOWN, pointer index 1
      {true, 2, 16, 4000000, 6000000},       // MOVE, 16 pointers
      {true, 1, 1, 2000000, 3000000},        // UP
  };
  std::vector<Seen> seen(script.size());
  // The dispatcher: publishes each event with a known eventTime, waits for its FINISHED like
  // InputDispatcher's one-outstanding-event-per-window rule for keys.
  std::atomic<bool> dispatcher_ok{true};
  std::thread dispatcher([&] {
    for (size_t i = 0; i < script.size(); ++i) {
      const Script& s = script[i];
      const int64_t event_time = static_cast<int64_t>(hook::MonotonicNs()) - s.dispatch_ns;
      const uint32_t seq = static_cast<uint32_t>(100 + i);
      const int r = s.motion ? jpfx_publish_motion(ch, seq, s.action, event_time, s.pointers)
                             : jpfx_publish_key(ch, seq, s.action, event_time);
      if (r != 0) dispatcher_ok = false;
      for (;;) {
        uint32_t fseq = 0;
        int handled = 0;
        int64_t consume = 0;
        pollfd p{jpfx_dispatcher_fd(ch), POLLIN, 0};
        if (poll(&p, 1, 3000) <= 0) {
          dispatcher_ok = false;
          return;
        }
        const int got = jpfx_dispatcher_receive(ch, &fseq, &handled, &consume);
        if (got == 1) {
          if (fseq != seq || handled != 1) dispatcher_ok = false;
          break;
        }
        if (got < 0) dispatcher_ok = false;
      }
    }
  });
  for (size_t i = 0; i < script.size(); ++i) {
    jpfx_event ev{};
    Seen& s = seen[i];
    ASSERT_TRUE(ConsumeOne(ch, &ev, &s.before_recv, &s.after_recv));
    EXPECT_EQ(ev.seq, 100 + i);
    EXPECT_EQ(ev.is_motion, script[i].motion ? 1 : 0);
    EXPECT_EQ(ev.pointer_count, script[i].pointers);
    s.fd = jpfx_app_fd(ch);
    s.seq = ev.seq;
    s.event_time = ev.event_time;
    s.consume_time = ev.consume_time;
    s.scripted_handle_ns = script[i].handle_ns;
    SleepUntil(s.after_recv + static_cast<uint64_t>(script[i].handle_ns));
    FinishBracketed(ch, &s);
  }
  dispatcher.join();
  EXPECT_TRUE(dispatcher_ok);
  const std::vector<Record> records = InputRecords();
  for (size_t i = 0; i < seen.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    ExpectRecordMatches(records, seen[i]);
    const Record* r = FindRecord(records, seen[i].fd, seen[i].seq);
    if (r) {
      EXPECT_EQ(r->kind, script[i].motion ? hook::EventKind::kInputMotion : hook::EventKind::kInputKey);
      EXPECT_EQ(r->tid, static_cast<uint32_t>(hook::CurrentTid()));
    }
  }
  EXPECT_EQ(records.size(), script.size());
  // lag_ms 1: every event is a lag, so each report carries dispatch_ms, handle_ms and consume_ms.
  const auto keys = h.Reports("key_lag", 2, 3000);
  const auto touches = h.Reports("touch_lag", 4, 3000);
  ASSERT_EQ(keys.size(), 2u);
  ASSERT_EQ(touches.size(), 4u);
  const char* names[] = {"DOWN", "UP", "DOWN", "POINTER_DOWN", "MOVE", "UP"};
  for (size_t i = 0; i < seen.size(); ++i) {
    SCOPED_TRACE("report " + std::to_string(i));
    const Seen& s = seen[i];
    const rapidjson::Value* d = FindReport(script[i].motion ? touches : keys, s.fd, s.seq);
    ASSERT_NE(d, nullptr);
    const auto& f = *d;
    EXPECT_STREQ(f["action"].GetString(), names[i]);
    const double dispatch_lo = static_cast<double>(static_cast<int64_t>(s.before_recv) - s.event_time) / 1e6;
    const double dispatch_hi = static_cast<double>(static_cast<int64_t>(s.after_recv) - s.event_time) / 1e6;
    EXPECT_GE(f["dispatch_ms"].GetDouble(), dispatch_lo - kClockBoundMs - 1e-6);
    EXPECT_LE(f["dispatch_ms"].GetDouble(), dispatch_hi + kClockBoundMs + 1e-6);
    EXPECT_NEAR(f["dispatch_ms"].GetDouble(), static_cast<double>(script[i].dispatch_ns) / 1e6,
                kMsTolerance + (dispatch_hi - static_cast<double>(script[i].dispatch_ns) / 1e6));
    EXPECT_GE(f["handle_ms"].GetDouble(),
              static_cast<double>(s.before_finish - s.after_recv) / 1e6 - 2 * kClockBoundMs - 1e-6);
    EXPECT_LE(f["handle_ms"].GetDouble(),
              static_cast<double>(s.after_finish - s.before_recv) / 1e6 + 2 * kClockBoundMs + 1e-6);
    if (lc.api >= 31) {
      ASSERT_TRUE(f.HasMember("consume_ms"));
      EXPECT_NEAR(f["consume_ms"].GetDouble(), static_cast<double>(s.consume_time - s.event_time) / 1e6, 1e-3);
    } else {
      EXPECT_FALSE(f.HasMember("consume_ms"));
    }
    // With lag_ms 1 the watchdog may or may not get to the stack before the finish; when it did, it is ours.
    if (d->HasMember("stack")) {
      EXPECT_EQ((*d)["stack"].Size(), 2u);
    }
  }
  EXPECT_EQ(InputDetail("counters", "unmatched_finished"), unmatched_before);
  jpfx_channel_close(ch);
}

INSTANTIATE_TEST_SUITE_P(Layouts, InputGroundTruth,
                         ::testing::Values(LayoutCase{28, JPFX_IO_OLD_BIONIC}, LayoutCase{29, JPFX_IO_BIONIC},
                                           LayoutCase{30, JPFX_IO_BIONIC}, LayoutCase{31, JPFX_IO_GLIBC},
                                           LayoutCase{32, JPFX_IO_CHK}, LayoutCase{33, JPFX_IO_BIONIC},
                                           LayoutCase{34, JPFX_IO_BIONIC}, LayoutCase{36, JPFX_IO_GLIBC}),
                         [](const ::testing::TestParamInfo<LayoutCase>& info) {
                           return "api" + std::to_string(info.param.api) + "_io" + std::to_string(info.param.io);
                         });

// The status's "counters" object: every counter of InputTracker::counters(), in this order, each the
// value counters() reads (nothing moves meanwhile: the test's traffic is over), and nothing else.
void ExpectStatusCountersAreTheTrackers() {
  rapidjson::Document d;
  d.Parse(jankprobe_status());
  ASSERT_FALSE(d.HasParseError());
  const auto& details = d["monitors"]["input"]["details"];
  ASSERT_TRUE(details.HasMember("counters") && details["counters"].IsObject());
  const InputTracker::Counters c = InputTracker::Get().counters();
  std::vector<std::pair<std::string, uint64_t>> want = {
      {"events_read", c.events_read}, {"events_finished", c.events_finished}, {"fd_timed", c.fd_timed},
      {"unmatched_finished", c.unmatched_finished}, {"owner_general_reads", c.owner_general_reads},
      {"owner_general_sends", c.owner_general_sends}, {"table_full", c.table_full},
      {"arm_failures", c.arm_failures}, {"lag_reports", c.lag_reports}, {"anr_reports", c.anr_reports},
      {"abandoned", c.abandoned},
      {"dropped_at_disable", c.dropped_at_disable}, {"deadline_scans", c.deadline_scans},
      {"records_drained", c.records_drained}, {"records_ring_full", c.records_ring_full},
      {"records_in_ring", c.records_in_ring}, {"pending", static_cast<uint64_t>(c.pending)},
      {"fd_mode_channels", static_cast<uint64_t>(c.fd_mode_channels)}};
  for (int i = 1; i < kVerdictCount; ++i) {
    const std::string name = VerdictName(static_cast<Verdict>(i));
    want.emplace_back("received_" + name, c.rejected_received[i]);
    want.emplace_back("sent_" + name, c.rejected_sent[i]);
  }
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const auto& m : details["counters"].GetObject()) {
    ASSERT_TRUE(m.value.IsUint64()) << m.name.GetString();
    got.emplace_back(m.name.GetString(), m.value.GetUint64());
  }
  EXPECT_EQ(got, want);
}

class InputMonitorTest : public ::testing::Test {
 protected:
  void TearDown() override { h.Stop(); }
  Harness h;
};

TEST_F(InputMonitorTest, ReportsWhichImportsItHooked) {
  ASSERT_EQ(h.Start(100, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  for (const char* sym : {"recvfrom", "sendto", "__sendto_chk", "recv", "send", "__recvfrom_chk"}) {
    EXPECT_EQ(InputDetail("imports", sym), "hooked") << sym;
  }
}

TEST_F(InputMonitorTest, InterleavedChannelsAndBatchedMovesFinishedOneByOne) {
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  const std::string unmatched_before = InputDetail("counters", "unmatched_finished");
  jpfx_channel* window = jpfx_channel_open(33, JPFX_IO_BIONIC);
  jpfx_channel* dialog = jpfx_channel_open(33, JPFX_IO_BIONIC);
  jpfx_channel* ime = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_TRUE(window && dialog && ime);
  const int64_t t = static_cast<int64_t>(hook::MonotonicNs());
  // The same seq numbers on different channels: only (fd, seq) tells them apart.
  ASSERT_EQ(jpfx_publish_motion(window, 1, 0, t, 1), 0);
  ASSERT_EQ(jpfx_publish_motion(dialog, 1, 0, t, 1), 0);
  ASSERT_EQ(jpfx_publish_key(ime, 1, 0, t), 0);
  for (uint32_t seq = 2; seq <= 6; ++seq) ASSERT_EQ(jpfx_publish_motion(window, seq, 2, t, 2), 0);
  std::vector<Seen> seen;
  auto consume = [&](jpfx_channel* ch) {
    jpfx_event ev{};
    Seen s{};
    EXPECT_TRUE(ConsumeOne(ch, &ev, &s.before_recv, &s.after_recv));
    s.fd = jpfx_app_fd(ch);
    s.seq = ev.seq;
    s.event_time = ev.event_time;
    s.consume_time = ev.consume_time;
    seen.push_back(s);
    return seen.size() - 1;
  };
  // Read in interleaved order, the whole MOVE batch before finishing any of it.
  const size_t w1 = consume(window), d1 = consume(dialog), i1 = consume(ime);
  std::vector<size_t> moves;
  for (int k = 0; k < 5; ++k) moves.push_back(consume(window));
  // Finish out of order and one by one.
  FinishBracketed(ime, &seen[i1]);
  for (auto it = moves.rbegin(); it != moves.rend(); ++it) FinishBracketed(window, &seen[*it]);
  FinishBracketed(dialog, &seen[d1]);
  FinishBracketed(window, &seen[w1]);
  const std::vector<Record> records = InputRecords();
  EXPECT_EQ(records.size(), seen.size());
  for (const Seen& s : seen) ExpectRecordMatches(records, s);
  EXPECT_EQ(InputDetail("counters", "unmatched_finished"), unmatched_before);
  EXPECT_EQ(InputDetail("counters", "pending"), "0");
  jpfx_channel_close(window);
  jpfx_channel_close(dialog);
  jpfx_channel_close(ime);
}

// The main thread owns the fast path (plain stores in its part of the pending table); a second Looper
// thread with its own channel takes the CAS path; an event read on one thread may be finished on another.
TEST_F(InputMonitorTest, TwoReadingThreadsAtOnceEveryEventMatchedOnce) {
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  const std::string unmatched_before = InputDetail("counters", "unmatched_finished");
  const std::string full_before = InputDetail("counters", "table_full");
  jpfx_channel* main_ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  jpfx_channel* other_ch = jpfx_channel_open(33, JPFX_IO_OLD_BIONIC);
  ASSERT_TRUE(main_ch && other_ch);
  constexpr uint32_t kEvents = 300;
  auto drive = [](jpfx_channel* ch, std::vector<Seen>* seen) {
    for (uint32_t seq = 1; seq <= kEvents; ++seq) {
      Seen s{};
      if (!RoundTripOne(ch, seq, &s)) return;
      seen->push_back(s);
    }
  };
  std::vector<Seen> main_seen, other_seen;
  std::thread other(drive, other_ch, &other_seen);
  drive(main_ch, &main_seen);
  other.join();
  ASSERT_EQ(main_seen.size(), kEvents);
  ASSERT_EQ(other_seen.size(), kEvents);
  // Read here, finished on another thread (handed over, as an app may do with finishInputEvent).
  ASSERT_EQ(jpfx_publish_key(main_ch, 9000, 0, static_cast<int64_t>(hook::MonotonicNs())), 0);
  jpfx_event ev{};
  Seen handed{};
  ASSERT_TRUE(ConsumeOne(main_ch, &ev, &handed.before_recv, &handed.after_recv));
  handed.fd = jpfx_app_fd(main_ch);
  handed.seq = ev.seq;
  handed.consume_time = ev.consume_time;
  std::thread([&] { FinishBracketed(main_ch, &handed); }).join();

  const std::vector<Record> records = InputRecords();
  EXPECT_EQ(records.size(), 2 * kEvents + 1);
  for (const Seen& s : main_seen) ExpectRecordMatches(records, s);
  for (const Seen& s : other_seen) ExpectRecordMatches(records, s);
  ExpectRecordMatches(records, handed);
  EXPECT_EQ(InputDetail("counters", "unmatched_finished"), unmatched_before);
  EXPECT_EQ(InputDetail("counters", "table_full"), full_before);
  EXPECT_EQ(InputDetail("counters", "pending"), "0");
  jpfx_channel_close(main_ch);
  jpfx_channel_close(other_ch);
}

// A signal handler on the owner thread that reads and finishes events of its own channel while the
// owner may be inside the tracker: such a nested entry must not use the owner's private parts (the
// owner's slots, counters and ring are written without atomic read-modify-writes), so it takes the
// gate's shared way. Whatever the interleaving, every event of both channels is matched once.
namespace nested {
jpfx_channel* g_channel = nullptr;
volatile sig_atomic_t g_published = 0, g_finished = 0;
// The handler publishes up to this sequence number: a batch's records must fit the timeline whole, and
// how many signals a batch takes depends on the host (20 us apart, with a round trip in each handler: on
// session 11's KVM guest a batch of 200 owner events took ~7000, where 30-50 was the rule before). Once
// the budget is spent the signals still come, and find nothing to do.
volatile sig_atomic_t g_budget = 0;
void OnTimer(int) {
  const int saved_errno = errno;
  if (g_channel != nullptr && g_published < g_budget) {
    const uint32_t seq = static_cast<uint32_t>(g_published) + 1;
    if (jpfx_publish_motion(g_channel, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 1) == 0) {
      g_published = static_cast<sig_atomic_t>(seq);
      jpfx_event ev{};
      if (jpfx_consume(g_channel, &ev) == 1 && jpfx_finish(g_channel, ev.seq, 1, ev.consume_time) == 0) {
        g_finished = g_finished + 1;
      }
      uint32_t f;
      int hd;
      int64_t c;
      while (jpfx_dispatcher_receive(g_channel, &f, &hd, &c) == 1) {
      }
    }
  }
  errno = saved_errno;
}
}  // namespace nested

TEST_F(InputMonitorTest, SignalHandlerReadingInsideTheOwnersEventsIsNestedAndMatchesEverything) {
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  const std::string unmatched_before = InputDetail("counters", "unmatched_finished");
  const std::string full_before = InputDetail("counters", "table_full");
  const InputTracker::Counters before = InputTracker::Get().counters();
  jpfx_channel* main_ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  jpfx_channel* sig_ch = jpfx_channel_open(33, JPFX_IO_GLIBC);
  ASSERT_TRUE(main_ch && sig_ch);
  nested::g_channel = sig_ch;
  struct sigaction sa {};
  sa.sa_handler = &nested::OnTimer;
  sa.sa_flags = SA_RESTART;
  struct sigaction old_sa {};
  ASSERT_EQ(sigaction(SIGALRM, &sa, &old_sa), 0);
  // Aimed at this thread (the owner): every 20 us, so that some land inside the tracker.
  sigevent sev{};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGALRM;
  sev._sigev_un._tid = static_cast<pid_t>(hook::CurrentTid());
  timer_t timer;
  ASSERT_EQ(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
  auto arm = [&](long period_ns) {
    itimerspec its{};
    its.it_interval.tv_nsec = period_ns;
    its.it_value.tv_nsec = period_ns;
    return timer_settime(timer, 0, &its, nullptr);
  };
  struct Restore {  // also when an assertion leaves early: no signal may reach the next tests
    timer_t timer;
    struct sigaction old;
    ~Restore() {
      timer_delete(timer);
      sigaction(SIGALRM, &old, nullptr);
      nested::g_channel = nullptr;
    }
  } restore{timer, old_sa};

  // Until enough of the handler's events were nested (finished outside the owner's ring), or 3 s; in
  // batches that the timeline (1024 records) holds whole, each checked with the timer stopped.
  auto nested_finishes = [&] {
    const InputTracker::Counters c = InputTracker::Get().counters();
    const uint64_t outside_ring = (c.events_finished - before.events_finished) -
                                  ((c.records_drained + c.records_in_ring) - (before.records_drained + before.records_in_ring));
    return outside_ring - (c.records_ring_full - before.records_ring_full);
  };
  const int sig_fd = jpfx_app_fd(sig_ch);
  const uint64_t give_up = hook::MonotonicNs() + 3 * hook::kNsPerSec;
  uint32_t seq = 0;
  size_t owner_events = 0, batches = 0;
  while (nested_finishes() < 5 && hook::MonotonicNs() < give_up) {
    Harness::g_first_ticket = hook::CurrentPluginContext()->timeline->appended();
    const uint32_t sig_before = static_cast<uint32_t>(nested::g_finished);
    // The owner's 200 and the handler's up to 600 fit the timeline's 1024 records with room to spare.
    nested::g_budget = static_cast<sig_atomic_t>(nested::g_published + 600);
    std::vector<Seen> main_seen;
    ASSERT_EQ(arm(20000), 0);  // every 20 us, so that some land inside the tracker
    for (int i = 0; i < 200; ++i) {
      ++seq;
      Seen s{};
      ASSERT_TRUE(RoundTripOne(main_ch, seq, &s)) << "seq " << seq;
      main_seen.push_back(s);
    }
    ASSERT_EQ(arm(0), 0);
    const uint32_t sig_after = static_cast<uint32_t>(nested::g_finished);
    ASSERT_EQ(sig_after, static_cast<uint32_t>(nested::g_published));
    const std::vector<Record> records = InputRecords();
    for (const Seen& s : main_seen) ExpectRecordMatches(records, s);
    for (uint32_t i = sig_before + 1; i <= sig_after; ++i) EXPECT_NE(FindRecord(records, sig_fd, i), nullptr) << i;
    ASSERT_EQ(records.size(), main_seen.size() + (sig_after - sig_before)) << "batch " << batches;
    owner_events += main_seen.size();
    ++batches;
  }
  const uint64_t nested_count = nested_finishes();
  EXPECT_GE(nested_count, 1u) << "no signal landed inside the tracker: the nested way was not exercised";
  EXPECT_EQ(InputDetail("counters", "unmatched_finished"), unmatched_before);
  EXPECT_EQ(InputDetail("counters", "table_full"), full_before);
  EXPECT_EQ(InputDetail("counters", "pending"), "0");
  std::printf("owner events %zu in %zu batches, handler events %d, of which finished by the nested way %llu\n",
              owner_events, batches, static_cast<int>(nested::g_finished), static_cast<unsigned long long>(nested_count));
  jpfx_channel_close(main_ch);
  jpfx_channel_close(sig_ch);
}

TEST_F(InputMonitorTest, TimelineMessagesAndWouldBlockSendsAreNotFinishes) {
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  ASSERT_EQ(jpfx_publish_motion(ch, 7, 0, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
  jpfx_event ev{};
  Seen s{};
  ASSERT_TRUE(ConsumeOne(ch, &ev, &s.before_recv, &s.after_recv));
  s.fd = jpfx_app_fd(ch);
  s.seq = ev.seq;
  s.consume_time = ev.consume_time;
  // TIMELINE for the same seq until the 32 KiB socket is full: none of them finishes the event.
  int sent = 0;
  int r;
  while ((r = jpfx_send_timeline(ch, 7)) == 0) ++sent;
  EXPECT_EQ(r, -EAGAIN);
  EXPECT_GT(sent, 10);
  // FINISHED would block now: that send failed, so it finishes nothing.
  EXPECT_EQ(jpfx_finish(ch, 7, 1, s.consume_time), -EAGAIN);
  EXPECT_EQ(FindRecord(InputRecords(), s.fd, s.seq), nullptr);
  SleepUntil(hook::MonotonicNs() + 3 * hook::kNsPerMs);
  uint32_t fseq;
  int handled, timelines = 0;
  int64_t consume;
  while (jpfx_dispatcher_receive(ch, &fseq, &handled, &consume) == 2) ++timelines;
  EXPECT_EQ(timelines, sent);
  // The retry that goes through is the finish.
  FinishBracketed(ch, &s);
  ExpectRecordMatches(InputRecords(), s);
  jpfx_channel_close(ch);
}

TEST_F(InputMonitorTest, ForeignTrafficGarbageAndWrongSizesNeverFinishAnything) {
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  const int app = jpfx_app_fd(ch), disp = jpfx_dispatcher_fd(ch);
  ASSERT_EQ(jpfx_publish_key(ch, 9, 0, static_cast<int64_t>(hook::MonotonicNs())), 0);
  jpfx_event ev{};
  Seen s{};
  ASSERT_TRUE(ConsumeOne(ch, &ev, &s.before_recv, &s.after_recv));
  s.fd = app;
  s.seq = 9;
  s.consume_time = ev.consume_time;

  // A FINISHED for seq 9 that is perfect in every byte, but on other sockets of the same library.
  uint8_t finished[24] = {};
  const uint32_t type = 2, seq = 9;
  std::memcpy(finished, &type, 4);
  std::memcpy(finished + 4, &seq, 4);
  finished[8] = 1;
  const int64_t ct = ev.consume_time;
  std::memcpy(finished + 16, &ct, 8);
  for (int sock_type : {SOCK_DGRAM, SOCK_SEQPACKET, SOCK_STREAM}) {
    int fds[2];
    ASSERT_EQ(jpfx_socketpair(sock_type, fds), 0);
    for (int io : {JPFX_IO_BIONIC, JPFX_IO_OLD_BIONIC, JPFX_IO_GLIBC}) {
      EXPECT_EQ(jpfx_send_raw(io, fds[0], finished, sizeof finished), 24);
      uint8_t buf[64];
      EXPECT_EQ(jpfx_recv_raw(io, fds[1], buf, sizeof buf), 24);
    }
    close(fds[0]);
    close(fds[1]);
  }
  // On the channel itself: short, garbage, wrong sizes, unknown types, impossible fields.
  std::vector<std::vector<uint8_t>> bad;
  bad.push_back({1, 2, 3});                                       // short
  bad.push_back(std::vector<uint8_t>(24, 0xFF));                  // unknown type
  {
    std::vector<uint8_t> p(finished, finished + 24);
    p.resize(23);                                                 // FINISHED, one byte short
    bad.push_back(p);
    p.assign(finished, finished + 24);
    p.resize(32);                                                 // FINISHED, too long
    bad.push_back(p);
    p.assign(finished, finished + 24);
    std::memset(p.data() + 4, 0, 4);                              // seq 0
    bad.push_back(p);
    p.assign(finished, finished + 24);
    p[8] = 7;                                                     // handled is a bool
    bad.push_back(p);
    p.assign(finished, finished + 24);
    std::memset(p.data() + 16, 0, 8);                             // no consumeTime
    bad.push_back(p);
    p.assign(finished, finished + 24);
    const uint32_t t99 = 99;
    std::memcpy(p.data(), &t99, 4);                               // unknown type, right size
    bad.push_back(p);
  }
  uint8_t inbuf[4096];
  const size_t cap = jpfx_message_size(33);
  for (const auto& p : bad) {
    // App -> dispatcher (a send the monitor sees) and dispatcher -> app (a read the monitor sees, with the
    // InputMessage-sized recv a real consumer makes).
    EXPECT_EQ(jpfx_send_raw(JPFX_IO_BIONIC, app, p.data(), p.size()), static_cast<long>(p.size()));
    EXPECT_EQ(jpfx_send_raw(JPFX_IO_BIONIC, disp, p.data(), p.size()), static_cast<long>(p.size()));
    EXPECT_EQ(jpfx_recv_raw(JPFX_IO_BIONIC, app, inbuf, cap), static_cast<long>(p.size()));
    EXPECT_EQ(jpfx_recv_raw(JPFX_IO_BIONIC, disp, inbuf, cap), static_cast<long>(p.size()));
  }
  // Motions with impossible pointer counts, read by the app.
  for (uint32_t count : {0u, 17u, 1000u}) {
    std::vector<uint8_t> p(jpfx_motion_size(33, 1), 0);
    const uint32_t motion = 1, s2 = 11;
    std::memcpy(p.data(), &motion, 4);
    std::memcpy(p.data() + 4, &s2, 4);
    std::memcpy(p.data() + 12, &count, 4);
    EXPECT_GT(jpfx_send_raw(JPFX_IO_BIONIC, disp, p.data(), p.size()), 0);
    EXPECT_GT(jpfx_recv_raw(JPFX_IO_BIONIC, app, inbuf, cap), 0);
  }
  const std::vector<Record> before = InputRecords();
  EXPECT_EQ(FindRecord(before, app, 9), nullptr) << "a foreign or malformed packet finished the event";
  EXPECT_TRUE(before.empty());
  EXPECT_NE(InputDetail("counters", "received_bad_field"), "0");
  EXPECT_NE(InputDetail("counters", "received_unknown_type"), "0");
  EXPECT_NE(InputDetail("counters", "sent_bad_field"), "0");
  EXPECT_EQ(InputDetail("counters", "fd_mode_channels"), "0");
  // The real FINISHED still matches.
  FinishBracketed(ch, &s);
  const std::vector<Record> after = InputRecords();
  ExpectRecordMatches(after, s);
  EXPECT_EQ(after.size(), 1u);
  jpfx_channel_close(ch);
  ExpectStatusCountersAreTheTrackers();
}

TEST_F(InputMonitorTest, StuckEventCapturesTheStackWhileStuckAndReportsOnce) {
  ASSERT_EQ(h.Start(/*lag_ms=*/40, /*anr_ms=*/5000, 34), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(34, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  // A quick one first: no report for it.
  ASSERT_EQ(jpfx_publish_motion(ch, 1, 0, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
  jpfx_event ev{};
  Seen quick{};
  ASSERT_TRUE(ConsumeOne(ch, &ev, &quick.before_recv, &quick.after_recv));
  quick.fd = jpfx_app_fd(ch);
  quick.seq = 1;
  quick.consume_time = ev.consume_time;
  FinishBracketed(ch, &quick);

  ASSERT_EQ(jpfx_publish_motion(ch, 2, 1, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
  Seen stuck{};
  ASSERT_TRUE(ConsumeOne(ch, &ev, &stuck.before_recv, &stuck.after_recv));
  stuck.fd = jpfx_app_fd(ch);
  stuck.seq = 2;
  stuck.consume_time = ev.consume_time;
  stuck.scripted_handle_ns = 120 * static_cast<int64_t>(hook::kNsPerMs);
  SleepUntil(stuck.after_recv + static_cast<uint64_t>(stuck.scripted_handle_ns));
  FinishBracketed(ch, &stuck);

  const auto reports = h.Reports("touch_lag", 1, 3000);
  ASSERT_EQ(reports.size(), 1u);
  const auto& r = reports[0];
  EXPECT_EQ(r["event_seq"].GetUint(), 2u);
  EXPECT_STREQ(r["action"].GetString(), "UP");
  EXPECT_TRUE(r["stack_captured_while_stuck"].GetBool());
  ASSERT_EQ(r["stack"].Size(), 2u);
  {
    std::lock_guard<std::mutex> lock(h.mu);
    ASSERT_EQ(h.capture_times.size(), 1u);
    // Captured after lag_ms from the read and before the finish: while the app was stuck.
    EXPECT_GE(h.capture_times[0] + kClockBoundNs, stuck.before_recv + 40 * hook::kNsPerMs);
    EXPECT_LT(h.capture_times[0], stuck.before_finish);
  }
  ExpectRecordMatches(InputRecords(), stuck);
  // Nothing else arrives for it later (one report per event).
  EXPECT_EQ(h.Reports("touch_lag", 2, 200).size(), 1u);
  EXPECT_EQ(h.Reports("input_anr").size(), 0u);
  jpfx_channel_close(ch);
}

// The tracker's per-slot stacks are allocated by the first lag, freed when input stops, and allocated
// again by a lag after the restart: each run's stuck event gets a stack, captured (one capture per run)
// while it was stuck.
TEST_F(InputMonitorTest, StuckEventsInTwoRunsEachGetTheirOwnStack) {
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(run);
    ASSERT_EQ(h.Start(/*lag_ms=*/40, /*anr_ms=*/5000, 34), JANKPROBE_OK) << jankprobe_last_error();
    jpfx_channel* ch = jpfx_channel_open(34, JPFX_IO_BIONIC);
    ASSERT_NE(ch, nullptr);
    const uint32_t seq = static_cast<uint32_t>(run + 1);
    ASSERT_EQ(jpfx_publish_motion(ch, seq, 1, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
    jpfx_event ev{};
    Seen stuck{};
    ASSERT_TRUE(ConsumeOne(ch, &ev, &stuck.before_recv, &stuck.after_recv));
    stuck.fd = jpfx_app_fd(ch);
    stuck.seq = seq;
    stuck.consume_time = ev.consume_time;
    stuck.scripted_handle_ns = 120 * static_cast<int64_t>(hook::kNsPerMs);
    SleepUntil(stuck.after_recv + static_cast<uint64_t>(stuck.scripted_handle_ns));
    // Held until the watchdog has captured this run's stack (bounded): on a loaded host it came more than
    // 80 ms after the lag deadline, after the finish, and the report then rightly said it was not captured
    // while stuck (no record check here depends on the handle time).
    EXPECT_TRUE(h.WaitForCaptures(static_cast<size_t>(run + 1), 3000)) << "no stack captured within 3 s";
    FinishBracketed(ch, &stuck);
    const auto reports = h.Reports("touch_lag", static_cast<size_t>(run + 1), 3000);
    ASSERT_EQ(reports.size(), static_cast<size_t>(run + 1));
    const auto& r = reports[static_cast<size_t>(run)];
    EXPECT_EQ(r["event_seq"].GetUint(), seq);
    EXPECT_TRUE(r["stack_captured_while_stuck"].GetBool());
    ASSERT_TRUE(r.HasMember("stack"));
    EXPECT_EQ(r["stack"].Size(), 2u);
    {
      std::lock_guard<std::mutex> lock(h.mu);
      // One capture per run, this run's taken while its event was stuck.
      ASSERT_EQ(h.capture_times.size(), static_cast<size_t>(run + 1));
      EXPECT_GE(h.capture_times.back() + kClockBoundNs, stuck.before_recv + 40 * hook::kNsPerMs);
      EXPECT_LT(h.capture_times.back(), stuck.before_finish);
    }
    jpfx_channel_close(ch);
    h.Stop();
  }
}

TEST_F(InputMonitorTest, StillUnfinishedAtAnrMsGivesAnInputAnrRightAway) {
  ASSERT_EQ(h.Start(/*lag_ms=*/30, /*anr_ms=*/250, 33), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  ASSERT_EQ(jpfx_publish_key(ch, 5, 0, static_cast<int64_t>(hook::MonotonicNs())), 0);
  jpfx_event ev{};
  Seen s{};
  ASSERT_TRUE(ConsumeOne(ch, &ev, &s.before_recv, &s.after_recv));
  s.fd = jpfx_app_fd(ch);
  s.seq = 5;
  s.consume_time = ev.consume_time;
  // Still holding the event: the ANR report must come without a finish.
  const auto anrs = h.Reports("input_anr", 1, 3000);
  const uint64_t seen_at = hook::MonotonicNs();
  ASSERT_EQ(anrs.size(), 1u);
  EXPECT_GE(seen_at + kClockBoundNs, s.before_recv + 250 * hook::kNsPerMs);
  EXPECT_GE(anrs[0]["dur_ms"].GetDouble(), 250.0 - 1e-6);
  EXPECT_FALSE(anrs[0]["finished"].GetBool());
  EXPECT_TRUE(anrs[0]["stack_captured_while_stuck"].GetBool());
  EXPECT_EQ(h.Reports("key_lag").size(), 0u);
  FinishBracketed(ch, &s);
  const auto lags = h.Reports("key_lag", 1, 3000);
  ASSERT_EQ(lags.size(), 1u);
  EXPECT_TRUE(lags[0]["anr_reported"].GetBool());
  ExpectRecordMatches(InputRecords(), s);
  jpfx_channel_close(ch);
}

// A receiver disposed mid-gesture (its window went away) closes its channel and never finishes what it had
// read: no input_anr for that, it is counted as abandoned. An event held on an open channel still is one.
TEST_F(InputMonitorTest, AnEventOnAChannelTheAppClosedIsAbandonedNotAnAnr) {
  ASSERT_EQ(h.Start(/*lag_ms=*/30, /*anr_ms=*/250, 33), JANKPROBE_OK) << jankprobe_last_error();
  // The counters live as long as the process: this test's share is what they gain from here.
  auto counter = [](const char* key) { return std::strtoull(InputDetail("counters", key).c_str(), nullptr, 10); };
  const uint64_t anr0 = counter("anr_reports"), abandoned0 = counter("abandoned");
  jpfx_channel* gone = jpfx_channel_open(33, JPFX_IO_BIONIC);
  jpfx_channel* held = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(gone, nullptr);
  ASSERT_NE(held, nullptr);
  jpfx_event ev{};
  uint64_t before = 0, after = 0;
  ASSERT_EQ(jpfx_publish_key(gone, 7, 0, static_cast<int64_t>(hook::MonotonicNs())), 0);
  ASSERT_TRUE(ConsumeOne(gone, &ev, &before, &after));
  jpfx_app_dispose(gone);
  ASSERT_EQ(jpfx_publish_key(held, 8, 0, static_cast<int64_t>(hook::MonotonicNs())), 0);
  ASSERT_TRUE(ConsumeOne(held, &ev, &before, &after));
  // Both come due at 250 ms in the same scan or two: one report, for the held one.
  const auto anrs = h.Reports("input_anr", 1, 3000);
  ASSERT_EQ(anrs.size(), 1u);
  EXPECT_EQ(anrs[0]["event_seq"].GetInt(), 8) << "the ANR named the abandoned event";
  const uint64_t give_up = hook::MonotonicNs() + 2000 * hook::kNsPerMs;
  while (counter("abandoned") == abandoned0 && hook::MonotonicNs() < give_up) usleep(5000);
  EXPECT_EQ(counter("abandoned") - abandoned0, 1u);
  usleep(300 * 1000);  // another anr_ms: neither is reported again
  EXPECT_EQ(h.Reports("input_anr").size(), 1u);
  EXPECT_EQ(counter("anr_reports") - anr0, 1u);
  jpfx_channel_close(held);
  jpfx_channel_close(gone);
}

TEST_F(InputMonitorTest, UnknownReleaseFallsBackToFdTimingNeverGuessingFields) {
  ASSERT_EQ(h.Start(1000, 5000, /*api=*/25), JANKPROBE_OK) << jankprobe_last_error();  // 7.1: no layout
  EXPECT_EQ(InputDetail("imports", "recvfrom"), "hooked");
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  ASSERT_EQ(jpfx_publish_motion(ch, 3, 0, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
  jpfx_event ev{};
  Seen s{};
  ASSERT_TRUE(ConsumeOne(ch, &ev, &s.before_recv, &s.after_recv));
  s.fd = jpfx_app_fd(ch);
  SleepUntil(s.after_recv + 2 * hook::kNsPerMs);
  s.before_finish = hook::MonotonicNs();
  ASSERT_EQ(jpfx_finish(ch, 3, 1, ev.consume_time), 0);
  s.after_finish = hook::MonotonicNs();
  std::vector<Record> fd_records;
  for (const Record& r : InputRecords()) {
    if (r.fd == s.fd) fd_records.push_back(r);
  }
  ASSERT_EQ(fd_records.size(), 1u);
  EXPECT_EQ(fd_records[0].mode, "fd");
  EXPECT_EQ(fd_records[0].seq, -1) << "no seq may be decoded without a layout";
  EXPECT_GE(fd_records[0].ts_ns + kClockBoundNs, s.before_recv);
  EXPECT_LE(fd_records[0].ts_ns, s.after_recv + kClockBoundNs);
  EXPECT_GE(fd_records[0].ts_ns + fd_records[0].dur_ns + kClockBoundNs, s.before_finish);
  EXPECT_LE(fd_records[0].ts_ns + fd_records[0].dur_ns, s.after_finish + kClockBoundNs);
  jpfx_channel_close(ch);
}

TEST_F(InputMonitorTest, AChannelWhosePacketsNeverValidateIsFdTimed) {
  // Configured for Android 11, the channel speaks Android 13: its InputMessage-sized reads never validate.
  ASSERT_EQ(h.Start(1000, 5000, 30), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  int fd_records = 0;
  for (uint32_t seq = 1; seq <= 6; ++seq) {
    ASSERT_EQ(jpfx_publish_motion(ch, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 2), 0);
    jpfx_event ev{};
    uint64_t b, a;
    ASSERT_TRUE(ConsumeOne(ch, &ev, &b, &a));
    ASSERT_EQ(jpfx_finish(ch, seq, 1, ev.consume_time), 0);
  }
  for (const Record& r : InputRecords()) {
    EXPECT_EQ(r.mode, "fd");
    EXPECT_EQ(r.seq, -1);
    fd_records += r.fd == jpfx_app_fd(ch);
  }
  EXPECT_EQ(InputDetail("counters", "fd_mode_channels"), "1");
  // The first reads are only counted; from the switch on every read -> send is timed.
  EXPECT_GE(fd_records, 2);
  EXPECT_LE(fd_records, 6);
  jpfx_channel_close(ch);
}

TEST_F(InputMonitorTest, SwitchingInputOffAndOnWhileEventsFlow) {
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  std::atomic<bool> stop{false};
  std::mutex seen_mu;
  std::vector<Seen> seen;
  // The app and the dispatcher on their own threads; this thread flips the remote flag.
  std::thread app([&] {
    uint32_t seq = 1;
    while (!stop.load()) {
      if (jpfx_publish_motion(ch, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 1) != 0) break;
      jpfx_event ev{};
      Seen s{};
      if (!ConsumeOne(ch, &ev, &s.before_recv, &s.after_recv)) break;
      s.fd = jpfx_app_fd(ch);
      s.seq = ev.seq;
      s.before_finish = hook::MonotonicNs();
      if (jpfx_finish(ch, ev.seq, 1, ev.consume_time) != 0) break;
      s.after_finish = hook::MonotonicNs();
      uint32_t f;
      int hd;
      int64_t c;
      while (jpfx_dispatcher_receive(ch, &f, &hd, &c) != 1) {
      }
      {
        std::lock_guard<std::mutex> lock(seen_mu);
        seen.push_back(s);
      }
      ++seq;
    }
  });
  for (int i = 0; i < 20; ++i) {
    SleepUntil(hook::MonotonicNs() + 2 * hook::kNsPerMs);
    ASSERT_EQ(jankprobe_configure(Harness::Config(1000, 5000, 33, i % 2 == 1).c_str()), JANKPROBE_OK)
        << jankprobe_last_error();
  }
  SleepUntil(hook::MonotonicNs() + 5 * hook::kNsPerMs);
  stop = true;
  app.join();
  EXPECT_EQ(InputDetail("imports", "recvfrom"), "hooked");
  // Every record the monitor wrote is a real event with the right times; none is made up.
  const std::vector<Record> records = InputRecords();
  EXPECT_FALSE(records.empty());
  std::lock_guard<std::mutex> lock(seen_mu);
  EXPECT_GT(seen.size(), records.size() / 2);
  for (const Record& r : records) {
    bool matched = false;
    for (const Seen& s : seen) {
      if (s.seq == r.seq && r.fd == s.fd) {
        matched = true;
        EXPECT_GE(r.ts_ns + kClockBoundNs, s.before_recv);
        EXPECT_LE(r.ts_ns, s.after_recv + kClockBoundNs);
        EXPECT_GE(r.ts_ns + r.dur_ns + kClockBoundNs, s.before_finish);
        EXPECT_LE(r.ts_ns + r.dur_ns, s.after_finish + kClockBoundNs);
      }
    }
    EXPECT_TRUE(matched) << "record seq " << r.seq;
  }
  jpfx_channel_close(ch);
}

TEST_F(InputMonitorTest, StopWithEventsPendingLeavesNothingBehind) {
  ASSERT_EQ(h.Start(/*lag_ms=*/20, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  std::vector<jpfx_event> held;
  for (uint32_t seq = 1; seq <= 3; ++seq) {
    ASSERT_EQ(jpfx_publish_motion(ch, seq, 2, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
    jpfx_event ev{};
    uint64_t b, a;
    ASSERT_TRUE(ConsumeOne(ch, &ev, &b, &a));
    held.push_back(ev);
  }
  EXPECT_EQ(InputDetail("counters", "pending"), "3");
  jankprobe_stop();
  const size_t reports_at_stop = h.Reports("touch_lag").size();
  // Finishing after stop: the proxies are out, nothing is recorded or reported, nothing fires later.
  for (const jpfx_event& ev : held) ASSERT_EQ(jpfx_finish(ch, ev.seq, 1, ev.consume_time), 0);
  SleepUntil(hook::MonotonicNs() + 60 * hook::kNsPerMs);
  EXPECT_EQ(h.Reports("touch_lag").size(), reports_at_stop);
  // A fresh start sees a clean table.
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK);
  EXPECT_EQ(InputDetail("counters", "pending"), "0");
  jpfx_channel_close(ch);
}

}  // namespace
}  // namespace jp::input::testing
