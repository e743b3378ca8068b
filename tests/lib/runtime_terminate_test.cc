// libjankprobe.so's copy of the C++ runtime uses the terminate handler of lib/lib_anchor.cc, not libstdc++'s
// verbose one, which would link the whole demangler in (its tables alone took RELRO from two pages to
// three, private in every app that loads us). The library must hold no demangler, and the handler must
// still say what happened before it aborts.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tests/lib/elf_sections.h"

namespace __gnu_cxx {
void __verbose_terminate_handler();  // lib/lib_anchor.cc, compiled into this test too
}  // namespace __gnu_cxx

namespace {

struct Image {
  bool opened = false;
  std::vector<std::string> symbols;  // .symtab
  std::vector<std::string> needed;   // DT_NEEDED
  uint64_t relro_bytes = 0;          // PT_GNU_RELRO's size
};

Image ReadImage(const char* path) {
  Image image;
  image.opened = jp::testing::WalkElf(
      path,
      [&image](const jp::testing::ElfSection& sec) {
        if (sec.header.sh_type == SHT_DYNAMIC) sec.AppendNeeded(&image.needed);
        if (sec.header.sh_type != SHT_SYMTAB) return;
        for (size_t i = 0; i < sec.count(); ++i) {
          GElf_Sym sym;
          const char* name = nullptr;
          if (sec.Symbol(i, &sym, &name)) image.symbols.push_back(name);
        }
      },
      [&image](const GElf_Phdr& ph) {
        if (ph.p_type == PT_GNU_RELRO) image.relro_bytes = ph.p_memsz;
      });
  EXPECT_TRUE(image.opened) << path;
  return image;
}

TEST(RuntimeTerminate, TheLibraryHoldsNoDemangler) {
  const Image image = ReadImage(JP_LIBRARY_PATH);
  ASSERT_TRUE(image.opened);
  ASSERT_FALSE(image.symbols.empty()) << "the unstripped library has no symbol table";
  bool own_handler = false;
  for (const std::string& name : image.symbols) {
    for (const char* banned : {"__cxa_demangle", "cplus_demangle", "d_print_comp"}) {
      EXPECT_EQ(name.find(banned), std::string::npos) << name << " (" << banned << ") is linked in";
    }
    own_handler |= name == "_ZN9__gnu_cxx27__verbose_terminate_handlerEv";
  }
  // With the runtime linked in statically (the shipped configuration) its terminate handler is ours; a
  // build that links libstdc++.so (the sanitizer build) uses that one's and drops ours as unreferenced.
  bool dynamic_runtime = false;
  for (const std::string& lib : image.needed) dynamic_runtime |= lib.rfind("libstdc++", 0) == 0;
  if (!dynamic_runtime) {
    EXPECT_TRUE(own_handler) << "lib/lib_anchor.cc's terminate handler is not in the library";
  }
  RecordProperty("relro_bytes", std::to_string(image.relro_bytes));
}

// RELRO is written by the loader's relocations, so each of its pages is private and resident in every app
// that loads us. Without the demangler's tables and with the input monitor's and JNI_OnLoad's relocated
// tables moved after .data (lib/pointer_tables.ld), what is left (the runtime's vtables, our other small
// tables, .dynamic, the GOT: ~3.6 KB) fits one page.
// A new table that lands in RELRO again (a rule that no longer matches), or a runtime member pulled back
// in, shows here before it costs a page. Checked where the runtime is linked in statically (the shipped
// configuration); a build against libstdc++.so lays out its own.
TEST(LibraryRelro, FitsOnePage) {
  const Image image = ReadImage(JP_LIBRARY_PATH);
  ASSERT_TRUE(image.opened);
  bool dynamic_runtime = false;
  for (const std::string& lib : image.needed) dynamic_runtime |= lib.rfind("libstdc++", 0) == 0;
  if (dynamic_runtime) GTEST_SKIP() << "libstdc++ is linked dynamically";
  ASSERT_GT(image.relro_bytes, 0u) << "no PT_GNU_RELRO (linked without -z relro?)";
  EXPECT_LE(image.relro_bytes, 4096u) << "RELRO spans more than one page";
}

// The handler as the runtime calls it: inside the handling of the exception that escaped.
void TerminateWhileHandling() {
  try {
    throw std::runtime_error("escaped");
  } catch (...) {
    __gnu_cxx::__verbose_terminate_handler();
  }
}

TEST(RuntimeTerminateDeathTest, TheHandlerNamesTheExceptionTypeAndAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(TerminateWhileHandling(), "jankprobe: terminate called after an uncaught exception of type "
                                         "St13runtime_error");
  EXPECT_DEATH(__gnu_cxx::__verbose_terminate_handler(), "jankprobe: terminate called\n");
}

}  // namespace
