// ElfImage on the native fixtures: file images against the section headers (an independent reading),
// loaded modules against file images and against what the dynamic loader actually wrote into the slots.
#include "plt/elf_image.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstring>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "tests/plt/parser_test_util.h"

namespace jp::plt {
namespace {

using testing::FixturePath;
using testing::ReadFile;

const char* const kConsumers[] = {"libplt_lazy.so", "libplt_partial_relro.so", "libplt_full_relro.so",
                                  "libplt_noplt.so"
#ifdef JP_HAVE_LLD_FIXTURES
                                  , "libplt_lld.so"
#endif
};

struct Key {
  uint64_t got;
  uint32_t type;
  std::string symbol;
  int64_t addend;
  bool operator<(const Key& o) const {
    return std::tie(got, type, symbol, addend) < std::tie(o.got, o.type, o.symbol, o.addend);
  }
  bool operator==(const Key& o) const { return !(*this < o) && !(o < *this); }
};

std::vector<ImportSlot> AllSlots(const ElfImage& image) {
  std::vector<ImportSlot> slots;
  Status st = image.ForEachImportSlot([&](const ImportSlot& s) {
    slots.push_back(s);
    return true;
  });
  EXPECT_TRUE(st.ok()) << st.message();
  return slots;
}

std::set<Key> Keys(const std::vector<ImportSlot>& slots) {
  std::set<Key> keys;
  for (const ImportSlot& s : slots) keys.insert({s.got_vaddr, s.reloc_type, std::string(s.symbol), s.addend});
  return keys;
}

// What the import slots must be, from the section headers: slot-type relocations with a symbol,
// minus absolute ones against local symbols or with an addend.
std::set<Key> ExpectedKeys(const testing::SectionView& v) {
  testing::MachineTypes t = testing::TypesFor(v.machine);
  std::set<Key> keys;
  for (const testing::SectionReloc& r : v.relocs) {
    if (r.sym == 0) continue;
    if (r.type != t.jump_slot && r.type != t.glob_dat && r.type != t.absolute) continue;
    if (r.type == t.absolute && (r.local || r.addend != 0)) continue;
    keys.insert({r.offset, r.type, r.symbol, r.addend});
  }
  return keys;
}

const ImportSlot* FindSlot(const std::vector<ImportSlot>& slots, const std::string& symbol) {
  for (const ImportSlot& s : slots) {
    if (s.symbol == symbol) return &s;
  }
  return nullptr;
}

class FileImage : public ::testing::TestWithParam<const char*> {};

TEST_P(FileImage, SlotsMatchSectionHeaders) {
  std::vector<uint8_t> file = ReadFile(FixturePath(GetParam()));
  ASSERT_FALSE(file.empty()) << GetParam();
  std::unique_ptr<ElfImage> image;
  Status st = ElfImage::FromFile(file.data(), file.size(), &image);
  ASSERT_TRUE(st.ok()) << st.message();
  testing::SectionView view;
  ASSERT_TRUE(testing::ReadSections(file, &view));
  EXPECT_EQ(image->machine(), view.machine);
  EXPECT_EQ(image->is_64bit(), view.is64);
  EXPECT_FALSE(image->is_loaded());
  std::vector<ImportSlot> slots = AllSlots(*image);
  EXPECT_EQ(Keys(slots), ExpectedKeys(view));
  EXPECT_EQ(image->dynamic_symbol_count(), view.dynsym_count);
}

TEST_P(FileImage, EachImportHasTheKindItsReferenceImplies) {
  std::vector<uint8_t> file = ReadFile(FixturePath(GetParam()));
  std::unique_ptr<ElfImage> image;
  ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &image).ok());
  testing::MachineTypes t = testing::TypesFor(image->machine());
  std::vector<ImportSlot> slots = AllSlots(*image);

  const ImportSlot* mul = FindSlot(slots, "fixture_mul");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->kind, SlotKind::kGlobDat);
  EXPECT_EQ(mul->reloc_type, t.glob_dat);
  EXPECT_EQ(mul->table, RelocTable::kDyn);

  const ImportSlot* sub = FindSlot(slots, "fixture_sub");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->kind, SlotKind::kAbsolute);
  EXPECT_EQ(sub->reloc_type, t.absolute);
  EXPECT_EQ(sub->addend, 0);

  bool noplt = std::string(GetParam()) == "libplt_noplt.so";
#if defined(__arm__)
  noplt = false;  // GCC ignores -fno-plt on arm: calls still go through the PLT
