// Interned strings for timeline names and argument keys: a record carries a 14-bit id, never a pointer or
// text, so appends stay fixed-size and the strings survive in the timeline file next to the records.
//
// The table is fixed-size and lock-free: open addressing over u64 slots, each (hash << 32 | arena ref).
// An insert copies the text into a bump-allocated arena first and then publishes the slot with one CAS, so
// a slot is either empty or complete (also in a file after kill -9). Two threads interning the same new
// string race on the same probe sequence; the loser sees the winner's slot, returns its id and its own
// arena copy is counted as wasted. Nothing allocates, locks or spins, so even Intern() is async-signal-safe,
// but it hashes and compares text: hot paths intern at install time and keep the id.
//
// When full (no free slot within the probe limit, load factor above 7/8, or arena exhausted) Intern returns
// kOverflow, which reads back as "<overflow>", and counts the call; the table never grows and never evicts.
#ifndef JANKPROBE_HOOK_STRING_INTERN_H_
#define JANKPROBE_HOOK_STRING_INTERN_H_

#include <cstdint>
#include <string_view>

namespace jp::hook {

// Where a table's state lives (inside the timeline region, so that it is persisted with it).
struct StringTableStorage {
  uint64_t* slots = nullptr;
  uint32_t slot_count = 0;
  char* arena = nullptr;
  uint32_t arena_bytes = 0;
  uint64_t* arena_used = nullptr;
  uint64_t* used = nullptr;
  uint64_t* overflow = nullptr;
  uint64_t* wasted_bytes = nullptr;
};

class StringTable {
 public:
  static constexpr uint16_t kNone = 0;          // "no string": reads back as ""
  static constexpr uint16_t kOverflow = 0x3FFF;  // the table was full: reads back as "<overflow>"
  static constexpr size_t kMaxLength = 255;      // longer strings are cut (the length is one byte)

  StringTable() = default;
  explicit StringTable(const StringTableStorage& storage) : s_(storage) {}

  // The id of s, inserting it if needed. The empty string is kNone.
  uint16_t Intern(std::string_view s) noexcept;
  // The id of s if already interned, else kNone. Never writes.
  uint16_t Find(std::string_view s) const noexcept;
  // The text of an id ("" for kNone or an unknown id, "<overflow>" for kOverflow). Views into the table.
  std::string_view Lookup(uint16_t id) const noexcept;

  uint64_t size() const noexcept;
  uint64_t overflow_count() const noexcept;
  uint64_t wasted_bytes() const noexcept;
  uint32_t slot_count() const noexcept { return s_.slot_count; }

  static uint32_t Hash(std::string_view s) noexcept;

  // Text stored at an arena reference, or false if the reference is out of bounds (used on recovered,
  // possibly corrupt, files as well as live tables).
  static bool ReadArena(const char* arena, uint32_t arena_bytes, uint32_t ref, std::string_view* out) noexcept;

 private:
  uint16_t Probe(std::string_view s, uint32_t hash, bool insert) noexcept;

  StringTableStorage s_;
};

}  // namespace jp::hook

#endif  // JANKPROBE_HOOK_STRING_INTERN_H_
