// The input proxies' clock (InputTracker::EventNowNs): on the tracker's owner thread (the app's main thread)
// a copy of the event clock's anchor the tracker keeps in its own line (owner_clock_), elsewhere the process
// clock. What must hold: every stamp within the clock's bound of clock_gettime taken around the call; the
// owner's copy is in use (filled), refilled once its span is used up (never extrapolated past it), emptied
// by a start, and never touched by another thread's events (one writer: plain words).
//
// Its own binary: the owner's copy is process-wide state (the tracker is never destroyed).
#include <poll.h>

#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "tests/fixtures/libinput/input_channel.h"
#include "tests/input/input_harness.h"

namespace jp::input::testing {
namespace {

using hook::EventClock;
using hook::MonotonicNs;

bool ClockReadsTheCounter() { return std::strcmp(hook::ProcessEventClock().source(), "clock_gettime") != 0; }

bool SameAnchor(const EventClock::Anchor& a, const EventClock::Anchor& b) {
  return a.counter == b.counter && a.ns == b.ns && a.mult == b.mult && a.limit == b.limit;
}

// One key event read and finished on the calling thread, bracketed by clock_gettime: [before, after]
// holds the read's proxy call and the finish's. The copy as it was right after the read.
struct Round {
  uint32_t seq;
  uint64_t before, after;
  EventClock::Anchor copy_after_read;
};

bool RunRound(jpfx_channel* ch, uint32_t seq, Round* out) {
  if (jpfx_publish_key(ch, seq, 1, static_cast<int64_t>(MonotonicNs())) != 0) return false;
  pollfd p{jpfx_app_fd(ch), POLLIN, 0};
  if (poll(&p, 1, 2000) != 1) return false;
  jpfx_event ev{};
  out->seq = seq;
  out->before = MonotonicNs();
  if (jpfx_consume(ch, &ev) != 1) return false;
  out->copy_after_read = InputTracker::Get().OwnerClockForTest();
  if (jpfx_finish(ch, seq, 1, ev.consume_time) != 0) return false;
  out->after = MonotonicNs();
  // The dispatcher takes the FINISHED, as the system's would: the channel's buffer never fills.
  uint32_t finished_seq = 0;
  int handled = 0;
  int64_t consume_time = 0;
  return jpfx_dispatcher_receive(ch, &finished_seq, &handled, &consume_time) == 1 && finished_seq == seq;
}

// Each round's record: its read stamp and its finish stamp inside the round's bracket, to the bound.
void ExpectStampsInsideBrackets(const std::vector<Round>& rounds, const std::vector<Record>& records) {
  std::map<int64_t, Record> by_seq;
  for (const Record& r : records) by_seq.emplace(r.seq, r);
  for (const Round& round : rounds) {
    auto it = by_seq.find(round.seq);
    ASSERT_NE(it, by_seq.end()) << "no record for seq " << round.seq;
    const uint64_t read = it->second.ts_ns, finish = it->second.ts_ns + it->second.dur_ns;
    EXPECT_GE(read + kClockBoundNs, round.before) << "seq " << round.seq;
    EXPECT_LE(read, round.after + kClockBoundNs) << "seq " << round.seq;
    EXPECT_GE(finish + kClockBoundNs, round.before) << "seq " << round.seq;
    EXPECT_LE(finish, round.after + kClockBoundNs) << "seq " << round.seq;
  }
}

TEST(InputClock, OwnerStampsComeFromItsCopyWithinTheBoundAndTheCopyIsRefilledAfterItsSpan) {
  Harness h;
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  // A start empties the copy: the first owner read copies the anchor of the clock just calibrated.
  EXPECT_EQ(InputTracker::Get().OwnerClockForTest().limit, 0u);
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  // ~8 spans of the anchor (kReanchorNs, 50 ms), a round every ~4 ms: the copy must be refilled several
  // times, and no stamp may come from a copy older than its span.
  const uint64_t span = EventClock::kReanchorNs;
  std::vector<Round> rounds;
  const uint64_t start = MonotonicNs();
  for (uint32_t seq = 1; MonotonicNs() < start + 8 * span; ++seq) {
    Round r{};
    ASSERT_TRUE(RunRound(ch, seq, &r)) << "seq " << seq;
    rounds.push_back(r);
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  const std::vector<Record> records = InputRecords();
  ASSERT_EQ(records.size(), rounds.size());
  ExpectStampsInsideBrackets(rounds, records);
  if (!ClockReadsTheCounter()) {
    // A clock that is clock_gettime leaves nothing to copy (limit 0): every stamp is clock_gettime itself.
    for (const Round& r : rounds) EXPECT_EQ(r.copy_after_read.limit, 0u);
    jpfx_channel_close(ch);
    h.Stop();
    GTEST_SKIP() << "the event clock is clock_gettime here: " << hook::ProcessEventClock().why();
  }
  std::set<uint64_t> anchors;
  std::map<int64_t, uint64_t> read_stamp;
  for (const Record& r : records) read_stamp[r.seq] = r.ts_ns;
  // The first read teaches the tracker its owner's thread pointer (the gated path: not yet the owner's
  // way); from the second on, every read is the owner's.
  for (size_t i = 1; i < rounds.size(); ++i) {
    const Round& r = rounds[i];
    // The read was stamped on this thread (the owner): from the copy, which it filled if it was empty.
    EXPECT_NE(r.copy_after_read.limit, 0u) << "seq " << r.seq << ": the owner's read left no copy";
    anchors.insert(r.copy_after_read.ns);
    // The stamp came from this copy (or the read refilled it: then the anchor is at most the stamp), and a
    // copy is extrapolated less than its span: the stamp within [anchor, anchor + span] (+ the bound).
    const uint64_t stamp = read_stamp[r.seq];
    EXPECT_LE(r.copy_after_read.ns, stamp + kClockBoundNs) << "seq " << r.seq;
    EXPECT_LT(stamp, r.copy_after_read.ns + span + kClockBoundNs)
        << "seq " << r.seq << ": stamped from a copy past its span";
  }
  // 8 spans of rounds: at least one refill per two spans even if the process anchor was fresh each time.
  EXPECT_GE(anchors.size(), 4u) << "the owner's copy was not refilled as its spans ran out";
  jpfx_channel_close(ch);
  h.Stop();
}

// The owner's usual read (InputTracker::EventNowNs, inline in the proxies) takes the event clock's
// extrapolation from a copy (EventClock::ReadCopy) apart from its refill, so that the refill can be a rare
// exit: its value must be NowNsFrom's from the same anchor to the nanosecond, i.e. between two NowNsFrom
// reads of that anchor taken around it (the counter only moves forward on one thread). A wrong scale, shift
// or base fails by far more than the few nanoseconds between the reads.
TEST(InputClock, TheOwnersUsualReadIsTheClocksOwnExtrapolationOfItsCopy) {
  Harness h;
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(ch, nullptr);
  Round r{};
  ASSERT_TRUE(RunRound(ch, 1, &r));  // the owner (this thread) is known now
  ASSERT_TRUE(RunRound(ch, 2, &r));  // and its copy filled by its own read
  if (!ClockReadsTheCounter()) {
    jpfx_channel_close(ch);
    h.Stop();
    GTEST_SKIP() << "the event clock is clock_gettime here: " << hook::ProcessEventClock().why();
  }
  InputTracker& t = InputTracker::Get();
  int compared = 0;
  for (int i = 0; i < 2000 && compared < 200; ++i) {
    const EventClock::Anchor copy = t.OwnerClockForTest();
    EventClock::Anchor a = copy, b = copy;  // NowNsFrom's own copies of the same anchor
    const uint64_t lo = hook::ProcessEventClock().NowNsFrom(&a);
    const uint64_t owner = t.EventNowNs();
    const uint64_t hi = hook::ProcessEventClock().NowNsFrom(&b);
    // Only where all three read the one anchor: neither local copy was refilled, nor the owner's.
    if (!SameAnchor(a, copy) || !SameAnchor(b, copy) || !SameAnchor(t.OwnerClockForTest(), copy)) continue;
    ++compared;
    EXPECT_LE(lo, owner) << "read " << i;
    EXPECT_LE(owner, hi) << "read " << i;
    EXPECT_LT(hi - lo, 1000000u) << "read " << i << ": the reads were not together";
  }
  EXPECT_GE(compared, 100) << "the owner's copy was refilled under almost every read";
  jpfx_channel_close(ch);
  h.Stop();
}

TEST(InputClock, AnotherThreadsEventsLeaveTheOwnersCopyAlone) {
  Harness h;
  ASSERT_EQ(h.Start(1000, 5000, 33), JANKPROBE_OK) << jankprobe_last_error();
  jpfx_channel* mine = jpfx_channel_open(33, JPFX_IO_BIONIC);
  ASSERT_NE(mine, nullptr);
  Round first{};
  ASSERT_TRUE(RunRound(mine, 1, &first));  // the owner (this thread, the harness's main thread) is known now
  const EventClock::Anchor before = InputTracker::Get().OwnerClockForTest();
  // Another thread's events over more than two spans: with the copy in use on that thread it would be
  // refilled (written) at least once.
  std::vector<Round> rounds;
  bool ok = true;
  std::thread other([&] {
    jpfx_channel* ch = jpfx_channel_open(33, JPFX_IO_BIONIC);
    if (ch == nullptr) {
      ok = false;
      return;
    }
    const uint64_t start = MonotonicNs();
    for (uint32_t seq = 100; ok && MonotonicNs() < start + 3 * EventClock::kReanchorNs; ++seq) {
      Round r{};
      ok = RunRound(ch, seq, &r);
      if (ok) rounds.push_back(r);
      std::this_thread::sleep_for(std::chrono::milliseconds(4));
    }
    jpfx_channel_close(ch);
  });
  other.join();
  ASSERT_TRUE(ok);
  ASSERT_GE(rounds.size(), 10u);
  EXPECT_TRUE(SameAnchor(InputTracker::Get().OwnerClockForTest(), before))
      << "another thread's reads or sends wrote the owner's clock copy";
  // Their stamps (the process clock) are within the bound all the same.
  std::vector<Record> records = InputRecords();
  std::vector<Record> theirs;
  for (const Record& r : records) {
    if (r.seq >= 100) theirs.push_back(r);
  }
  ASSERT_EQ(theirs.size(), rounds.size());
  ExpectStampsInsideBrackets(rounds, theirs);
  jpfx_channel_close(mine);
  h.Stop();
}

}  // namespace
}  // namespace jp::input::testing
