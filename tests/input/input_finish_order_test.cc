// Which way the main thread's events go, end to end against the host libinput.so: a batch of events of
// one channel in flight at once (read for one frame, finished after it, as InputConsumer and the demo do)
// takes the tracker's owner fast path for every read and every FINISHED, whatever the order of finishing,
// up to PendingEvents::kLanes of them (consecutive seqs) or two of every other seq; more than that in
// flight takes the general path for some, and still loses and confuses nothing. The counters
// owner_general_reads / owner_general_sends count the owner's passes that left the fast path; every
// event's record is checked against the brackets the test took around its read and its finish.
// (A ring that wraps no longer matters here: since session 9 the fast path refreshes the producer's cached
// tail itself, input_drain_test TheOwnersFinishedStayOnTheFastPathAcrossRingWraps.)
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "input/input_tracker.h"
#include "input/pending_events.h"
#include "tests/fixtures/libinput/input_channel.h"
#include "tests/input/input_harness.h"

namespace jp::input::testing {
namespace {

uint64_t Counter(const char* key) { return std::stoull(InputDetail("counters", key)); }

struct Brackets {
  uint32_t seq = 0;
  uint64_t before_read = 0, after_read = 0, before_finish = 0, after_finish = 0;
};

// How a batch is finished: the order of its events (indices into the batch).
enum class Order { kInOrder, kReversed, kOddsFirst };
std::vector<size_t> FinishOrder(size_t n, Order order) {
  std::vector<size_t> o(n);
  for (size_t i = 0; i < n; ++i) o[i] = i;
  if (order == Order::kReversed) std::reverse(o.begin(), o.end());
  if (order == Order::kOddsFirst) std::stable_partition(o.begin(), o.end(), [](size_t i) { return i % 2 == 1; });
  return o;
}

class InputFinishOrderTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    // lag_ms 60 s: no lag deadline fires during a test (a lag is not the fast path's business).
    ASSERT_EQ(h.Start(60000, 600000, GetParam()), JANKPROBE_OK) << jankprobe_last_error();
    ch = jpfx_channel_open(GetParam(), JPFX_IO_BIONIC);
    ASSERT_NE(ch, nullptr);
    fd = jpfx_app_fd(ch);
    // The first event of a channel (and of the process: the owner's thread pointer is learnt there)
    // takes its own ways in; one round trip first, so that the batches below see a known channel.
    ASSERT_NO_FATAL_FAILURE(Batch({next_seq++}, Order::kInOrder, nullptr, nullptr));
  }
  void TearDown() override {
    if (ch) jpfx_channel_close(ch);
    h.Stop();
  }

  // Publishes the seqs (the dispatcher's side, not counted), reads them all, then finishes them in
  // `order`, then lets the dispatcher read the FINISHED signals. *general_reads / *general_sends: how many
  // of the app's reads and FINISHED sends left the owner's fast path.
  void Batch(const std::vector<uint32_t>& seqs, Order order, uint64_t* general_reads, uint64_t* general_sends) {
    for (const uint32_t seq : seqs) {
      ASSERT_EQ(jpfx_publish_motion(ch, seq, seq == 1 ? 0 : 2, static_cast<int64_t>(hook::MonotonicNs()), 1), 0);
    }
    std::vector<Brackets> b(seqs.size());
    std::vector<int64_t> consume(seqs.size());
    const uint64_t reads_before = Counter("owner_general_reads");
    for (size_t i = 0; i < seqs.size(); ++i) {
      jpfx_event ev{};
      b[i].seq = seqs[i];
      b[i].before_read = hook::MonotonicNs();
      ASSERT_EQ(jpfx_consume(ch, &ev), 1);
      b[i].after_read = hook::MonotonicNs();
      ASSERT_EQ(ev.seq, seqs[i]);
      consume[i] = ev.consume_time;
    }
    const uint64_t reads_after = Counter("owner_general_reads");
    const uint64_t sends_before = Counter("owner_general_sends");
    for (const size_t i : FinishOrder(seqs.size(), order)) {
      b[i].before_finish = hook::MonotonicNs();
      ASSERT_EQ(jpfx_finish(ch, seqs[i], 1, consume[i]), 0);
      b[i].after_finish = hook::MonotonicNs();
    }
    const uint64_t sends_after = Counter("owner_general_sends");
    for (size_t i = 0; i < seqs.size(); ++i) {
      uint32_t seq = 0;
      int handled = 0;
      int64_t consume_time = 0;
      ASSERT_EQ(jpfx_dispatcher_receive(ch, &seq, &handled, &consume_time), 1);
    }
    if (general_reads) *general_reads = reads_after - reads_before;
    if (general_sends) *general_sends = sends_after - sends_before;
    done.insert(done.end(), b.begin(), b.end());
  }

