// --check: the engine's own parser (jp::plt::ElfImage::FromFile) over the same file image, compared
// with the libelf slot list as a set of (GOT vaddr, symbol, version, relocation type).
#ifndef JANKPROBE_TOOLS_JANKPROBE_ELF_CHECK_H_
#define JANKPROBE_TOOLS_JANKPROBE_ELF_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "tools/jankprobe_elf/libelf_slots.h"

namespace jp::elftool {

struct SlotKey {
  uint64_t got_vaddr = 0;
  std::string symbol;
  std::string version;
  uint32_t reloc_type = 0;

  bool operator<(const SlotKey& o) const {
    return std::tie(got_vaddr, symbol, version, reloc_type) < std::tie(o.got_vaddr, o.symbol, o.version, o.reloc_type);
  }
  bool operator==(const SlotKey& o) const {
    return std::tie(got_vaddr, symbol, version, reloc_type) == std::tie(o.got_vaddr, o.symbol, o.version, o.reloc_type);
  }
};

struct CheckResult {
  std::string engine_error;     // set when the engine rejected an image libelf could read
  std::string header_mismatch;  // machine or class reported differently
  size_t libelf_slots = 0;
  size_t engine_slots = 0;
  // Keys listed more than once (two relocations of one slot); the sides must agree on these too.
  size_t libelf_duplicates = 0;
  size_t engine_duplicates = 0;
  std::vector<SlotKey> only_libelf;
  std::vector<SlotKey> only_engine;

  bool agree() const {
    return engine_error.empty() && header_mismatch.empty() && engine_duplicates == libelf_duplicates && only_libelf.empty() &&
           only_engine.empty();
  }
};

// Runs the engine over `data` and compares with `libelf` (read from the same bytes).
void CheckAgainstEngine(const uint8_t* data, size_t size, const LibelfImage& libelf, CheckResult* out);

// "0x1d3018 R_X86_64_JUMP_SLOT realloc@GLIBC_2.2.5", for difference listings.
std::string FormatSlotKey(uint16_t machine, const SlotKey& key);

// Human-readable lines describing every difference (empty when they agree).
std::vector<std::string> DescribeDifferences(uint16_t machine, const CheckResult& result);

}  // namespace jp::elftool

#endif  // JANKPROBE_TOOLS_JANKPROBE_ELF_CHECK_H_