#endif
  for (const char* called : {"fixture_add", "fixture_versioned", "puts", "strlen"}) {
    const ImportSlot* s = FindSlot(slots, called);
    ASSERT_NE(s, nullptr) << called;
    EXPECT_EQ(s->kind, noplt ? SlotKind::kGlobDat : SlotKind::kJumpSlot) << called;
    EXPECT_EQ(s->reloc_type, noplt ? t.glob_dat : t.jump_slot) << called;
    EXPECT_EQ(s->table, noplt ? RelocTable::kDyn : RelocTable::kJmpRel) << called;
  }
  EXPECT_EQ(FindSlot(slots, "fixture_versioned")->version, "FIXTURE_1.0");
  EXPECT_EQ(FindSlot(slots, "puts")->version.substr(0, 6), "GLIBC_");
  EXPECT_EQ(FindSlot(slots, "fixture_add")->version, "");
  // The local function pointer is a RELATIVE relocation: never a slot.
  EXPECT_EQ(FindSlot(slots, "local_helper"), nullptr);
}

TEST_P(FileImage, FindImportSlotsFiltersByNameAndVersion) {
  std::vector<uint8_t> file = ReadFile(FixturePath(GetParam()));
  std::unique_ptr<ElfImage> image;
  ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &image).ok());
  std::vector<ImportSlot> all = AllSlots(*image);
  for (const char* name : {"fixture_add", "fixture_mul", "fixture_sub", "puts", "fixture_versioned"}) {
    std::vector<ImportSlot> found = {ImportSlot()};  // must be cleared
    ASSERT_TRUE(image->FindImportSlots(name, "", &found).ok());
    size_t expected = std::count_if(all.begin(), all.end(), [&](const ImportSlot& s) { return s.symbol == name; });
    EXPECT_EQ(found.size(), expected) << name;
    EXPECT_GE(found.size(), 1u) << name;
    for (const ImportSlot& s : found) EXPECT_EQ(s.symbol, name);
  }
  std::vector<ImportSlot> found;
  ASSERT_TRUE(image->FindImportSlots("fixture_versioned", "FIXTURE_1.0", &found).ok());
  EXPECT_EQ(found.size(), 1u);
  ASSERT_TRUE(image->FindImportSlots("fixture_versioned", "FIXTURE_2.0", &found).ok());
  EXPECT_TRUE(found.empty());
  ASSERT_TRUE(image->FindImportSlots("fixture_ad", "", &found).ok());  // a prefix is not a match
  EXPECT_TRUE(found.empty());
  ASSERT_TRUE(image->FindImportSlots("not_imported_anywhere", "", &found).ok());
  EXPECT_TRUE(found.empty());
}

INSTANTIATE_TEST_SUITE_P(Consumers, FileImage, ::testing::ValuesIn(kConsumers));

// The same fixtures dlopen'ed: the loaded-module reading must agree with the file, and each slot must
// hold what the loader resolved it to.
class LoadedImage : public ::testing::TestWithParam<const char*> {};

TEST_P(LoadedImage, AgreesWithFileAndWithTheLoader) {
  const std::string path = FixturePath(GetParam());
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  void* provider = dlopen(FixturePath("libplt_provider.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  void* versioned = dlopen(FixturePath("libplt_versioned_provider.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(provider, nullptr);
  ASSERT_NE(versioned, nullptr);

  testing::LoadedModule mod;
  ASSERT_TRUE(testing::FindLoaded(GetParam(), &mod));
  std::unique_ptr<ElfImage> loaded;
  Status st = ElfImage::FromLoaded(mod.bias, mod.phdrs, mod.phnum, &loaded);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(loaded->is_loaded());
  EXPECT_EQ(loaded->load_bias(), mod.bias);
#if defined(__GLIBC__)
  // glibc's ld.so relocates the d_ptr entries of a writable .dynamic in place.
  EXPECT_TRUE(loaded->dynamic_pointers_were_absolute());
#endif

  std::vector<uint8_t> file = ReadFile(path);
  std::unique_ptr<ElfImage> from_file;
  ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &from_file).ok());
  std::vector<ImportSlot> a = AllSlots(*loaded), b = AllSlots(*from_file);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].got_vaddr, b[i].got_vaddr);
    EXPECT_EQ(a[i].reloc_type, b[i].reloc_type);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].table, b[i].table);
    EXPECT_EQ(a[i].symbol, b[i].symbol);
    EXPECT_EQ(a[i].version, b[i].version);
  }
  EXPECT_EQ(loaded->dynamic_symbol_count(), from_file->dynamic_symbol_count());
  EXPECT_EQ(loaded->relro_size(), from_file->relro_size());

  // Ground truth from the loader: with RTLD_NOW every slot holds the resolved definition.
  const std::map<std::string, void*> targets = {{"fixture_add", dlsym(provider, "fixture_add")},
                                                {"fixture_mul", dlsym(provider, "fixture_mul")},
                                                {"fixture_sub", dlsym(provider, "fixture_sub")},
                                                {"fixture_versioned", dlsym(versioned, "fixture_versioned")}};
  size_t checked = 0;
  for (const ImportSlot& s : a) {
    auto it = targets.find(std::string(s.symbol));
    if (it == targets.end()) continue;
    void* slot_value;
    std::memcpy(&slot_value, reinterpret_cast<const void*>(mod.bias + s.got_vaddr), sizeof slot_value);
    EXPECT_EQ(slot_value, it->second) << s.symbol;
    ++checked;
  }
  EXPECT_GE(checked, 4u);
  dlclose(versioned);
  dlclose(provider);
  dlclose(handle);
}

