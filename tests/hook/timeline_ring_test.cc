// The in-memory ring: round trips, wrap-around accounting, cursor reads, torn/in-flight slots, and
// several producers against a concurrent reader with exact counts.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "hook/timeline.h"
#include "hook/timeline_layout.h"

namespace jp::hook {

// A writer's steps one at a time (Timeline's friend): take a ticket, look at its slot, then write (or skip,
// as AppendEncoded does with a held slot), so a test can interleave writers as a preemption would.
class TimelineRingPeer {
 public:
  struct Writer {
    uint64_t ticket = 0;
    uint64_t seq = 0;
    uint64_t skips_before = 0;
  };
  static Writer Take(Timeline& t) {
    Writer w;
    w.ticket = __atomic_fetch_add(&t.header_->head, 1, __ATOMIC_RELAXED);
    return w;
  }
  static bool Look(const Timeline& t, Writer* w) {
    w->skips_before = t.LookAtSlot(t.ring_[w->ticket & t.mask_], w->ticket, &w->seq);
    return w->skips_before != Timeline::kSlotHeld;
  }
  // Returns the ticket, or kNotCommitted when the look found the slot held.
  static uint64_t Finish(Timeline& t, const Writer& w, const Event& e) {
    if (w.skips_before == Timeline::kSlotHeld) return t.Skip(w.ticket, w.seq);
    Timeline::WriteSlot(t.ring_[w.ticket & t.mask_], w.ticket, w.skips_before, EncodePayload(e));
    return w.ticket;
  }
};

namespace {

std::unique_ptr<Timeline> MakeTimeline(uint32_t capacity) {
  Timeline::Options o;
  o.capacity = capacity;
  std::string error;
  auto t = Timeline::Create(o, &error);
  EXPECT_TRUE(t) << error;
  return t;
}

layout::Record* RingOf(Timeline& t) {
  auto* h = static_cast<layout::Header*>(const_cast<void*>(t.region()));
  return reinterpret_cast<layout::Record*>(reinterpret_cast<unsigned char*>(h) + h->ring_offset);
}

// Every field of an event derived from (producer, seq), so a torn or misplaced record cannot pass.
Event Pattern(uint32_t producer, uint64_t seq) {
  Event e;
  e.ts_ns = seq;
  e.dur_ns = seq * 2654435761u ^ producer;
  e.tid = producer;
  e.kind = static_cast<EventKind>(1 + (seq + producer) % (kEventKindCount - 1));
  e.name = static_cast<uint16_t>(1 + (seq * 7 + producer) % 1000);
  e.args[0] = EventArg::Int(static_cast<uint16_t>(producer + 1), static_cast<int64_t>(~seq));
  e.args[1] = EventArg::Double(static_cast<uint16_t>((seq & 0xFFF) + 1), static_cast<double>(seq) * 0.5);
  e.args[2] = EventArg::String(static_cast<uint16_t>(producer + 2), static_cast<uint16_t>(seq & 0x3FFF));
  e.args[3] = EventArg::Int(static_cast<uint16_t>((seq >> 12 & 0xFFF) + 1), static_cast<int64_t>(seq ^ 0x5A5A5A5A));
  return e;
}

bool MatchesPattern(const Event& e) {
  Event want = Pattern(e.tid, e.ts_ns);
  return e.dur_ns == want.dur_ns && e.kind == want.kind && e.name == want.name &&
         e.args[0].key == want.args[0].key && e.args[0].type == ArgType::kInt &&
         e.args[0].bits == want.args[0].bits && e.args[1].key == want.args[1].key &&
         e.args[1].type == ArgType::kDouble && e.args[1].bits == want.args[1].bits &&
         e.args[2].key == want.args[2].key && e.args[2].type == ArgType::kString &&
         e.args[2].bits == want.args[2].bits && e.args[3].key == want.args[3].key &&
         e.args[3].type == ArgType::kInt && e.args[3].bits == want.args[3].bits;
}

TEST(TimelineRing, RoundTripsEveryField) {
  auto t = MakeTimeline(64);
  uint16_t name = t->Intern("com.example.Prefetch");
  uint16_t key = t->Intern("what");
  Event e;
  e.ts_ns = 123456789012345ull;
  e.dur_ns = 870000000ull;
  e.tid = 4242;
  e.kind = EventKind::kIdleHandler;
  e.name = name;
  e.args[0] = EventArg::String(key, t->Intern("prefetch"));
  e.args[1] = EventArg::Double(t->Intern("ratio"), -2.75);
  EXPECT_EQ(t->Append(e), 0u);
  e.args[0] = EventArg::Int(key, -5);
  e.args[1] = EventArg();
  EXPECT_EQ(t->Append(e), 1u);

  TimelineRead r = t->Snapshot();
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.next_ticket, 2u);
  const Event& a = r.events[0];
  EXPECT_EQ(a.ticket, 0u);
  EXPECT_EQ(a.ts_ns, 123456789012345ull);
  EXPECT_EQ(a.dur_ns, 870000000ull);
  EXPECT_EQ(a.tid, 4242u);
  EXPECT_EQ(a.kind, EventKind::kIdleHandler);
  EXPECT_EQ(t->strings().Lookup(a.name), "com.example.Prefetch");
  EXPECT_EQ(a.args[0].type, ArgType::kString);
  EXPECT_EQ(t->strings().Lookup(a.args[0].key), "what");
  EXPECT_EQ(t->strings().Lookup(a.args[0].as_string()), "prefetch");
  EXPECT_EQ(a.args[1].type, ArgType::kDouble);
  EXPECT_EQ(a.args[1].as_double(), -2.75);
  const Event& b = r.events[1];
  EXPECT_EQ(b.ticket, 1u);
  EXPECT_EQ(b.args[0].type, ArgType::kInt);
  EXPECT_EQ(b.args[0].as_int(), -5);
  EXPECT_EQ(b.args[1].type, ArgType::kNone);
  EXPECT_STREQ(EventKindName(b.kind), "idle.handler");
}

TEST(TimelineRing, WrapOverwritesOldestAndCountsThemLost) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 40; ++i) t->Append(Pattern(1, i));
  EXPECT_EQ(t->appended(), 40u);
  TimelineRead r = t->Snapshot();
  ASSERT_EQ(r.events.size(), 16u);
  EXPECT_EQ(r.lost, 24u);
  EXPECT_EQ(r.next_ticket, 40u);
  for (size_t i = 0; i < r.events.size(); ++i) {
    EXPECT_EQ(r.events[i].ticket, 24 + i);
    EXPECT_EQ(r.events[i].ts_ns, 24 + i);
    EXPECT_TRUE(MatchesPattern(r.events[i]));
  }
}

