// The file-backed timeline: what a previous run left is read back (also after SIGKILL at random moments,
// with ground truth from the killed child), and corrupt or foreign files are rejected and replaced.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "hook/clock.h"
#include "hook/timeline.h"
#include "hook/timeline_layout.h"

namespace jp::hook {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/jp_timeline_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {  // the tests only create plain files in it
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlink(File(e->d_name).c_str());
      }
      closedir(d);
    }
    if (rmdir(path_.c_str()) != 0) ADD_FAILURE() << "cannot remove " << path_;
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

Timeline::Options SmallOptions(uint32_t capacity = 64) {
  Timeline::Options o;
  o.capacity = capacity;
  o.intern_slots = 64;
  o.arena_bytes = 4096;
  return o;
}

// Each event is derived from (writer, seq, name id) so a recovered record can be checked on its own.
Event Pattern(uint32_t writer, uint64_t seq, uint16_t name) {
  Event e;
  e.ts_ns = seq;
  e.dur_ns = (seq * 0x9E3779B97F4A7C15ull) ^ writer;
  e.tid = writer;
  e.kind = EventKind::kLooperMessage;
  e.name = name;
  e.args[0] = EventArg::Int(7, static_cast<int64_t>(seq * 3 + writer));
  e.args[1] = EventArg::String(9, name);
  e.args[3] = EventArg::Double(11, static_cast<double>(seq) / 4);
  return e;
}

bool Intact(const Event& e) {
  Event want = Pattern(e.tid, e.ts_ns, e.name);
  return e.dur_ns == want.dur_ns && e.kind == want.kind && e.args[0].bits == want.args[0].bits &&
         e.args[0].type == ArgType::kInt && e.args[1].bits == want.args[1].bits &&
         e.args[1].type == ArgType::kString && e.args[2].type == ArgType::kNone &&
         e.args[3].bits == want.args[3].bits && e.args[3].type == ArgType::kDouble;
}

std::string NameText(int i) { return "com.example.Handler$" + std::to_string(i); }

// Writes a valid file holding `count` events and returns the run's timeline object already destroyed.
void WriteValidFile(const std::string& path, uint64_t count) {
  std::string error;
  auto t = Timeline::Open(path, SmallOptions(), &error);
  ASSERT_TRUE(t) << error;
  uint16_t names[4];
  for (int i = 0; i < 4; ++i) names[i] = t->Intern(NameText(i));
  for (uint64_t i = 0; i < count; ++i) t->Append(Pattern(1, i, names[i % 4]));
}

TEST(TimelineFile, NextOpenSeesThePreviousRun) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  const uint64_t before = RealtimeNs();
  {
    std::string error;
    auto t = Timeline::Open(path, SmallOptions(), &error);
    ASSERT_TRUE(t) << error;
    EXPECT_FALSE(t->previous().found);
    uint16_t name = t->Intern(NameText(1));
    for (uint64_t i = 0; i < 100; ++i) t->Append(Pattern(3, i, name));
  }
  std::string error;
  auto t = Timeline::Open(path, SmallOptions(), &error);
  ASSERT_TRUE(t) << error;
  const RecoveredTimeline& prev = t->previous();
  ASSERT_TRUE(prev.valid) << prev.error;
  EXPECT_EQ(prev.pid, getpid());
  EXPECT_EQ(prev.head, 100u);
  EXPECT_EQ(prev.recovered, 64u);  // the last ring's worth
  EXPECT_EQ(prev.torn, 0u);
  ASSERT_EQ(prev.events.size(), 64u);
  for (size_t i = 0; i < prev.events.size(); ++i) {
    EXPECT_EQ(prev.events[i].ticket, 36 + i);
    EXPECT_TRUE(Intact(prev.events[i]));
    EXPECT_EQ(prev.StringFor(prev.events[i].name), NameText(1));
  }
  EXPECT_GE(prev.start_realtime_ns, before - kNsPerSec);
  EXPECT_LE(prev.ToRealtimeNs(prev.start_monotonic_ns), RealtimeNs());
  // The new run starts from an empty ring.
  EXPECT_EQ(t->appended(), 0u);
  EXPECT_TRUE(t->Snapshot().events.empty());
  EXPECT_EQ(t->strings().size(), 0u);
}

TEST(TimelineFile, SecondOpenWhileInUseIsRefused) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  std::string error;
  auto first = Timeline::Open(path, SmallOptions(), &error);
  ASSERT_TRUE(first) << error;
  EXPECT_FALSE(Timeline::Open(path, SmallOptions(), &error));
  EXPECT_NE(error.find("in use"), std::string::npos) << error;
  first.reset();
  EXPECT_TRUE(Timeline::Open(path, SmallOptions(), &error)) << error;
}

