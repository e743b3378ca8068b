// libFuzzer target: arbitrary bytes as an ELF file image through the engine's parser (FromFile) and
// every query a hook install makes of it. The parser's promise is "bad input gives a Status, never a
// crash"; ASan/UBSan watch the reads, and the queries are cross-checked so that a logic slip (a slot
// ForEachImportSlot lists but FindImportSlots misses) stops the run too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "plt/elf_image.h"

namespace {

using jp::plt::ElfImage;
using jp::plt::ImportSlot;

// Reads every byte of a view the parser handed out, so a view past the input is an ASan report here.
size_t Touch(std::string_view s) {
  size_t sum = 0;
  for (char c : s) sum += static_cast<unsigned char>(c);
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<ElfImage> image;
  jp::plt::Status st = ElfImage::FromFile(data, size, &image);
  if (!st.ok()) {
    if (st.message().empty()) std::abort();  // every failure must say why
    return 0;
  }
  volatile size_t sink = 0;
  sink = sink + image->dynamic_symbol_count() + image->load_segments().size() + image->relro_size();

  std::string first_symbol;
  std::string first_version;
  size_t slots = 0;
  size_t first_symbol_slots = 0;
  st = image->ForEachImportSlot([&](const ImportSlot& slot) {
    sink = sink + Touch(slot.symbol) + Touch(slot.version);
    sink = sink + Touch(jp::plt::RelocTypeName(image->machine(), slot.reloc_type));
    if (slots == 0) {
      first_symbol.assign(slot.symbol);
      first_version.assign(slot.version);
    }
    if (slot.symbol == first_symbol) ++first_symbol_slots;
    return ++slots < 100000;
  });
  if (!st.ok() && st.message().empty()) std::abort();

  if (st.ok() && slots > 0 && slots < 100000) {
    // FindImportSlots finds its candidates through the hash tables, so on an image whose hash table
    // contradicts its symbol table (a mutated one; no linker writes that) it may find fewer slots than the
    // full walk. What must hold on any input: it never fails where the walk succeeded, and everything it
    // returns is a slot of that name the walk also produced. Equality on real libraries is checked by
    // differential_test over every library on the system.
    std::vector<ImportSlot> found;
    jp::plt::Status fst = image->FindImportSlots(first_symbol, {}, &found);
    if (!fst.ok() || found.size() > first_symbol_slots) std::abort();
    for (const ImportSlot& s : found) {
      if (s.symbol != first_symbol) std::abort();
    }
    if (!image->FindImportSlots(first_symbol, first_version, &found).ok()) std::abort();
    uint64_t vaddr = 0;
    sink = sink + image->LookupExport(first_symbol, &vaddr) + vaddr;
  }
  uint64_t vaddr = 0;
  for (const char* name : {"malloc", "sendto", "fixture_add", "fixture_versioned", ""}) {
    sink = sink + image->LookupExport(name, &vaddr);
  }
  return 0;
}