TEST(TimelineRing, CursorReadsReturnOnlyNewRecords) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 5; ++i) t->Append(Pattern(1, i));
  TimelineRead first = t->Read(0);
  EXPECT_EQ(first.events.size(), 5u);
  for (uint64_t i = 5; i < 12; ++i) t->Append(Pattern(1, i));
  TimelineRead second = t->Read(first.next_ticket);
  ASSERT_EQ(second.events.size(), 7u);
  EXPECT_EQ(second.events.front().ticket, 5u);
  EXPECT_EQ(second.lost, 0u);
  // A reader that fell a lap behind gets what is left and an exact loss count.
  for (uint64_t i = 12; i < 50; ++i) t->Append(Pattern(1, i));
  TimelineRead third = t->Read(second.next_ticket);
  EXPECT_EQ(third.events.size(), 16u);
  EXPECT_EQ(third.lost, 50u - 12u - 16u);
  EXPECT_EQ(third.events.front().ticket, 34u);
  EXPECT_EQ(t->Read(third.next_ticket).events.size(), 0u);
}

TEST(TimelineRing, RejectsBadOptionsWithAReason) {
  Timeline::Options o;
  o.capacity = 1000;
  std::string error;
  EXPECT_FALSE(Timeline::Create(o, &error));
  EXPECT_NE(error.find("power of two"), std::string::npos) << error;
  o.capacity = 1024;
  o.intern_slots = 100;
  EXPECT_FALSE(Timeline::Create(o, &error));
  EXPECT_NE(error.find("string table"), std::string::npos) << error;
}

