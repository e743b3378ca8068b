#include "tools/jankprobe_elf/plt_stub_decoder.h"

#include <capstone/capstone.h>
#include <elf.h>

#include <array>

namespace jp::elftool {
namespace {

// What is known about one register while walking a stub: its value and the address of the instruction
// that started computing it (the stub's first instruction).
struct KnownValue {
  bool known = false;
  uint64_t value = 0;
  uint64_t origin = 0;
};

class Capstone {
 public:
  ~Capstone() {
    if (insn_ != nullptr) cs_free(insn_, 1);
    if (open_) cs_close(&handle_);
  }

  bool Open(cs_arch arch, cs_mode mode, std::string* error) {
    cs_err err = cs_open(arch, mode, &handle_);
    if (err != CS_ERR_OK) {
      *error = std::string("capstone: ") + cs_strerror(err);
      return false;
    }
    open_ = true;
    cs_option(handle_, CS_OPT_DETAIL, CS_OPT_ON);
    insn_ = cs_malloc(handle_);
    if (insn_ == nullptr) {
      *error = "capstone: out of memory";
      return false;
    }
    return true;
  }

  csh handle() const { return handle_; }
  cs_insn* insn() const { return insn_; }

 private:
  csh handle_ = 0;
  bool open_ = false;
  cs_insn* insn_ = nullptr;
};

std::string Text(const cs_insn* insn) {
  std::string s = insn->mnemonic;
  if (insn->op_str[0] != '\0') s += std::string(" ") + insn->op_str;
  return s;
}

// Walks the section instruction by instruction; `step` sees each decoded instruction. Bytes capstone
// cannot decode are skipped by the machine's minimum instruction size.
template <typename Step>
void Walk(Capstone& cs, const CodeSection& section, size_t skip_size, Step step) {
  const uint8_t* code = section.bytes;
  size_t left = section.size;
  uint64_t address = section.vaddr;
  while (left > 0) {
    if (cs_disasm_iter(cs.handle(), &code, &left, &address, cs.insn())) {
      step(cs.insn());
      continue;
    }
    const size_t skip = left < skip_size ? left : skip_size;
    code += skip;
    left -= skip;
    address += skip;
  }
}

// The stub starts at its landing pad (endbr32/64, bti) when one sits right before the first address
// computation.
uint64_t WithLandingPad(uint64_t origin, bool pad_seen, uint64_t pad_addr, uint64_t pad_end) {
  return pad_seen && pad_end == origin ? pad_addr : origin;
}

bool DecodeX86(bool is64, bool has_pltgot, uint64_t pltgot, const CodeSection& section, std::vector<PltStub>* out,
               std::string* error) {
  Capstone cs;
  if (!cs.Open(CS_ARCH_X86, is64 ? CS_MODE_64 : CS_MODE_32, error)) return false;
  bool pad_seen = false;
  uint64_t pad_addr = 0;
  uint64_t pad_end = 0;
  Walk(cs, section, 1, [&](const cs_insn* insn) {
    // PLT0 pushes the link-map word (push [rip+x] / push [ebx+4]) right before its jump: that push
    // starts the stub.
    const bool push_mem = insn->id == X86_INS_PUSH && insn->detail->x86.op_count == 1 &&
                          insn->detail->x86.operands[0].type == X86_OP_MEM;
    if (insn->id == X86_INS_ENDBR64 || insn->id == X86_INS_ENDBR32 || push_mem) {
      if (!(pad_seen && pad_end == insn->address)) pad_addr = insn->address;  // extend a run of prefixes
      pad_seen = true;
      pad_end = insn->address + insn->size;
      return;
    }
    if (insn->id != X86_INS_JMP || insn->detail->x86.op_count != 1) return;
    const cs_x86_op& op = insn->detail->x86.operands[0];
    if (op.type != X86_OP_MEM || op.mem.index != X86_REG_INVALID || op.mem.segment != X86_REG_INVALID) return;
    uint64_t slot = 0;
    if (is64 && op.mem.base == X86_REG_RIP) {
      slot = insn->address + insn->size + static_cast<uint64_t>(op.mem.disp);
    } else if (!is64 && op.mem.base == X86_REG_EBX && has_pltgot) {
      slot = static_cast<uint32_t>(pltgot + static_cast<uint64_t>(op.mem.disp));
    } else if (!is64 && op.mem.base == X86_REG_INVALID) {
      slot = static_cast<uint32_t>(op.mem.disp);
    } else {
      return;
    }
    out->push_back({WithLandingPad(insn->address, pad_seen, pad_addr, pad_end), slot, section.name, Text(insn)});
  });
  return true;
}

bool DecodeAarch64(const CodeSection& section, std::vector<PltStub>* out, std::string* error) {
  Capstone cs;
  if (!cs.Open(CS_ARCH_ARM64, CS_MODE_ARM, error)) return false;
  std::array<KnownValue, ARM64_REG_ENDING> regs{};
  bool pad_seen = false;
  uint64_t pad_addr = 0;
  uint64_t pad_end = 0;
  Walk(cs, section, 4, [&](const cs_insn* insn) {
    const cs_arm64& d = insn->detail->arm64;
    auto reg_ok = [&](unsigned r) { return r < regs.size(); };
    // BTI is a HINT encoding; capstone 4 names it "hint" (newer ones "bti").
    if (insn->id == ARM64_INS_HINT || std::string(insn->mnemonic) == "bti") {
      pad_seen = true;
      pad_addr = insn->address;
      pad_end = insn->address + insn->size;
      return;
    }
    if (insn->id == ARM64_INS_ADRP && d.op_count == 2 && d.operands[0].type == ARM64_OP_REG &&
        d.operands[1].type == ARM64_OP_IMM && reg_ok(d.operands[0].reg)) {
      regs[d.operands[0].reg] = {true, static_cast<uint64_t>(d.operands[1].imm), insn->address};
      return;
    }
    if (insn->id == ARM64_INS_ADD && d.op_count == 3 && d.operands[0].type == ARM64_OP_REG &&
        d.operands[1].type == ARM64_OP_REG && d.operands[2].type == ARM64_OP_IMM && reg_ok(d.operands[0].reg) &&
        reg_ok(d.operands[1].reg) && d.operands[2].shift.type == ARM64_SFT_INVALID) {
      KnownValue src = regs[d.operands[1].reg];
      regs[d.operands[0].reg] = {src.known, src.value + static_cast<uint64_t>(d.operands[2].imm), src.origin};
      return;
    }
    if (insn->id == ARM64_INS_LDR && d.op_count == 2 && d.operands[1].type == ARM64_OP_MEM &&
        d.operands[1].mem.index == ARM64_REG_INVALID && reg_ok(d.operands[1].mem.base) &&
        d.operands[0].type == ARM64_OP_REG && d.operands[0].reg >= ARM64_REG_X0 &&
        d.operands[0].reg <= ARM64_REG_X28) {
      const KnownValue& base = regs[d.operands[1].mem.base];
      if (base.known) {
        out->push_back({WithLandingPad(base.origin, pad_seen, pad_addr, pad_end),
                        base.value + static_cast<uint64_t>(static_cast<int64_t>(d.operands[1].mem.disp)),
                        section.name, Text(insn)});
      }
      if (reg_ok(d.operands[0].reg)) regs[d.operands[0].reg] = {};
      return;
    }
    // Anything else that writes a register makes it unknown; a branch ends the stub.
    if (d.op_count > 0 && d.operands[0].type == ARM64_OP_REG && reg_ok(d.operands[0].reg)) {
      regs[d.operands[0].reg] = {};
    }
    if (insn->id == ARM64_INS_BR) regs.fill({});
  });
  return true;
}

uint32_t RotateRight(uint32_t v, uint32_t n) {
  n &= 31;
  return n == 0 ? v : (v >> n) | (v << (32 - n));
}

bool DecodeArm(const CodeSection& section, std::vector<PltStub>* out, std::string* error) {
  Capstone cs;
  if (!cs.Open(CS_ARCH_ARM, CS_MODE_ARM, error)) return false;
  std::array<KnownValue, ARM_REG_ENDING> regs{};
  Walk(cs, section, 4, [&](const cs_insn* insn) {
    const cs_arm& d = insn->detail->arm;
    auto reg_ok = [&](unsigned r) { return r < regs.size(); };
    const bool unconditional = d.cc == ARM_CC_AL || d.cc == ARM_CC_INVALID;
    // add rd, rn, #imm -- capstone 4 shows a non-canonical modified immediate as two operands
    // (#imm8, #rotation), a canonical one as the decoded constant.
    if (insn->id == ARM_INS_ADD && unconditional && (d.op_count == 3 || d.op_count == 4) &&
        d.operands[0].type == ARM_OP_REG && d.operands[1].type == ARM_OP_REG && d.operands[2].type == ARM_OP_IMM &&
        reg_ok(d.operands[0].reg) && reg_ok(d.operands[1].reg) &&
        (d.op_count == 3 || d.operands[3].type == ARM_OP_IMM)) {
      uint32_t imm = static_cast<uint32_t>(d.operands[2].imm);
      if (d.op_count == 4) imm = RotateRight(imm, static_cast<uint32_t>(d.operands[3].imm));
      KnownValue src;
      if (d.operands[1].reg == ARM_REG_PC) {
        src = {true, insn->address + 8, insn->address};  // ARM state: pc reads as this insn + 8
      } else {
        src = regs[d.operands[1].reg];
      }
      regs[d.operands[0].reg] = {src.known, static_cast<uint32_t>(src.value + imm), src.origin};
      return;
    }
    // ldr pc, [ip, #off]! -- the stub's jump through its slot.
    if (insn->id == ARM_INS_LDR && unconditional && d.op_count == 2 && d.operands[0].type == ARM_OP_REG &&
        d.operands[0].reg == ARM_REG_PC && d.operands[1].type == ARM_OP_MEM &&
        d.operands[1].mem.index == ARM_REG_INVALID && reg_ok(d.operands[1].mem.base)) {
      const KnownValue& base = regs[d.operands[1].mem.base];
      if (base.known) {
        out->push_back({base.origin, static_cast<uint32_t>(base.value + static_cast<uint32_t>(d.operands[1].mem.disp)),
                        section.name, Text(insn)});
      }
      regs.fill({});
      return;
    }
    if (d.op_count > 0 && d.operands[0].type == ARM_OP_REG && reg_ok(d.operands[0].reg)) {
      regs[d.operands[0].reg] = {};
    }
  });
  return true;
}

}  // namespace

bool DecodePltSection(uint16_t machine, bool has_pltgot, uint64_t pltgot, const CodeSection& section,
                      std::vector<PltStub>* out, std::string* error) {
  switch (machine) {
    case EM_X86_64: return DecodeX86(true, has_pltgot, pltgot, section, out, error);
    case EM_386: return DecodeX86(false, has_pltgot, pltgot, section, out, error);
    case EM_AARCH64: return DecodeAarch64(section, out, error);
    case EM_ARM: return DecodeArm(section, out, error);
    default:
      *error = "no PLT stub decoder for machine " + std::to_string(machine);
      return false;
  }
}

bool DecodePltStubs(const LibelfImage& image, std::vector<PltStub>* out, std::string* error) {
  out->clear();
  for (const CodeSection& section : image.plt_sections) {
    if (!DecodePltSection(image.machine, image.has_pltgot, image.pltgot, section, out, error)) return false;
  }
  return true;
}

}  // namespace jp::elftool
