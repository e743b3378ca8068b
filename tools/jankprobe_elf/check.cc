#include "tools/jankprobe_elf/check.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <memory>

#include "plt/elf_image.h"

namespace jp::elftool {

void CheckAgainstEngine(const uint8_t* data, size_t size, const LibelfImage& libelf, CheckResult* out) {
  *out = CheckResult();
  std::vector<SlotKey> expected;
  expected.reserve(libelf.slots.size());
  for (const LibelfSlot& s : libelf.slots) expected.push_back({s.got_vaddr, s.symbol, s.version, s.reloc_type});
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  out->libelf_duplicates = libelf.slots.size() - expected.size();
  out->libelf_slots = expected.size();

  std::unique_ptr<jp::plt::ElfImage> image;
  jp::plt::Status status = jp::plt::ElfImage::FromFile(data, size, &image);
  if (!status.ok()) {
    out->engine_error = "engine rejected the image: " + status.message();
    return;
  }
  if (image->machine() != libelf.machine || image->is_64bit() != libelf.is_64bit) {
    out->header_mismatch = "engine reads machine " + std::to_string(image->machine()) +
                           (image->is_64bit() ? " ELF64" : " ELF32") + ", libelf machine " +
                           std::to_string(libelf.machine) + (libelf.is_64bit ? " ELF64" : " ELF32");
  }
  std::vector<SlotKey> actual;
  status = image->ForEachImportSlot([&actual](const jp::plt::ImportSlot& slot) {
    actual.push_back({slot.got_vaddr, std::string(slot.symbol), std::string(slot.version), slot.reloc_type});
    return true;
  });
  if (!status.ok()) {
    out->engine_error = "engine failed to walk the relocations: " + status.message();
    return;
  }
  std::sort(actual.begin(), actual.end());
  const size_t reported = actual.size();
  actual.erase(std::unique(actual.begin(), actual.end()), actual.end());
  out->engine_duplicates = reported - actual.size();
  out->engine_slots = actual.size();
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(),
                      std::back_inserter(out->only_libelf));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(),
                      std::back_inserter(out->only_engine));
}

std::string FormatSlotKey(uint16_t machine, const SlotKey& key) {
  char got[32];
  std::snprintf(got, sizeof(got), "0x%" PRIx64, key.got_vaddr);
  std::string s = std::string(got) + " " + jp::plt::RelocTypeName(machine, key.reloc_type) + " ";
  s += key.symbol.empty() ? "(no symbol)" : key.symbol;
  if (!key.version.empty()) s += "@" + key.version;
  return s;
}

std::vector<std::string> DescribeDifferences(uint16_t machine, const CheckResult& result) {
  std::vector<std::string> lines;
  if (!result.engine_error.empty()) lines.push_back(result.engine_error);
  if (!result.header_mismatch.empty()) lines.push_back(result.header_mismatch);
  if (result.engine_duplicates != result.libelf_duplicates) {
    lines.push_back("repeated slots: engine " + std::to_string(result.engine_duplicates) + ", libelf " +
                    std::to_string(result.libelf_duplicates));
  }
  for (const SlotKey& k : result.only_libelf) lines.push_back("only libelf: " + FormatSlotKey(machine, k));
  for (const SlotKey& k : result.only_engine) lines.push_back("only engine: " + FormatSlotKey(machine, k));
  return lines;
}

}  // namespace jp::elftool