TEST(TimelineRing, CorruptedSlotIsCountedTornNotReturned) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 10; ++i) t->Append(Pattern(1, i));
  RingOf(*t)[4].dur_ns ^= 1;  // what two lapping writers interleaving would leave: data not matching the sum
  TimelineRead r = t->Snapshot();
  EXPECT_EQ(r.events.size(), 9u);
  EXPECT_EQ(r.torn, 1u);
  EXPECT_EQ(r.lost, 1u);
  for (const Event& e : r.events) {
    EXPECT_NE(e.ticket, 4u);
    EXPECT_TRUE(MatchesPattern(e));
  }
}

// What the checksum guarantees, not just makes likely: a change confined to one payload word is always
// caught (every bit of every word, here), and so is the same damage to both words of one of its two-word
// lanes (ts/dur, arg 0/1, arg 2/3, ids/keys), which a plain xor of the words would miss.
TEST(TimelineRing, EverySingleWordAndSameLaneDamageIsTorn) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 10; ++i) t->Append(Pattern(1, i));
  layout::Record& r = RingOf(*t)[5];
  uint64_t* words[8] = {&r.ts_ns, &r.dur_ns, &r.arg_value[0], &r.arg_value[1],
                        &r.arg_value[2], &r.arg_value[3], &r.ids, &r.keys};
  auto expect_torn = [&](const char* what, int word, uint64_t damage) {
    TimelineRead read = t->Snapshot();
    EXPECT_EQ(read.torn, 1u) << what << " word " << word << " damage " << std::hex << damage;
    EXPECT_EQ(read.events.size(), 9u);
  };
  for (int w = 0; w < 8; ++w) {
    for (int bit = 0; bit < 64; ++bit) {
      *words[w] ^= uint64_t{1} << bit;
      expect_torn("one bit of", w, uint64_t{1} << bit);
      *words[w] ^= uint64_t{1} << bit;
    }
  }
  for (int lane = 0; lane < 4; ++lane) {
    for (int byte = 0; byte < 8; ++byte) {
      for (const uint64_t value : {0x01ull, 0x80ull, 0xFFull, 0x5Aull}) {
        const uint64_t damage = value << (8 * byte);
        *words[2 * lane] ^= damage;
        *words[2 * lane + 1] ^= damage;
        expect_torn("same damage to lane", lane, damage);
        *words[2 * lane] ^= damage;
        *words[2 * lane + 1] ^= damage;
      }
    }
  }
  EXPECT_EQ(t->Snapshot().torn, 0u);  // restored
}

TEST(TimelineRing, ReadStopsBeforeAnUncommittedTicket) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 10; ++i) t->Append(Pattern(1, i));
  layout::Record& r6 = RingOf(*t)[6];
  const uint64_t committed = r6.seq;
  r6.seq = 2 * 6 + 1;  // as if the writer of ticket 6 were between its claim and its commit
  TimelineRead r = t->Snapshot();
  EXPECT_EQ(r.events.size(), 6u);
  EXPECT_EQ(r.next_ticket, 6u);
  EXPECT_EQ(r.lost, 0u);
  r6.seq = committed;  // the writer commits: the next read resumes at ticket 6
  TimelineRead rest = t->Read(r.next_ticket);
  ASSERT_EQ(rest.events.size(), 4u);
  EXPECT_EQ(rest.events.front().ticket, 6u);
}

TEST(TimelineRing, WriterFindingItsSlotHeldDropsItsRecordAndReadersGoOn) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 10; ++i) t->Append(Pattern(1, i));
  // Slot 3: an older writer stalled mid-record (odd seq of ticket 3). Slot 5: a later lap already there.
  RingOf(*t)[3].seq = 2 * 3 + 1;
  RingOf(*t)[5].seq = 2 * (5 + 16 * 4) + 2;
  uint64_t dropped_tickets = 0;
  for (uint64_t i = 10; i < 22; ++i) {
    if (t->Append(Pattern(1, i)) == Timeline::kNotCommitted) ++dropped_tickets;
  }
  EXPECT_EQ(dropped_tickets, 2u);  // tickets 19 (slot 3) and 21 (slot 5)
  EXPECT_EQ(t->dropped(), 2u);
  TimelineRead r = t->Snapshot();
  // Tickets 0..5 were lapped; 19 and 21 were dropped; the reader does not wait for either.
  EXPECT_EQ(r.next_ticket, 22u);
  EXPECT_EQ(r.lost, 6u + 2u);
  ASSERT_EQ(r.events.size(), 14u);
  for (const Event& e : r.events) {
    EXPECT_TRUE(e.ticket != 19 && e.ticket != 21);
    EXPECT_EQ(e.ts_ns, e.ticket);
    EXPECT_TRUE(MatchesPattern(e));
  }
}