TEST(TimelineFile, UnopenablePathGivesAReason) {
  std::string error;
  EXPECT_FALSE(Timeline::Open("/nonexistent-dir/x/timeline.bin", SmallOptions(), &error));
  EXPECT_NE(error.find("/nonexistent-dir/x/timeline.bin"), std::string::npos) << error;
}

TEST(TimelineFile, MissingAndEmptyFilesAreNotErrors) {
  TempDir dir;
  RecoveredTimeline missing = RecoverPrevious(dir.File("none"));
  EXPECT_FALSE(missing.found);
  EXPECT_TRUE(missing.error.empty());
  WriteBytes(dir.File("empty"), {});
  RecoveredTimeline empty = RecoverPrevious(dir.File("empty"));
  EXPECT_FALSE(empty.found);
  EXPECT_TRUE(empty.error.empty());
}

// A damaged file is rejected with `reason`, and Open replaces it with a working timeline.
void ExpectRejectedAndReplaced(const std::string& path, const std::string& reason) {
  RecoveredTimeline r = RecoverPrevious(path);
  EXPECT_TRUE(r.found);
  EXPECT_FALSE(r.valid);
  EXPECT_NE(r.error.find(reason), std::string::npos) << "error was: " << r.error;
  EXPECT_TRUE(r.events.empty());
  std::string error;
  auto t = Timeline::Open(path, SmallOptions(), &error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->previous().error, r.error);
  t->Append(Pattern(1, 0, 0));
  t.reset();
  RecoveredTimeline again = RecoverPrevious(path);
  EXPECT_TRUE(again.valid) << again.error;
  EXPECT_EQ(again.recovered, 1u);
}

template <typename T>
void Poke(std::vector<char>* bytes, size_t offset, T value) {
  memcpy(bytes->data() + offset, &value, sizeof value);
}

TEST(TimelineFile, CorruptHeadersAreRejectedWithReasons) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  WriteValidFile(path, 10);
  const std::vector<char> good = ReadBytes(path);
  ASSERT_TRUE(RecoverPrevious(path).valid);

  std::vector<char> b = good;
  b[0] = 'X';
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "bad magic");

  b = good;
  Poke<uint32_t>(&b, offsetof(layout::Header, version), 99);
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "version 99");

  b = good;
  Poke<uint32_t>(&b, offsetof(layout::Header, capacity), 1000);
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "power of two");

  b = good;
  Poke<uint32_t>(&b, offsetof(layout::Header, capacity), 1u << 30);
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "capacity");

  b = good;
  Poke<uint32_t>(&b, offsetof(layout::Header, record_size), 64);
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "record size");

  b = good;
  Poke<uint64_t>(&b, offsetof(layout::Header, ring_offset), 12345);
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "offsets");

  b = good;
  b.resize(b.size() - 100);
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "header describes");

  b = good;
  b.resize(b.size() + 4096, '\0');
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "header describes");

  b.assign(100, 'J');
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "too small");
}

// A file of an older format (version 4 had another record checksum) is rejected with a reason that says
// so, never read with this build's rules, and replaced by a working timeline.
TEST(TimelineFile, OlderFormatIsRejectedNotMisread) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  WriteValidFile(path, 10);
  std::vector<char> b = ReadBytes(path);
  ASSERT_EQ(layout::kVersion, 5u) << "update this test's expectations with the format";
  Poke<uint32_t>(&b, offsetof(layout::Header, version), 4);
  WriteBytes(path, b);
  ExpectRejectedAndReplaced(path, "timeline format version 4, this build reads version 5 (written by an older");
}

// An older lap's record under a newer ticket of the same slot, still inside the ring's window: only the
// ticket in the checksum tells it apart (its payload is intact), and it does for every lap distance.
TEST(TimelineFile, StaleRecordUnderANewerTicketIsTorn) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  WriteValidFile(path, 10);  // capacity 64: tickets 0..9 in slots 0..9
  const std::vector<char> good = ReadBytes(path);
  layout::Header h;
  memcpy(&h, good.data(), sizeof h);
  ASSERT_EQ(h.capacity, 64u);
  for (uint64_t laps = 1; laps <= 4; ++laps) {
    std::vector<char> b = good;
    const uint64_t stale = 3 + laps * 64;  // slot 3's ticket `laps` laps on
    Poke<uint64_t>(&b, offsetof(layout::Header, head), stale + 1);
    Poke<uint64_t>(&b, h.ring_offset + 3 * sizeof(layout::Record) + offsetof(layout::Record, seq), 2 * stale + 2);
    WriteBytes(path, b);
    RecoveredTimeline r = RecoverPrevious(path);
    ASSERT_TRUE(r.valid) << r.error;
    EXPECT_EQ(r.torn, 1u) << laps << " laps";
    for (const Event& e : r.events) {
      EXPECT_NE(e.ticket, stale);
      EXPECT_TRUE(Intact(e));
    }
  }
}

