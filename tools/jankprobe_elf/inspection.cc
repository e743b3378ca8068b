#include "tools/jankprobe_elf/inspection.h"

#include <elf.h>

#include <cinttypes>
#include <unordered_map>

#include "plt/elf_image.h"
#include "tools/jankprobe_elf/mapped_file.h"

namespace jp::elftool {

const char* SlotSourceName(SlotSource source) {
  switch (source) {
    case SlotSource::kJmpRel: return "jmprel";
    case SlotSource::kDyn: return "dyn";
    case SlotSource::kAndroidPacked: return "android";
  }
  return "?";
}

const char* SlotClassName(SlotClass kind) {
  switch (kind) {
    case SlotClass::kJumpSlot: return "jump_slot";
    case SlotClass::kGlobDat: return "glob_dat";
    case SlotClass::kAbsolute: return "absolute";
  }
  return "?";
}

void InspectFile(const std::string& path, bool run_check, Inspection* out) {
  *out = Inspection();
  out->path = path;
  MappedFile file;
  if (!file.Open(path, &out->error)) return;
  if (!ReadWithLibelf(file.data(), file.size(), &out->image, &out->error)) return;
  std::string why;
  if (!DecodePltStubs(out->image, &out->stubs, &why)) {
    out->error = "PLT stubs: " + why;
    return;
  }
  out->image.plt_sections.clear();

  std::unordered_map<uint64_t, size_t> first_stub_for_slot;
  for (size_t i = 0; i < out->stubs.size(); ++i) first_stub_for_slot.emplace(out->stubs[i].slot_vaddr, i);
  std::unordered_map<uint64_t, bool> slot_named;
  out->stub_of_slot.assign(out->image.slots.size(), -1);
  for (size_t i = 0; i < out->image.slots.size(); ++i) {
    slot_named[out->image.slots[i].got_vaddr] = true;
    auto it = first_stub_for_slot.find(out->image.slots[i].got_vaddr);
    if (it != first_stub_for_slot.end()) out->stub_of_slot[i] = static_cast<int>(it->second);
  }
  for (size_t i = 0; i < out->stubs.size(); ++i) {
    if (slot_named.count(out->stubs[i].slot_vaddr) == 0) out->unmatched_stubs.push_back(i);
  }
  if (run_check) {
    out->check.emplace();
    CheckAgainstEngine(file.data(), file.size(), out->image, &*out->check);
  }
}

namespace {

const char* TypeName(uint16_t e_type) {
  switch (e_type) {
    case ET_DYN: return "shared object";
    case ET_EXEC: return "executable";
    case ET_REL: return "relocatable object";
    default: return "ELF file";
  }
}

}  // namespace

void PrintTable(const Inspection& in, bool run_check, std::FILE* to) {
  if (!in.error.empty()) {
    std::fprintf(to, "%s: error: %s\n", in.path.c_str(), in.error.c_str());
    return;
  }
  const LibelfImage& img = in.image;
  size_t by_source[3] = {0, 0, 0};
  for (const LibelfSlot& s : img.slots) ++by_source[static_cast<int>(s.source)];
  std::fprintf(to, "%s: %s ELF%d %s, %zu import slots (%zu jmprel, %zu dyn, %zu android packed), %zu PLT stubs\n",
               in.path.c_str(), MachineName(img.machine), img.is_64bit ? 64 : 32, TypeName(img.elf_type),
               img.slots.size(), by_source[0], by_source[1], by_source[2], in.stubs.size());
  if (!img.slots.empty()) {
    std::fprintf(to, "  %-18s %-22s %-7s %-28s %s\n", "GOT vaddr", "relocation", "table", "PLT stub", "symbol");
  }
  for (size_t i = 0; i < img.slots.size(); ++i) {
    const LibelfSlot& s = img.slots[i];
    char stub[64] = "-";
    if (in.stub_of_slot[i] >= 0) {
      const PltStub& p = in.stubs[static_cast<size_t>(in.stub_of_slot[i])];
      std::snprintf(stub, sizeof(stub), "0x%" PRIx64 " %s", p.stub_vaddr, p.section.c_str());
    }
    std::string symbol = s.symbol.empty() ? "(no symbol)" : s.symbol;
    if (!s.version.empty()) symbol += "@" + s.version;
    if (s.addend != 0) symbol += " + " + std::to_string(s.addend);
    std::fprintf(to, "  0x%-16" PRIx64 " %-22s %-7s %-28s %s\n", s.got_vaddr,
                 jp::plt::RelocTypeName(img.machine, s.reloc_type), SlotSourceName(s.source), stub, symbol.c_str());
  }
  for (size_t i : in.unmatched_stubs) {
    const PltStub& p = in.stubs[i];
    // GOT[2] (two words past DT_PLTGOT) holds the dynamic linker's lazy-binding entry point.
    const bool resolver = img.has_pltgot && p.slot_vaddr == img.pltgot + (img.is_64bit ? 16 : 8);
    std::fprintf(to, "  PLT stub 0x%" PRIx64 " %s jumps through 0x%" PRIx64 ", %s (%s)\n", p.stub_vaddr,
                 p.section.c_str(), p.slot_vaddr,
                 resolver ? "the lazy-binding resolver entry (PLT0)" : "which no relocation names",
                 p.instruction.c_str());
  }
  if (run_check && in.check) {
    const CheckResult& c = *in.check;
    if (c.agree()) {
      std::fprintf(to, "  check: engine agrees (%zu slots)\n", c.engine_slots);
    } else {
      std::fprintf(to, "  check: DISAGREEMENT (libelf %zu slots, engine %zu)\n", c.libelf_slots, c.engine_slots);
      for (const std::string& line : DescribeDifferences(img.machine, c)) std::fprintf(to, "    %s\n", line.c_str());
    }
  }
}

}  // namespace jp::elftool