// A writer that took its ticket and was then preempted for several laps before writing anything leaves no
// mark in its slot (the slot still shows the previous lap's commit). The next laps' writers must not take
// that slot (they skip their tickets, counted and announced), and once the stalled writer commits the
// slot must come back into use: the skip count shows every ticket between was skipped.
TEST(TimelineRing, SlotOfAWriterStalledForLapsIsSkippedThenReused) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 20; ++i) t->Append(Pattern(1, i));
  // Ticket 19 (slot 3) "taken but not written yet": the slot shows ticket 3's commit again.
  layout::Record& r3 = RingOf(*t)[3];
  const layout::Record written19 = r3;
  r3.seq = 2 * 3 + 2;
  constexpr uint64_t kStalledLaps = 6;  // more laps than any fixed look-back would cover
  uint64_t next = 20;
  std::vector<uint64_t> dropped;
  for (; next < 20 + 16 * kStalledLaps; ++next) {
    if (t->Append(Pattern(1, next)) == Timeline::kNotCommitted) dropped.push_back(next);
  }
  ASSERT_EQ(dropped.size(), kStalledLaps);
  for (uint64_t lap = 0; lap < kStalledLaps; ++lap) EXPECT_EQ(dropped[lap], 35 + 16 * lap);
  EXPECT_EQ(t->dropped(), kStalledLaps);
  // Readers do not wait for the skipped tickets; ticket 19 is a lap old by now and counted lost.
  TimelineRead mid = t->Snapshot();
  EXPECT_EQ(mid.next_ticket, next);
  EXPECT_EQ(mid.events.size(), 15u);  // the last lap minus its skipped ticket
  for (const Event& e : mid.events) EXPECT_TRUE(MatchesPattern(e) && e.ts_ns == e.ticket);

  r3 = written19;  // the stalled writer commits at last
  const uint64_t resumed_at = next;
  for (; next < resumed_at + 3 * 16; ++next) {
    EXPECT_EQ(t->Append(Pattern(1, next)), next) << "slot 3 must be usable again";
  }
  EXPECT_EQ(t->dropped(), kStalledLaps);
  TimelineRead r = t->Snapshot();
  EXPECT_EQ(r.next_ticket, next);
  ASSERT_EQ(r.events.size(), 16u);
  EXPECT_EQ(r.lost, next - 16);
  for (const Event& e : r.events) EXPECT_TRUE(MatchesPattern(e) && e.ts_ns == e.ticket);
}

// Two writers of one slot, a lap apart, both stalled after taking their tickets (A: 35, B: 51, slot 3 of
// 16), while a third (C: 67) laps them and skips (the slot shows ticket 19's commit, and 35 and 51 are not
// counted skipped). Then B looks, then A, and only then do both write. The slot is A's (it shows the lap
// before A's), so B must find it held: ticket 35 is on its way. C's skip must not stand in for A's in B's
// count of skipped tickets between 19 and 51 (C's is a skip of a later lap). Were it counted so, B and A
// would both write the slot; whichever commits last leaves a skip count one off the slot's record, and the
// slot would stay held for good: every later lap drops its ticket (CI's "15 of 16" after one more lap).
void TwoStalledWritersOfOneSlot(bool a_commits_first) {
  auto t = MakeTimeline(16);
  uint64_t next = 0;
  for (; next < 35; ++next) t->Append(Pattern(1, next));
  TimelineRingPeer::Writer a = TimelineRingPeer::Take(*t);
  ASSERT_EQ(a.ticket, 35u);
  for (next = 36; next < 51; ++next) t->Append(Pattern(1, next));
  TimelineRingPeer::Writer b = TimelineRingPeer::Take(*t);
  ASSERT_EQ(b.ticket, 51u);
  for (next = 52; next < 67; ++next) t->Append(Pattern(1, next));
  EXPECT_EQ(t->Append(Pattern(1, 67)), Timeline::kNotCommitted) << "C: 35 and 51 are on their way";
  next = 68;
  EXPECT_FALSE(TimelineRingPeer::Look(*t, &b)) << "B took the slot while A (35) is on its way";
  EXPECT_TRUE(TimelineRingPeer::Look(*t, &a)) << "A: the slot shows the lap before its own";
  if (a_commits_first) {
    EXPECT_EQ(TimelineRingPeer::Finish(*t, a, Pattern(2, 35)), 35u);
    TimelineRingPeer::Finish(*t, b, Pattern(3, 51));
  } else {
    TimelineRingPeer::Finish(*t, b, Pattern(3, 51));
    EXPECT_EQ(TimelineRingPeer::Finish(*t, a, Pattern(2, 35)), 35u);
  }
  EXPECT_EQ(t->dropped(), 2u) << "C and B";
  // Every writer is done: from now on every lap by this thread alone fills the ring, slot 3 included.
  const uint64_t resumed_at = next;
  for (; next < resumed_at + 3 * 16; ++next) {
    EXPECT_EQ(t->Append(Pattern(1, next)), next) << "slot " << (next & 15);
  }
  const uint64_t lap_start = next - 16;
  TimelineRead r = t->Snapshot();
  EXPECT_EQ(r.torn, 0u);
  ASSERT_EQ(r.events.size(), 16u) << "a slot stayed held";
  for (size_t i = 0; i < r.events.size(); ++i) {
    EXPECT_EQ(r.events[i].ticket, lap_start + i);
    EXPECT_TRUE(MatchesPattern(r.events[i]) && r.events[i].ts_ns == r.events[i].ticket);
  }
}