  // Every event of the test has exactly one record, with its read and finish inside their brackets, and
  // nothing is pending or unmatched.
  void ExpectRecords() {
    const std::vector<Record> records = InputRecords();
    for (const Brackets& b : done) {
      int n = 0;
      for (const Record& r : records) {
        if (r.fd != fd || r.seq != static_cast<int64_t>(b.seq)) continue;
        ++n;
        EXPECT_GE(r.ts_ns + kClockBoundNs, b.before_read) << "seq " << b.seq;
        EXPECT_LE(r.ts_ns, b.after_read + kClockBoundNs) << "seq " << b.seq;
        EXPECT_GE(r.ts_ns + r.dur_ns + 2 * kClockBoundNs, b.before_finish) << "seq " << b.seq;
        EXPECT_LE(r.ts_ns + r.dur_ns, b.after_finish + 2 * kClockBoundNs) << "seq " << b.seq;
      }
      EXPECT_EQ(n, 1) << "seq " << b.seq;
    }
    EXPECT_EQ(Counter("pending"), 0u);
    EXPECT_EQ(Counter("unmatched_finished"), 0u);
  }

  std::vector<uint32_t> Seqs(size_t n, uint32_t step = 1) {
    std::vector<uint32_t> s;
    for (size_t i = 0; i < n; ++i) {
      s.push_back(next_seq);
      next_seq += step;
    }
    return s;
  }

  Harness h;
  jpfx_channel* ch = nullptr;
  int fd = -1;
  uint32_t next_seq = 1;
  std::vector<Brackets> done;
};

TEST_P(InputFinishOrderTest, BatchesUpToTheLanesTakeTheFastPathInEveryFinishOrder) {
  // Batch sizes from one to every lane; on the demo's layout (34) more of them and a third order, on the
  // layouts with the seq in the body (28, 30: the fast read path reads it there) the two ends (the
  // ring's room, see the file's comment, does not allow everything everywhere).
  const std::vector<size_t> sizes = GetParam() == 34 ? std::vector<size_t>{1, 2, 3, 5, PendingEvents::kLanes}
                                                     : std::vector<size_t>{2, PendingEvents::kLanes};
  for (const size_t n : sizes) {
    for (const Order order : {Order::kInOrder, Order::kReversed, Order::kOddsFirst}) {
      if ((n < 3 || GetParam() != 34) && order == Order::kOddsFirst) continue;
      uint64_t reads = ~0ull, sends = ~0ull;
      ASSERT_NO_FATAL_FAILURE(Batch(Seqs(n), order, &reads, &sends));
      EXPECT_EQ(reads, 0u) << n << " in flight, order " << static_cast<int>(order);
      EXPECT_EQ(sends, 0u) << n << " in flight, order " << static_cast<int>(order);
    }
  }
  ExpectRecords();
}

INSTANTIATE_TEST_SUITE_P(Layouts, InputFinishOrderTest, ::testing::Values(28, 30, 34),
                         [](const ::testing::TestParamInfo<int>& info) { return "api" + std::to_string(info.param); });

// One layout for the rest (the ring's room is shared by the whole binary).
class InputFinishOrderApi34Test : public InputFinishOrderTest {};

TEST_P(InputFinishOrderApi34Test, EverySecondSeqTwoInFlightTakeTheFastPath) {
  // Another window gets the same stream: the dispatcher numbers events across its channels, so this
  // channel sees every other seq.
  for (const Order order : {Order::kInOrder, Order::kReversed}) {
    uint64_t reads = ~0ull, sends = ~0ull;
    ASSERT_NO_FATAL_FAILURE(Batch(Seqs(2, 2), order, &reads, &sends));
    EXPECT_EQ(reads, 0u);
    EXPECT_EQ(sends, 0u);
  }
  ExpectRecords();
}

TEST_P(InputFinishOrderApi34Test, MoreInFlightThanLanesTakeTheGeneralPathAndLoseNothing) {
  // kLanes + 2 in flight: the last two find their lanes taken (read the general way) and their FINISHED
  // search; the order of finishing makes no difference to the records.
  const size_t n = PendingEvents::kLanes + 2;
  for (const Order order : {Order::kInOrder, Order::kReversed}) {
    uint64_t reads = 0, sends = 0;
    ASSERT_NO_FATAL_FAILURE(Batch(Seqs(n), order, &reads, &sends));
    EXPECT_EQ(reads, 2u) << static_cast<int>(order);
    EXPECT_EQ(sends, 2u) << static_cast<int>(order);
  }
  ExpectRecords();
}

INSTANTIATE_TEST_SUITE_P(Layout, InputFinishOrderApi34Test, ::testing::Values(34),
                         [](const ::testing::TestParamInfo<int>& info) { return "api" + std::to_string(info.param); });

}  // namespace
}  // namespace jp::input::testing
