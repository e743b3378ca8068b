#include "hook/string_intern.h"

#include <cstring>

namespace jp::hook {
namespace {

constexpr uint32_t kMaxProbes = 64;
constexpr std::string_view kOverflowText = "<overflow>";

uint64_t Load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

std::string_view Clip(std::string_view s) {
  return s.size() > StringTable::kMaxLength ? s.substr(0, StringTable::kMaxLength) : s;
}

}  // namespace

uint32_t StringTable::Hash(std::string_view s) noexcept {
  uint32_t h = 2166136261u;  // FNV-1a: strings are short and interned off the hot path
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

bool StringTable::ReadArena(const char* arena, uint32_t arena_bytes, uint32_t ref,
                            std::string_view* out) noexcept {
  // ref is offset + 1 so that a published slot is never 0 even for the first string.
  if (ref == 0 || ref > arena_bytes) return false;
  uint32_t offset = ref - 1;
  uint32_t len = static_cast<unsigned char>(arena[offset]);
  if (uint64_t{offset} + 1 + len > arena_bytes) return false;
  *out = std::string_view(arena + offset + 1, len);
  return true;
}

uint16_t StringTable::Intern(std::string_view s) noexcept {
  s = Clip(s);
  if (s.empty() || s_.slots == nullptr) return kNone;
  return Probe(s, Hash(s), /*insert=*/true);
}

uint16_t StringTable::Find(std::string_view s) const noexcept {
  s = Clip(s);
  if (s.empty() || s_.slots == nullptr) return kNone;
  return const_cast<StringTable*>(this)->Probe(s, Hash(s), /*insert=*/false);
}

uint16_t StringTable::Probe(std::string_view s, uint32_t hash, bool insert) noexcept {
  const uint32_t mask = s_.slot_count - 1;  // slot_count is a power of two (checked by the layout)
  uint32_t my_ref = 0;                      // our arena copy, made once we know we need to insert
  uint32_t probes = s_.slot_count < kMaxProbes ? s_.slot_count : kMaxProbes;
  for (uint32_t i = 0; i < probes; ++i) {
    uint32_t index = (hash + i) & mask;
    uint64_t* slot = &s_.slots[index];
    uint64_t v = Load(slot);
    if (v == 0) {
      if (!insert) return kNone;
      if (my_ref == 0) {
        if (Load(s_.used) >= uint64_t{s_.slot_count} * 7 / 8) break;  // keep probe chains short
        // Reserve length byte, text and NUL with a CAS (not fetch_add), so a string that does not fit
        // leaves the rest of the arena to shorter ones.
        const uint64_t need = s.size() + 2;
        uint64_t offset = Load(s_.arena_used);
        bool fits;
        do {
          fits = offset + need <= s_.arena_bytes;
        } while (fits && !__atomic_compare_exchange_n(s_.arena_used, &offset, offset + need, true,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        if (!fits) break;
        s_.arena[offset] = static_cast<char>(s.size());
        memcpy(s_.arena + offset + 1, s.data(), s.size());
        s_.arena[offset + 1 + s.size()] = '\0';
        my_ref = static_cast<uint32_t>(offset + 1);
      }
      uint64_t mine = uint64_t{hash} << 32 | my_ref;
      // Release: the arena bytes are visible (and, in a file, written) before the slot that points at them.
      if (__atomic_compare_exchange_n(slot, &v, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(s_.used, 1, __ATOMIC_RELAXED);
        return static_cast<uint16_t>(index + 1);
      }
      // Lost the race: v now holds the winner's slot; fall through and compare it.
    }
    std::string_view existing;
    if (static_cast<uint32_t>(v >> 32) == hash &&
        ReadArena(s_.arena, s_.arena_bytes, static_cast<uint32_t>(v), &existing) && existing == s) {
      if (my_ref != 0) __atomic_fetch_add(s_.wasted_bytes, s.size() + 2, __ATOMIC_RELAXED);
      return static_cast<uint16_t>(index + 1);
    }
  }
  if (!insert) return kNone;
  if (my_ref != 0) __atomic_fetch_add(s_.wasted_bytes, s.size() + 2, __ATOMIC_RELAXED);
  __atomic_fetch_add(s_.overflow, 1, __ATOMIC_RELAXED);
  return kOverflow;
}

std::string_view StringTable::Lookup(uint16_t id) const noexcept {
  if (id == kOverflow) return kOverflowText;
  if (id == kNone || s_.slots == nullptr || id > s_.slot_count) return {};
  uint64_t v = Load(&s_.slots[id - 1]);
  std::string_view text;
  if (v == 0 || !ReadArena(s_.arena, s_.arena_bytes, static_cast<uint32_t>(v), &text)) return {};
  return text;
}

uint64_t StringTable::size() const noexcept { return s_.used ? Load(s_.used) : 0; }
uint64_t StringTable::overflow_count() const noexcept { return s_.overflow ? Load(s_.overflow) : 0; }
uint64_t StringTable::wasted_bytes() const noexcept { return s_.wasted_bytes ? Load(s_.wasted_bytes) : 0; }

}  // namespace jp::hook