TEST(TimelineRing, WriterLappedWhileStalledDoesNotTakeTheSlotOfAnOlderStalledWriter) {
  {
    SCOPED_TRACE("A commits first");
    TwoStalledWritersOfOneSlot(true);
  }
  SCOPED_TRACE("B commits first");
  TwoStalledWritersOfOneSlot(false);
}

// A writer of the next lap that took its slot's ticket but has not stored its record (killed there, or
// not scheduled yet) must make a reader drop what it copied from that slot: nothing marks the slot, the
// head does. Here the head is moved by hand past ticket 4's lap.
TEST(TimelineRing, ReaderDropsASlotWhoseNextLapTicketIsTaken) {
  auto t = MakeTimeline(16);
  for (uint64_t i = 0; i < 16; ++i) t->Append(Pattern(1, i));
  TimelineRead all = t->Read(4);
  EXPECT_EQ(all.events.size(), 12u);
  auto* h = static_cast<layout::Header*>(const_cast<void*>(t->region()));
  h->head = 21;  // tickets 16..20 taken, none written: slots 0..4 show the previous lap
  TimelineRead r = t->Read(4);
  EXPECT_EQ(r.next_ticket, 16u) << "stops at the first ticket not committed";
  EXPECT_EQ(r.lost, 1u) << "ticket 4 may be half overwritten";
  ASSERT_EQ(r.events.size(), 11u);
  EXPECT_EQ(r.events.front().ticket, 5u);
}

