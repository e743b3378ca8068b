// The timeline's memory image. The same bytes are an anonymous mapping (no file configured) or a MAP_SHARED
// file that outlives a kill -9, so everything here is plain fixed-width data, accessed with __atomic builtins
// (std::atomic<T> has no guaranteed layout to put in a file), with explicit offsets the recovery code checks.
//
//   [Header 256 B][intern slots: u64 x intern_slots][string arena: arena_bytes][records: Record x capacity]
//
// Bump kVersion whenever anything in this file changes: an old file is then rejected and replaced.
#ifndef JANKPROBE_HOOK_TIMELINE_LAYOUT_H_
#define JANKPROBE_HOOK_TIMELINE_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace jp::hook::layout {

constexpr char kMagic[8] = {'J', 'P', 'T', 'L', 'R', 'I', 'N', 'G'};
constexpr uint32_t kVersion = 5;  // 5: add-rotate-xor payload check + one multiply, ticket xored in last
                                  // 4: ten-multiply checksum, payload hash finished with the ticket

// One event, 80 bytes. Every field is a u64 so a reader can copy a record word by word with relaxed atomic
// loads (a seqlock reader must not use plain loads on data a writer may be changing). Four arguments are
// what an input record needs (fd, seq, dispatch_ms, consume_ms) next to its name and duration; the default
// ring is 4096 records so that it and the string table stay under 512 KB resident.
struct Record {
  uint64_t seq;           // commit marker: 0 never written, 2t+2 once ticket t is committed; only ever grows
                          // (odd values are never written now; readers still treat them as in flight)
  uint64_t check;         // checksum (low 32 bits); the high half counts this slot's skipped tickets below
                          // this one (see Timeline::SkipsFreeSlot). Next to seq so that they share a line.
  uint64_t ts_ns;         // CLOCK_MONOTONIC start of the event
  uint64_t dur_ns;        // 0 for instants
  uint64_t arg_value[4];  // i64, double bits or string id, as the arg word's type says
  uint64_t ids;           // tid (32) | kind << 32 (16) | name id << 48 (16)
  uint64_t keys;          // arg words 0..3, 16 bits each
};
static_assert(sizeof(Record) == 80, "the file format depends on the record size");

// An argument word: 2 bits of type over a 14-bit key id (string ids are < 16384, see StringTable).
constexpr uint16_t kArgKeyMask = 0x3FFF;
constexpr int kArgTypeShift = 14;

// File/region header. Identity fields are written once at creation; the magic is written last, so a
// process killed while creating the file leaves a file the next run rejects instead of trusts.
// The live counters sit on their own cache lines: head is hit by every append, the others rarely.
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint32_t record_size;
  uint32_t capacity;      // records, a power of two
  uint32_t intern_slots;  // string table slots
  uint32_t arena_bytes;   // string bytes
  uint64_t region_size;   // total bytes, equals the file size
  uint64_t intern_offset;
  uint64_t arena_offset;
  uint64_t ring_offset;
  int32_t pid;
  uint32_t reserved0;
  uint64_t start_monotonic_ns;  // the two clocks read together at creation: a previous run's monotonic
  uint64_t start_realtime_ns;   // timestamps map to wall time as realtime0 + (ts - monotonic0)
  uint8_t pad0[128 - 88];

  uint64_t head;  // next ticket (fetch_add by every append); tickets below head - capacity are overwritten
  uint64_t dropped;  // appends whose slot was still held by a writer stalled for a lap: ticket taken, no record
  uint8_t pad1[192 - 144];

  uint64_t arena_used;           // bump pointer into the string arena
  uint64_t intern_used;          // published string slots
  uint64_t intern_overflow;      // Intern() calls answered with the overflow id
  uint64_t intern_wasted_bytes;  // arena bytes of lost insert races (the winner's copy is used)
  uint8_t pad2[256 - 224];
};
static_assert(sizeof(Header) == 256, "the file format depends on the header size");
static_assert(offsetof(Header, head) == 128, "head has its own cache line");
static_assert(offsetof(Header, arena_used) == 192, "string counters have their own cache line");

// Where each part of the region lives, computed from the three sizes (so a header can be checked against it).
struct RegionLayout {
  uint64_t intern_offset = 0;
  uint64_t arena_offset = 0;
  uint64_t ring_offset = 0;
  uint64_t total = 0;
};