TEST(TimelineFile, DamagedRecordsAreTornOthersRecovered) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  WriteValidFile(path, 10);
  std::vector<char> b = ReadBytes(path);
  layout::Header h;
  memcpy(&h, b.data(), sizeof h);
  auto record_at = [&](uint64_t slot) { return h.ring_offset + slot * sizeof(layout::Record); };
  b[record_at(2) + offsetof(layout::Record, dur_ns)] ^= 0x10;                 // payload changed
  Poke<uint64_t>(&b, record_at(5) + offsetof(layout::Record, seq), 2 * 5 + 1);  // killed mid-write
  Poke<uint64_t>(&b, record_at(7) + offsetof(layout::Record, seq), 2 * 8 + 2);  // claims another slot's ticket
  Poke<uint64_t>(&b, record_at(20), 2 * 20 + 2);                               // beyond head (10)
  WriteBytes(path, b);
  RecoveredTimeline r = RecoverPrevious(path);
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.torn, 4u);
  EXPECT_EQ(r.recovered, 7u);
  for (const Event& e : r.events) {
    EXPECT_TRUE(Intact(e));
    EXPECT_TRUE(e.ticket != 2 && e.ticket != 5 && e.ticket != 7);
  }
}

TEST(TimelineFile, RandomDamageNeverCrashesAndNeverYieldsBadRecords) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  WriteValidFile(path, 50);
  const std::vector<char> good = ReadBytes(path);
  std::mt19937 rng(12345);
  int valid = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<char> b = good;
    const int flips = 1 + static_cast<int>(rng() % 16);
    for (int i = 0; i < flips; ++i) b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    if (round % 10 == 0) b.resize(rng() % b.size());
    WriteBytes(path, b);
    RecoveredTimeline r = RecoverPrevious(path);
    if (!r.valid) {
      EXPECT_FALSE(r.error.empty());
      continue;
    }
    ++valid;
    EXPECT_LE(r.recovered + r.torn, r.capacity);
    for (const Event& e : r.events) ASSERT_TRUE(Intact(e)) << "round " << round << " ticket " << e.ticket;
    for (const Event& e : r.events) (void)r.StringFor(e.name);  // in bounds whatever the slots say
  }
  EXPECT_GT(valid, 0);  // most flips hit records or strings, not the header
}

// Ground truth shared with the killed child: each writer thread publishes every ticket it committed.
struct KillShared {
  std::atomic<int> state;  // 0 starting, 1 writing, 2 failed to open
  std::atomic<uint64_t> count[2];
  static constexpr uint64_t kMaxPerWriter = 1u << 19;
  uint64_t committed[2][kMaxPerWriter];
};

[[noreturn]] void ChildWriter(const std::string& path, uint32_t capacity, int writers, int round,
                              KillShared* shared) {
  std::string error;
  auto t = Timeline::Open(path, SmallOptions(capacity), &error);
  if (!t) {
    shared->state.store(2);
    _exit(3);
  }
  uint16_t names[8];
  for (int i = 0; i < 8; ++i) names[i] = t->Intern(NameText(round * 8 + i));
  shared->state.store(1);
  auto writer = [&](int w) {
    uint64_t n = 0;
    for (uint64_t i = 0; n < KillShared::kMaxPerWriter; ++i) {
      uint64_t ticket = t->Append(Pattern(static_cast<uint32_t>(w + 1), i, names[(i + w) % 8]));
      if (ticket == Timeline::kNotCommitted) continue;  // lapped while preempted: never committed
      shared->committed[w][n] = ticket;
      shared->count[w].store(++n, std::memory_order_release);
    }
    for (;;) pause();
  };
  if (writers == 2) std::thread(writer, 1).detach();
  writer(0);
  for (;;) pause();
}