// Several producers, one reader reading as they go. Every record read must be intact, each producer's
// records must come back in its own order, and appended == read + lost exactly.
void RunProducersAgainstReader(uint32_t capacity, int producers, uint64_t per_producer) {
  auto t = MakeTimeline(capacity);
  std::atomic<int> running{producers};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (uint64_t i = 0; i < per_producer; ++i) t->Append(Pattern(static_cast<uint32_t>(p + 1), i));
      // (An append dropped because its writer was lapped while preempted is counted lost by readers.)
      running.fetch_sub(1);
    });
  }
  uint64_t cursor = 0, read = 0, lost = 0, torn = 0, snapshots = 0;
  std::vector<int64_t> last_seq(producers + 1, -1);
  std::vector<uint64_t> per_producer_read(producers + 1, 0);
  auto consume = [&](const TimelineRead& r) {
    uint64_t prev_ticket = 0;
    for (size_t i = 0; i < r.events.size(); ++i) {
      const Event& e = r.events[i];
      ASSERT_TRUE(MatchesPattern(e)) << "torn record at ticket " << e.ticket;
      ASSERT_GE(e.tid, 1u);
      ASSERT_LE(e.tid, static_cast<uint32_t>(producers));
      if (i > 0) {
        ASSERT_GT(e.ticket, prev_ticket);
      }
      prev_ticket = e.ticket;
      ASSERT_GT(static_cast<int64_t>(e.ts_ns), last_seq[e.tid]) << "producer order broken";
      last_seq[e.tid] = static_cast<int64_t>(e.ts_ns);
      ++per_producer_read[e.tid];
    }
    read += r.events.size();
    lost += r.lost;
    torn += r.torn;
    cursor = r.next_ticket;
  };
  while (running.load() > 0) {
    consume(t->Read(cursor));
    // A full snapshot now and then, taken while writers run: it must be consistent on its own.
    if (++snapshots % 16 == 0) {
      TimelineRead s = t->Snapshot();
      for (size_t i = 0; i < s.events.size(); ++i) {
        ASSERT_TRUE(MatchesPattern(s.events[i]));
        if (i > 0) {
          ASSERT_GT(s.events[i].ticket, s.events[i - 1].ticket);
        }
      }
      EXPECT_LE(s.events.size(), capacity);
      torn += s.torn;
    }
    if (::testing::Test::HasFatalFailure()) break;
  }
  for (auto& th : threads) th.join();
  consume(t->Read(cursor));
  const uint64_t appended = uint64_t(producers) * per_producer;
  EXPECT_EQ(t->appended(), appended);
  EXPECT_EQ(cursor, appended);
  EXPECT_EQ(read + lost, appended) << "read " << read << " lost " << lost;
  EXPECT_EQ(torn, 0u) << "live writers never leave a torn record (two writers in one slot do)";
  // After the writers stopped, the whole last ring is readable, except appends dropped because their slot
  // was held. At most producers - 1 of them, by construction: a ticket x of the last lap is dropped only
  // if, while x's writer looked, a ticket y < x of the same slot (so taken before the last lap) was still
  // on its way (not committed, or its skip not counted yet) on another thread Y. Y's next ticket comes
  // after y is done, so after x's look began, so after x was taken: it is of the last lap itself and can
  // hold no slot of a later last-lap ticket. Each thread is blamed for at most one drop; and the writer
  // whose dropping look began first has no blame (its earlier tickets were done before it took its own),
  // so with that look's thread out, at most producers - 1 are blamed. A writer stalled twice in the lap
  // before the last costs one drop, not two: its second ticket is already in the last lap. Anything more
  // means a slot stays held after its writers are done (806f328's failure: two stalled writers of one
  // slot both took it, see WriterLappedWhileStalledDoesNotTakeTheSlotOfAnOlderStalledWriter).
  TimelineRead last = t->Snapshot();
  EXPECT_LE(last.events.size(), capacity);
  EXPECT_GE(last.events.size(), capacity - static_cast<uint64_t>(producers - 1));
  EXPECT_EQ(last.events.size() + last.lost, appended);
  EXPECT_EQ(last.torn, 0u);
  uint64_t sum = 0;
  for (int p = 1; p <= producers; ++p) sum += per_producer_read[p];
  EXPECT_EQ(sum, read);
  // No slot stays held: one more lap appended by this thread alone (nobody can be on their way now) fills
  // the whole ring with intact records, in ticket order.
  for (uint64_t i = 0; i < capacity; ++i) {
    ASSERT_EQ(t->Append(Pattern(1, per_producer + i)), appended + i)
        << "slot " << ((appended + i) % capacity) << " held";
  }
  TimelineRead full = t->Snapshot();
  ASSERT_EQ(full.events.size(), static_cast<size_t>(capacity)) << "a slot never came back";
  for (size_t i = 0; i < full.events.size(); ++i) {
    ASSERT_TRUE(MatchesPattern(full.events[i]));
    EXPECT_EQ(full.events[i].ticket, appended + i);
  }
}

TEST(TimelineRing, ProducersAndReaderSmallRingHeavyLoss) { RunProducersAgainstReader(64, 3, 1000000); }
TEST(TimelineRing, ProducersAndReaderDefaultRing) { RunProducersAgainstReader(8192, 2, 1000000); }
// More producers than cores on the smallest ring: writers are preempted mid-record for whole laps, so
// slots get skipped and must come back (the final snapshot must hold a full ring).
TEST(TimelineRing, ProducersAndReaderTinyRingPreempted) { RunProducersAgainstReader(16, 4, 300000); }

}  // namespace
}  // namespace jp::hook
