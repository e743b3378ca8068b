// Test-side helpers for the ELF parser suites. The relocation lists here come from the *section*
// headers (.rel[a].dyn / .rel[a].plt linked to .dynsym / .dynstr), as readelf -r reads them, so they
// are an independent account of what the dynamic-segment parser under test must find.
#ifndef JANKPROBE_TESTS_PLT_PARSER_TEST_UTIL_H_
#define JANKPROBE_TESTS_PLT_PARSER_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace jp::plt::testing {

std::vector<uint8_t> ReadFile(const std::string& path);
std::string FixturePath(const std::string& name);
bool FileExists(const std::string& path);

// A relocation as the section headers describe it.
struct SectionReloc {
  uint64_t offset = 0;
  uint32_t type = 0;
  uint32_t sym = 0;
  int64_t addend = 0;
  std::string symbol;
  bool local = false;  // STB_LOCAL symbol
  bool plt = false;    // from the section DT_JMPREL points at (.rel[a].plt)
};

struct SectionView {
  uint16_t machine = 0;
  bool is64 = false;
  std::vector<SectionReloc> relocs;  // only SHT_REL / SHT_RELA sections
  uint64_t dynsym_count = 0;
  bool has_packed_section = false;   // SHT_ANDROID_REL(A)
};
// Empty optional-ish: returns false on anything it does not understand.
bool ReadSections(const std::vector<uint8_t>& file, SectionView* out);

// Slot-kind facts per machine, from the psABIs (not from the code under test).
struct MachineTypes {
  uint32_t jump_slot, glob_dat, absolute;
};
MachineTypes TypesFor(uint16_t machine);

// File offset of the d_val of the first dynamic entry with `tag`, or 0.
uint64_t DynamicValueOffset(const std::vector<uint8_t>& file, uint64_t tag);
uint64_t ReadWord(const std::vector<uint8_t>& file, uint64_t off, bool is64);
void WriteWord(std::vector<uint8_t>* file, uint64_t off, bool is64, uint64_t v);

// A module loaded in this process, by a substring of its dl_iterate_phdr name.
struct LoadedModule {
  uintptr_t bias = 0;
  const void* phdrs = nullptr;
  size_t phnum = 0;
  std::string name;
};
bool FindLoaded(const std::string& name_part, LoadedModule* out);
std::vector<LoadedModule> AllLoaded();

}  // namespace jp::plt::testing

#endif  // JANKPROBE_TESTS_PLT_PARSER_TEST_UTIL_H_

namespace jp::plt::testing {
// File offset of a link-time vaddr, through the PT_LOAD headers; 0 when not file-backed.
uint64_t VaddrToFileOffset(const std::vector<uint8_t>& file, uint64_t vaddr);
// One past the last file byte any PT_LOAD segment covers.
uint64_t LoadSegmentsFileEnd(const std::vector<uint8_t>& file);
}  // namespace jp::plt::testing