// Kills a writing child at random moments, 50 times, and checks the file against what the child had
// committed: nothing committed in the last ring may be missing, whatever the number of writers (a writer
// preempted for a whole lap drops its own record rather than touch a later one).
void KillRounds(int writers) {
  TempDir dir;
  const std::string path = dir.File("timeline.bin");
  void* mem = mmap(nullptr, sizeof(KillShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* shared = static_cast<KillShared*>(mem);
  std::mt19937 rng(2024 + writers);
  const uint32_t capacities[] = {64, 1024, 8192};
  uint64_t total_checked = 0, total_recovered = 0, total_torn = 0, total_dropped = 0;
  int killed_while_writing = 0;
  const uint64_t t0 = MonotonicNs();
  for (int round = 0; round < 50; ++round) {
    const uint32_t capacity = capacities[round % 3];
    shared->state.store(0);
    shared->count[0].store(0);
    shared->count[1].store(0);
    const bool early = round % 5 == 4;  // also kill during Open/intern, before any record
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ChildWriter(path, capacity, writers, round, shared);
    if (!early) {
      const uint64_t give_up = MonotonicNs() + 5 * kNsPerSec;
      while (shared->state.load() == 0 && MonotonicNs() < give_up) usleep(50);
      ASSERT_EQ(shared->state.load(), 1) << "child did not start writing";
    }
    usleep(static_cast<useconds_t>(rng() % 3000));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "round " << round;

    RecoveredTimeline r = RecoverPrevious(path);
    if (early && !r.valid) continue;  // killed before the new header was complete: rejected, fine
    ASSERT_TRUE(r.valid) << "round " << round << ": " << r.error;
    // An early kill may land before the child truncated the file: then it still holds the last round.
    const bool ours = r.pid == pid;
    if (shared->state.load() == 1) {
      ++killed_while_writing;
      ASSERT_TRUE(ours) << "round " << round;
    }
    EXPECT_LE(r.torn, uint64_t(writers)) << "each writer has at most one record in flight";
    for (const Event& e : r.events) {
      ASSERT_TRUE(Intact(e)) << "round " << round << " ticket " << e.ticket;
      if (ours) {
        ASSERT_EQ(r.StringFor(e.name), NameText(round * 8 + static_cast<int>((e.ts_ns + e.tid - 1) % 8)));
      }
    }
    // Every committed ticket the ring could still hold (>= head - capacity) must be there, intact.
    const uint64_t oldest = r.head > capacity ? r.head - capacity : 0;
    for (int w = 0; w < writers; ++w) {
      const uint64_t n = shared->count[w].load(std::memory_order_acquire);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t ticket = shared->committed[w][i];
        if (ticket < oldest) continue;
        ASSERT_LT(ticket, r.head);
        ++total_checked;
        auto it = std::lower_bound(r.events.begin(), r.events.end(), ticket,
                                   [](const Event& e, uint64_t t) { return e.ticket < t; });
        ASSERT_TRUE(it != r.events.end() && it->ticket == ticket)
            << "round " << round << ": committed ticket " << ticket << " missing";
        ASSERT_EQ(it->tid, static_cast<uint32_t>(w + 1));
      }
    }
    total_dropped += r.dropped;
    total_recovered += r.recovered;
    total_torn += r.torn;
  }
  munmap(mem, sizeof(KillShared));
  const double seconds = static_cast<double>(MonotonicNs() - t0) / 1e9;
  EXPECT_GT(killed_while_writing, 30);
  EXPECT_GT(total_checked, 1000u);
  printf("%d writer(s), 50 kill rounds in %.2f s: %llu committed tickets checked, %llu recovered, %llu torn, "
         "%llu appends dropped by writers stalled for a lap\n",
         writers, seconds, static_cast<unsigned long long>(total_checked),
         static_cast<unsigned long long>(total_recovered), static_cast<unsigned long long>(total_torn),
         static_cast<unsigned long long>(total_dropped));

  // The next run takes over the file: it sees what the last killed run left, then starts fresh.
  const RecoveredTimeline last = RecoverPrevious(path);
  std::string error;
  auto t = Timeline::Open(path, SmallOptions(), &error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->previous().found, last.found);
  EXPECT_EQ(t->previous().valid, last.valid);
  EXPECT_EQ(t->previous().recovered, last.recovered);
  EXPECT_EQ(t->previous().pid, last.pid);
  EXPECT_EQ(t->appended(), 0u);
}

TEST(TimelineFile, SigkillAtRandomMomentsOneWriterLosesNothingCommitted) { KillRounds(1); }
TEST(TimelineFile, SigkillAtRandomMomentsTwoWritersLoseNothingCommitted) { KillRounds(2); }

}  // namespace
}  // namespace jp::hook
