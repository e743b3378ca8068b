// jankprobe-elf: lists the import slots of ELF shared objects with libelf, names the PLT stub that
// jumps through each (capstone), and with --check verifies the hook engine's parser against it.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tools/jankprobe_elf/inspection.h"
#include "tools/jankprobe_elf/json_output.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitDisagreement = 1;
constexpr int kExitUsage = 2;
constexpr int kExitBadFile = 3;

void PrintHelp(std::FILE* to) {
  std::fputs(
      "usage: jankprobe-elf [--json] [--check] FILE...\n"
      "\n"
      "Lists every import slot of each ELF file (x86_64, i386, arm, aarch64) that can hold a function\n"
      "address: JUMP_SLOT, GLOB_DAT and plain absolute relocations, read with libelf from .rel[a].plt,\n"
      ".rel[a].dyn and Android APS2-packed sections (decoded here too), with the symbol, its version from\n"
      ".gnu.version/.gnu.version_r, the relocation type and the GOT slot's link-time address. Each slot is\n"
      "shown next to the PLT stub (.plt, .plt.sec, .plt.got) that jumps through it, found with capstone.\n"
      "\n"
      "  --json    one JSON document on stdout instead of the table\n"
      "  --check   also run jankprobe's own ELF parser over the same bytes and compare the sets of\n"
      "            (GOT address, symbol, version, relocation type); differences are printed\n"
      "  --help    this text\n"
      "\n"
      "exit status:\n"
      "  0  every file was read (and, with --check, the engine agreed on every file)\n"
      "  1  --check found a disagreement (or the engine rejected a file libelf reads)\n"
      "  2  usage error\n"
      "  3  some file could not be read: missing, not ELF, unsupported machine, malformed\n"
      "     (takes precedence over 1; the other files are still reported)\n",
      to);
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  bool check = false;
  std::vector<std::string> paths;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!options_done && a[0] == '-' && a[1] != '\0') {
      if (std::strcmp(a, "--") == 0) {
        options_done = true;
      } else if (std::strcmp(a, "--json") == 0) {
        json = true;
      } else if (std::strcmp(a, "--check") == 0) {
        check = true;
      } else if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
        PrintHelp(stdout);
        return kExitOk;
      } else {
        std::fprintf(stderr, "jankprobe-elf: unknown option %s\n", a);
        PrintHelp(stderr);
        return kExitUsage;
      }
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "jankprobe-elf: no input files\n");
    PrintHelp(stderr);
    return kExitUsage;
  }

  int status = kExitOk;
  std::unique_ptr<jp::elftool::JsonOutput> json_out;
  if (json) json_out = std::make_unique<jp::elftool::JsonOutput>(stdout);
  for (const std::string& path : paths) {
    jp::elftool::Inspection in;
    jp::elftool::InspectFile(path, check, &in);
    if (!in.error.empty()) {
      status = kExitBadFile;
      std::fprintf(stderr, "jankprobe-elf: %s: %s\n", path.c_str(), in.error.c_str());
    } else if (in.check && !in.check->agree()) {
      if (status == kExitOk) status = kExitDisagreement;
      const std::vector<std::string> diffs = jp::elftool::DescribeDifferences(in.image.machine, *in.check);
      std::fprintf(stderr, "jankprobe-elf: %s: engine and libelf disagree (%zu difference%s; first: %s)\n",
                   path.c_str(), diffs.size(), diffs.size() == 1 ? "" : "s", diffs.empty() ? "?" : diffs[0].c_str());
    }
    if (json_out != nullptr) {
      json_out->Add(in);
    } else if (in.error.empty()) {
      jp::elftool::PrintTable(in, check, stdout);
    }
  }
  if (json_out != nullptr) json_out->Finish();
  if (check && json_out == nullptr) {
    std::fprintf(stderr, "jankprobe-elf: check %s\n", status == kExitOk ? "passed" : "FAILED");
  }
  return status;
}