INSTANTIATE_TEST_SUITE_P(Consumers, LoadedImage, ::testing::ValuesIn(kConsumers));

// RELRO layout facts of how each fixture was linked.
bool InRelro(const ElfImage& image, uint64_t vaddr) {
  return vaddr >= image.relro_vaddr() && vaddr - image.relro_vaddr() < image.relro_size();
}

TEST(ElfImageRelro, MatchesTheLinkMode) {
  for (const char* name : {"libplt_lazy.so", "libplt_partial_relro.so", "libplt_full_relro.so"}) {
    std::vector<uint8_t> file = ReadFile(FixturePath(name));
    std::unique_ptr<ElfImage> image;
    ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &image).ok());
    std::string n = name;
    if (n == "libplt_lazy.so") {
      EXPECT_EQ(image->relro_size(), 0u);
      continue;
    }
    EXPECT_GT(image->relro_size(), 0u) << name;
    for (const ImportSlot& s : AllSlots(*image)) {
      if (s.kind == SlotKind::kJumpSlot) {
        // -z lazy keeps .got.plt writable after start-up; -z now moves it under RELRO.
        EXPECT_EQ(InRelro(*image, s.got_vaddr), n == "libplt_full_relro.so") << name << " " << s.symbol;
      } else if (s.kind == SlotKind::kAbsolute) {
        EXPECT_TRUE(InRelro(*image, s.got_vaddr)) << name << " " << s.symbol;  // .data.rel.ro
      } else {
#if defined(__arm__)
        // GNU ld for arm keeps one .got for PLT and non-PLT entries; with -z lazy it stays writable.
        EXPECT_EQ(InRelro(*image, s.got_vaddr), n == "libplt_full_relro.so") << name << " " << s.symbol;
#else
        EXPECT_TRUE(InRelro(*image, s.got_vaddr)) << name << " " << s.symbol;  // .got (apart from .got.plt)
#endif
      }
    }
  }
}

// Exports: file image and loaded module against dlsym, for each hash-table style.
TEST(ElfImageLookupExport, AgreesWithDlsymForEveryHashStyle) {
  for (const char* name : {"libplt_provider.so", "libplt_provider_sysv.so", "libplt_provider_both.so"}) {
    const std::string path = FixturePath(name);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    testing::LoadedModule mod;
    ASSERT_TRUE(testing::FindLoaded(name, &mod));
    std::unique_ptr<ElfImage> loaded, from_file;
    ASSERT_TRUE(ElfImage::FromLoaded(mod.bias, mod.phdrs, mod.phnum, &loaded).ok());
    std::vector<uint8_t> file = ReadFile(path);
    ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &from_file).ok());
    testing::SectionView view;
    ASSERT_TRUE(testing::ReadSections(file, &view));
    EXPECT_EQ(from_file->dynamic_symbol_count(), view.dynsym_count) << name;
    EXPECT_EQ(loaded->dynamic_symbol_count(), view.dynsym_count) << name;

    for (const char* sym : {"fixture_add", "fixture_mul", "fixture_sub", "fixture_counter"}) {
      uint64_t v_file = 0, v_loaded = 0;
      ASSERT_TRUE(from_file->LookupExport(sym, &v_file)) << name << " " << sym;
      ASSERT_TRUE(loaded->LookupExport(sym, &v_loaded)) << name << " " << sym;
      EXPECT_EQ(v_file, v_loaded);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(dlsym(handle, sym)), mod.bias + v_loaded) << name << " " << sym;
    }
    EXPECT_FALSE(from_file->LookupExport("fixture_div", nullptr));
    EXPECT_FALSE(from_file->LookupExport("fixture_ad", nullptr));
    EXPECT_FALSE(from_file->LookupExport("__cxa_finalize", nullptr));  // imported, not defined here
    dlclose(handle);
  }
}

