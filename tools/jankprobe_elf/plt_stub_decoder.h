// Capstone decoding of PLT stubs: which GOT slot each stub in .plt / .plt.sec / .plt.got jumps through.
// The stub sequences are followed by tracking the registers the stub builds its address in:
//   x86_64   jmp [rip + disp]                      slot = next instruction + disp
//   i386     jmp [ebx + disp] (PIC) / jmp [abs]    slot = DT_PLTGOT + disp / abs
//   aarch64  adrp x16, page; ldr x17, [x16, #off]  slot = page + off (an add to x16 is followed too)
//   arm      add ip, pc, #a; add ip, ip, #b...; ldr pc, [ip, #off]!   slot = insn + 8 + a + b... + off
// A stub's address is its first instruction (the endbr / bti landing pad when there is one). The lazy
// resolver entry (PLT0) jumps through a reserved GOT word that no relocation names; it comes out as a
// stub that matches no slot.
#ifndef JANKPROBE_TOOLS_JANKPROBE_ELF_PLT_STUB_DECODER_H_
#define JANKPROBE_TOOLS_JANKPROBE_ELF_PLT_STUB_DECODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/jankprobe_elf/libelf_slots.h"

namespace jp::elftool {

struct PltStub {
  uint64_t stub_vaddr = 0;  // first instruction of the stub
  uint64_t slot_vaddr = 0;  // GOT slot it loads its target from
  std::string section;      // ".plt", ".plt.sec", ".plt.got"
  std::string instruction;  // the instruction that reads the slot, as capstone prints it
};

// Decodes one code section. `pltgot` is DT_PLTGOT (i386 PIC stubs address the GOT from it); pass
// has_pltgot=false when the image has none. False with a reason when capstone cannot be opened for the
// machine; undecodable bytes inside the section are skipped, not errors (PLT padding is not code).
bool DecodePltSection(uint16_t machine, bool has_pltgot, uint64_t pltgot, const CodeSection& section,
                      std::vector<PltStub>* out, std::string* error);

// All PLT sections of an image read by ReadWithLibelf.
bool DecodePltStubs(const LibelfImage& image, std::vector<PltStub>* out, std::string* error);

}  // namespace jp::elftool

#endif  // JANKPROBE_TOOLS_JANKPROBE_ELF_PLT_STUB_DECODER_H_
