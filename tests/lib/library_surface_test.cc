// libjankprobe.so runs inside other people's apps: it may need only libc-level libraries (on Android libc,
// libdl, liblog) and must export only the public C API and JNI_OnLoad, nothing of its C++ inside.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/lib/elf_sections.h"

namespace {

struct Surface {
  bool opened = false;
  std::vector<std::string> needed;
  std::set<std::string> exported;
  std::set<std::string> sections;
  std::vector<std::string> local_symbols;  // .symtab (absent once stripped)
  std::string debuglink;                   // file named by .gnu_debuglink
};

Surface ReadSurface(const char* path) {
  Surface s;
  s.opened = jp::testing::WalkElf(path, [&s](const jp::testing::ElfSection& sec) {
    s.sections.insert(sec.name);
    if (std::string(sec.name) == ".gnu_debuglink" && sec.data && sec.data->d_size > 0) {
      s.debuglink = static_cast<const char*>(sec.data->d_buf);  // NUL-terminated name, then padding and CRC
    }
    if (sec.header.sh_type == SHT_DYNAMIC) sec.AppendNeeded(&s.needed);
    if (sec.header.sh_type != SHT_SYMTAB && sec.header.sh_type != SHT_DYNSYM) return;
    for (size_t i = 0; i < sec.count(); ++i) {
      GElf_Sym sym;
      const char* name = nullptr;
      if (!sec.Symbol(i, &sym, &name)) continue;
      if (sec.header.sh_type == SHT_SYMTAB) {
        s.local_symbols.push_back(name);
      } else if (sym.st_shndx != SHN_UNDEF && GELF_ST_BIND(sym.st_info) != STB_LOCAL &&
                 GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT) {
        s.exported.insert(name);
      }
    }
  });
  EXPECT_TRUE(s.opened) << path;
  return s;
}

TEST(LibrarySurface, DependsOnlyOnLibcLevelLibraries) {
  if (JP_SANITIZED) GTEST_SKIP() << "sanitizer runtimes are linked in this build";
  const std::set<std::string> allowed = {"libc.so.6", "libdl.so.2", "libm.so.6", "libpthread.so.0",
                                         "ld-linux-x86-64.so.2", "libc.so", "libdl.so", "liblog.so", "libm.so"};
  Surface s = ReadSurface(JP_LIBRARY_PATH);
  ASSERT_FALSE(s.needed.empty());
  for (const std::string& n : s.needed) EXPECT_TRUE(allowed.count(n)) << "unexpected dependency " << n;
}

TEST(LibrarySurface, ExportsOnlyThePublicApi) {
  Surface s = ReadSurface(JP_LIBRARY_PATH);
  for (const char* required : {"jankprobe_start", "jankprobe_configure", "jankprobe_stop", "jankprobe_export",
                               "jankprobe_last_error", "jankprobe_set_report_listener", "jp_plt_hook_install",
                               "jp_plt_hook_remove", "jp_plt_hook_slot_count", "jp_plt_last_error", "JNI_OnLoad"}) {
    EXPECT_TRUE(s.exported.count(required)) << required << " is not exported";
  }
  for (const std::string& name : s.exported) {
    const bool ours = name.rfind("jankprobe_", 0) == 0 || name.rfind("jp_plt_", 0) == 0 || name == "JNI_OnLoad";
    // Sanitizer builds export their runtime's interceptors; only our own names matter there.
    if (JP_SANITIZED && !ours) continue;
    EXPECT_TRUE(ours) << "leaks an internal symbol: " << name;
  }
}

// The stripped copy an app ships: same dependencies and exports, no DWARF and no symbol table, and a
// debuglink to the debug file beside it, which holds the DWARF.
TEST(LibrarySurface, ShippedCopyIsStrippedWithADebugLink) {
  if (JP_SANITIZED) GTEST_SKIP() << "no shipped copy in sanitizer builds";
  Surface full = ReadSurface(JP_LIBRARY_PATH);
  Surface shipped = ReadSurface(JP_SHIPPED_PATH);
  ASSERT_TRUE(shipped.opened) << JP_SHIPPED_PATH;
  EXPECT_EQ(shipped.needed, full.needed);
  EXPECT_EQ(shipped.exported, full.exported);
  for (const std::string& name : shipped.sections) {
    EXPECT_NE(name.rfind(".debug_", 0), 0u) << "shipped copy still has " << name;
  }
  EXPECT_EQ(shipped.sections.count(".symtab"), 0u);
  EXPECT_EQ(shipped.debuglink, "libjankprobe.so.debug");
  Surface debug = ReadSurface((std::string(JP_SHIPPED_PATH) + ".debug").c_str());
  ASSERT_TRUE(debug.opened);
  // The debug file carries whatever DWARF the build made: none in a Release build (no -g).
  if (full.sections.count(".debug_info") != 0) {
    EXPECT_EQ(debug.sections.count(".debug_info"), 1u) << "the debug file lacks the library's DWARF";
  }
}

// The C++ runtime is linked in statically, so whatever part of it our code references comes along with its
// static initialisers. iostreams and locales (std::ifstream, std::ostringstream, std::locale...) bring
// ~770 KB of code, ~50 KB of relocations and initialisers that every app loading us would run and page
// in; they must stay out (read files with read(2), format with snprintf / std::to_chars).
TEST(LibrarySurface, NoIostreamOrLocaleRuntime) {
  Surface s = ReadSurface(JP_LIBRARY_PATH);
  ASSERT_FALSE(s.local_symbols.empty()) << "the unstripped library has no symbol table";
  for (const std::string& name : s.local_symbols) {
    for (const char* banned : {"8ios_base4Init", "6locale5_Impl", "13basic_filebuf", "19basic_ostringstream"}) {
      EXPECT_EQ(name.find(banned), std::string::npos) << name << " (" << banned << ") is linked in";
    }
  }
}

}  // namespace