TEST(ElfImageLookupExport, FindsAVersionedDefinition) {
  std::vector<uint8_t> file = ReadFile(FixturePath("libplt_versioned_provider.so"));
  std::unique_ptr<ElfImage> image;
  ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &image).ok());
  uint64_t v = 0;
  EXPECT_TRUE(image->LookupExport("fixture_versioned", &v));
  EXPECT_NE(v, 0u);
}

// The C library as the loader mapped it: the engine's real target.
TEST(ElfImageSystem, LibcLoadedAndFileAgree) {
  testing::LoadedModule mod;
  ASSERT_TRUE(testing::FindLoaded("libc.so", &mod));
  std::unique_ptr<ElfImage> loaded;
  Status st = ElfImage::FromLoaded(mod.bias, mod.phdrs, mod.phnum, &loaded);
  ASSERT_TRUE(st.ok()) << st.message();
  void* libc = dlopen(mod.name.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  for (const char* sym : {"puts", "sendto", "recvfrom", "malloc", "free"}) {  // no IFUNCs: dlsym resolves those
    uint64_t v = 0;
    ASSERT_TRUE(loaded->LookupExport(sym, &v)) << sym;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dlsym(libc, sym)), mod.bias + v) << sym;
  }
  dlclose(libc);

  std::vector<uint8_t> file = ReadFile(mod.name);
  ASSERT_FALSE(file.empty()) << mod.name;
  std::unique_ptr<ElfImage> from_file;
  ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &from_file).ok());
  EXPECT_EQ(Keys(AllSlots(*loaded)), Keys(AllSlots(*from_file)));
  testing::SectionView view;
  ASSERT_TRUE(testing::ReadSections(file, &view));
  EXPECT_EQ(Keys(AllSlots(*from_file)), ExpectedKeys(view));
  EXPECT_EQ(from_file->dynamic_symbol_count(), view.dynsym_count);
}

// Every module in the process (executable, ld.so, libc, libstdc++, the vdso when there is one)
// either parses or is rejected with a reason.
TEST(ElfImageSystem, EveryLoadedModuleParsesOrIsRejectedCleanly) {
  size_t parsed = 0;
  for (const testing::LoadedModule& m : testing::AllLoaded()) {
    std::unique_ptr<ElfImage> image;
    Status st = ElfImage::FromLoaded(m.bias, m.phdrs, m.phnum, &image);
    if (!st.ok()) {
      EXPECT_FALSE(st.message().empty()) << m.name;
      continue;
    }
    ++parsed;
    size_t n = 0;
    EXPECT_TRUE(image->ForEachImportSlot([&](const ImportSlot&) { return ++n, true; }).ok()) << m.name;
    if (!m.name.empty() && m.name.find("vdso") == std::string::npos && m.name[0] == '/') {
      std::vector<uint8_t> file = ReadFile(m.name);
      std::unique_ptr<ElfImage> from_file;
      ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &from_file).ok()) << m.name;
      EXPECT_EQ(Keys(AllSlots(*image)), Keys(AllSlots(*from_file))) << m.name;
    }
  }
  EXPECT_GE(parsed, 3u);  // at least the test, libc and the dynamic loader
}

// FindImportSlots goes through the hash tables to find candidate symbols; it must find exactly what a
// full walk filtered by name finds, for every imported name of every module in the process.
TEST(ElfImageSystem, FindImportSlotsAgreesWithAFullWalkEverywhere) {
  size_t names_checked = 0;
  for (const testing::LoadedModule& m : testing::AllLoaded()) {
    std::unique_ptr<ElfImage> image;
    if (!ElfImage::FromLoaded(m.bias, m.phdrs, m.phnum, &image).ok()) continue;
    std::map<std::string, std::set<Key>> by_name;
    for (const ImportSlot& s : AllSlots(*image)) {
      by_name[std::string(s.symbol)].insert({s.got_vaddr, s.reloc_type, std::string(s.symbol), s.addend});
    }
    std::vector<ImportSlot> found;
    for (const auto& [name, keys] : by_name) {
      ASSERT_TRUE(image->FindImportSlots(name, "", &found).ok());
      EXPECT_EQ(Keys(found), keys) << m.name << " " << name;
      ++names_checked;
    }
  }
  EXPECT_GT(names_checked, 100u);
}

TEST(ElfImageSystem, ForEachStopsWhenTheCallbackSaysSo) {
  std::vector<uint8_t> file = ReadFile(FixturePath("libplt_lazy.so"));
  std::unique_ptr<ElfImage> image;
  ASSERT_TRUE(ElfImage::FromFile(file.data(), file.size(), &image).ok());
  size_t calls = 0;
  EXPECT_TRUE(image->ForEachImportSlot([&](const ImportSlot&) { return ++calls < 2; }).ok());
  EXPECT_EQ(calls, 2u);
}

}  // namespace
}  // namespace jp::plt
