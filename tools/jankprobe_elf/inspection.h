// One file as the tool reports it: libelf's slot list, the PLT stubs matched to their slots, and
// (with --check) the engine comparison. Kept apart from main.cc so tests drive the same path.
#ifndef JANKPROBE_TOOLS_JANKPROBE_ELF_INSPECTION_H_
#define JANKPROBE_TOOLS_JANKPROBE_ELF_INSPECTION_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tools/jankprobe_elf/check.h"
#include "tools/jankprobe_elf/libelf_slots.h"
#include "tools/jankprobe_elf/plt_stub_decoder.h"

namespace jp::elftool {

struct Inspection {
  std::string path;
  std::string error;  // non-empty: the file could not be read (not ELF, truncated, unsupported machine...)
  LibelfImage image;  // plt_sections are cleared after decoding (they pointed into the mapped file)
  std::vector<PltStub> stubs;
  std::vector<int> stub_of_slot;       // index into stubs per image.slots entry, -1 when none
  std::vector<size_t> unmatched_stubs;  // stubs whose slot no relocation names (PLT0, stray code)
  std::optional<CheckResult> check;
};

void InspectFile(const std::string& path, bool run_check, Inspection* out);

void PrintTable(const Inspection& in, bool run_check, std::FILE* to);

const char* SlotSourceName(SlotSource source);  // "jmprel", "dyn", "android"
const char* SlotClassName(SlotClass kind);      // "jump_slot", "glob_dat", "absolute"

}  // namespace jp::elftool

#endif  // JANKPROBE_TOOLS_JANKPROBE_ELF_INSPECTION_H_