constexpr uint32_t kMinCapacity = 16;
constexpr uint32_t kMaxCapacity = 1u << 20;
constexpr uint32_t kMinInternSlots = 16;
constexpr uint32_t kMaxInternSlots = 8192;  // a power of two; ids 1..slots stay below the overflow id 0x3FFF
constexpr uint32_t kMinArenaBytes = 256;
constexpr uint32_t kMaxArenaBytes = 1u << 24;

// Fills *out, or returns false with the reason in *error.
bool ComputeLayout(uint32_t capacity, uint32_t intern_slots, uint32_t arena_bytes, RegionLayout* out,
                   std::string* error);

// 32-bit check over a record's payload and its ticket, stored in the commit. It is what tells a recovered
// record from a torn one (killed mid-write, or damaged on disk) and from a stale one (an older lap's data
// under a newer ticket). It sits on the hot path of every monitor's append (the input proxies wait for it
// between two syscalls), so it is cheap by construction rather than a general-purpose hash:
// - payload: each word xored with its own constant and rotated by its own amount; the words are folded
//   into x with xor inside two-word lanes and additions between lanes (the carries keep x from being
//   linear over GF(2)), then one multiply by an odd constant and a fold of the high half onto the low one.
//   Each step is a bijection in any single word, so a change confined to one word always changes x; x *
//   odd is a bijection too, and a change of x's high half always changes the folded value (one of the
//   low half with the usual 2^-32 chance). Inside a lane the two words are 9 bits of rotation apart
//   (coprime with 64), so the same damage to both words cannot cancel out. Version 4 had eight multiplies
//   and two more after the ticket; this is ~20 one-cycle operations and one multiply (28 instructions
//   fewer per input round trip; the multiplies had mostly overlapped the locked instruction).
// - ticket: xored in last, as its low 32 bits. Computed before the ticket is known, the payload part
//   overlaps the locked instruction that hands the ticket out; after it only one xor is left. Two tickets
//   less than 2^32 apart (a stale record is a whole number of laps off, a lap is at most 2^20) always give
//   different checks for the same payload: stale records are caught with certainty, not by chance.
// It comes in two steps (PayloadHash, then FinishChecksum with the ticket) for that reason.
inline uint64_t RotateLeft(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }  // r in 1..63

inline uint64_t PayloadHash(uint64_t ts_ns, uint64_t dur_ns, const uint64_t (&v)[4], uint64_t ids,
                            uint64_t arg_words) {
  // Constants below 2^31: an xor with a sign-extended immediate on x86_64, no 64-bit constant load. They
  // let all-zero words (unset arguments) still feed bits into the carries between lanes.
  const uint64_t a = (ts_ns ^ 0x2545F491ull) ^ RotateLeft(dur_ns ^ 0x4F6CDD1Dull, 9);
  const uint64_t b = RotateLeft(v[0] ^ 0x1B873593ull, 18) ^ RotateLeft(v[1] ^ 0x27D4EB2Full, 27);
  const uint64_t c = RotateLeft(v[2] ^ 0x165667C5ull, 36) ^ RotateLeft(v[3] ^ 0x3C6EF372ull, 45);
  const uint64_t d = RotateLeft(ids ^ 0x7F4A7C15ull, 54) ^ RotateLeft(arg_words ^ 0x61C88647ull, 63);
  const uint64_t h = ((a + b) ^ (c + d)) * 0x9E6C63D0676A9A99ull;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

inline uint32_t FinishChecksum(uint64_t payload_hash, uint64_t ticket) {
  return static_cast<uint32_t>(payload_hash ^ ticket);
}

inline uint32_t RecordChecksum(uint64_t ticket, uint64_t ts_ns, uint64_t dur_ns, const uint64_t (&v)[4],
                               uint64_t ids, uint64_t arg_words) {
  return FinishChecksum(PayloadHash(ts_ns, dur_ns, v, ids, arg_words), ticket);
}

inline uint64_t LoadRelaxed(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline uint64_t LoadAcquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void StoreRelaxed(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
inline void StoreRelease(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

}  // namespace jp::hook::layout

#endif  // JANKPROBE_HOOK_TIMELINE_LAYOUT_H_
