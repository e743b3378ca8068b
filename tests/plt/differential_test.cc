// The engine's ELF parser against libelf over real libraries nobody here wrote: every shared object in
// the host's /usr/lib/x86_64-linux-gnu and in the Debian cross sysroots (aarch64, armhf, i686). For each
// file the set of (GOT vaddr, symbol, version, relocation type) must be identical on both sides.
// Also: the libelf side's APS2 decoder, on hand-encoded streams and on an lld-packed library.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "plt/elf_image.h"
#include "tools/jankprobe_elf/aps2_decoder.h"
#include "tools/jankprobe_elf/check.h"
#include "tools/jankprobe_elf/libelf_slots.h"
#include "tools/jankprobe_elf/mapped_file.h"

namespace jp::elftool {

// The hook engine installs through FindImportSlots (hash-table candidates), not the full walk: on a real
// library both must name the same slots for every imported symbol. Returns the disagreements.
std::vector<std::string> FindAgreesWithWalk(const uint8_t* data, size_t size) {
  std::vector<std::string> out;
  std::unique_ptr<plt::ElfImage> image;
  if (!plt::ElfImage::FromFile(data, size, &image).ok()) return out;  // the libelf comparison reports it
  std::map<std::string, size_t> walked;
  image->ForEachImportSlot([&](const plt::ImportSlot& slot) {
    ++walked[std::string(slot.symbol)];
    return true;
  });
  // Up to 32 names a file, spread over the sorted list: keeps the run to seconds (each call is a pass over
  // the relocations) and still covers every symbol of the small odd libraries.
  const size_t stride = walked.size() / 32 + 1;
  size_t i = 0;
  std::vector<plt::ImportSlot> found;
  for (const auto& [name, count] : walked) {
    if (i++ % stride != 0) continue;
    if (!image->FindImportSlots(name, "", &found).ok() || found.size() != count) {
      out.push_back("FindImportSlots(" + name + ") found " + std::to_string(found.size()) + " slots, the walk " +
                    std::to_string(count));
    }
  }
  return out;
}
namespace {

namespace fs = std::filesystem;

const char* const kLibraryRoots[] = {
    "/usr/lib/x86_64-linux-gnu",
    "/usr/aarch64-linux-gnu/lib",
    "/usr/arm-linux-gnueabihf/lib",
    "/usr/i686-linux-gnu/lib",
};

// Regular files (not symlinks, so each library is compared once) whose name contains ".so".
std::vector<std::string> CollectCandidates() {
  std::vector<std::string> out;
  for (const char* root : kLibraryRoots) {
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code sec;
      fs::file_status st = it->symlink_status(sec);
      if (sec || !fs::is_regular_file(st)) continue;
      if (it->path().filename().string().find(".so") == std::string::npos) continue;
      out.push_back(it->path().string());
    }
  }
  return out;
}

struct MachineStats {
  size_t files = 0;
  size_t slots = 0;
  size_t relocations = 0;
};

struct FileFailure {
  std::string path;
  std::vector<std::string> lines;
};

// ELF shared object of a machine we support? Decided from the header bytes, before libelf, so that
// linker scripts, static archives and objects of other machines are skipped rather than failed.
bool IsSupportedSharedObject(const uint8_t* data, size_t size) {
  if (size < sizeof(Elf32_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0) return false;
  uint16_t type = 0;
  uint16_t machine = 0;
  std::memcpy(&type, data + offsetof(Elf32_Ehdr, e_type), sizeof(type));
  std::memcpy(&machine, data + offsetof(Elf32_Ehdr, e_machine), sizeof(machine));
  return data[EI_DATA] == ELFDATA2LSB && type == ET_DYN && IsSupportedMachine(machine);
}

TEST(DifferentialTest, EngineMatchesLibelfOnEverySystemLibrary) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> candidates = CollectCandidates();
  ASSERT_FALSE(candidates.empty()) << "no libraries found under the system and cross sysroot lib folders";

  std::atomic<size_t> next{0};
  std::mutex mu;
  std::map<std::string, MachineStats> stats;  // by machine name
  std::vector<FileFailure> failures;
  size_t skipped = 0;

  auto worker = [&] {
    for (size_t i = next++; i < candidates.size(); i = next++) {
      const std::string& path = candidates[i];
      MappedFile file;
      std::string error;
      if (!file.Open(path, &error) || !IsSupportedSharedObject(file.data(), file.size())) {
        std::lock_guard<std::mutex> lock(mu);
        ++skipped;
        continue;
      }
      LibelfImage image;
      if (!ReadWithLibelf(file.data(), file.size(), &image, &error)) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back({path, {"libelf could not read it: " + error}});
        continue;
      }
      CheckResult result;
      CheckAgainstEngine(file.data(), file.size(), image, &result);
      std::lock_guard<std::mutex> lock(mu);
      MachineStats& s = stats[MachineName(image.machine)];
      ++s.files;
      s.slots += result.libelf_slots;
      s.relocations += image.relocations_seen;
      if (!result.agree()) failures.push_back({path, DescribeDifferences(image.machine, result)});
      std::vector<std::string> find_errors = FindAgreesWithWalk(file.data(), file.size());
      if (!find_errors.empty()) failures.push_back({path, find_errors});
    }
  };
  const unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t total_files = 0;
  size_t total_slots = 0;
  for (const auto& [machine, s] : stats) {
    std::printf("[ differential ] %-8s %5zu files %7zu slots compared (%zu dynamic relocations)\n", machine.c_str(),
                s.files, s.slots, s.relocations);
    total_files += s.files;
    total_slots += s.slots;
  }
  std::printf("[ differential ] total    %5zu files %7zu slots, %zu candidates skipped (not ELF / not a shared "
              "object / other machine), %u threads, %.1f s\n",
              total_files, total_slots, skipped, threads, seconds);

  // Every disagreeing file gets a line (the first few differences); the full list comes from
  // `jankprobe-elf --check FILE`.
  for (const FileFailure& f : failures) {
    std::string text;
    for (size_t i = 0; i < f.lines.size() && i < 3; ++i) text += "\n    " + f.lines[i];
    if (f.lines.size() > 3) text += "\n    ... " + std::to_string(f.lines.size() - 3) + " more";
    ADD_FAILURE() << f.path << text;
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << total_files << " files disagree";
  for (const char* machine : {"x86_64", "aarch64", "arm", "i386"}) {
    EXPECT_GE(stats[machine].files, 1u) << "no " << machine << " library was compared";
    EXPECT_GE(stats[machine].slots, 1u) << "no " << machine << " slot was compared";
  }
  EXPECT_GE(total_slots, 1000u);
}

// --- APS2 decoding, on streams encoded by hand -------------------------------------------------------

void PushSleb(std::vector<uint8_t>* out, int64_t v) {
  bool more = true;
  while (more) {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
    out->push_back(more ? (byte | 0x80) : byte);
  }
}

std::vector<uint8_t> Aps2(std::initializer_list<int64_t> numbers) {
  std::vector<uint8_t> out = {'A', 'P', 'S', '2'};
  for (int64_t n : numbers) PushSleb(&out, n);
  return out;
}

TEST(Aps2DecoderTest, DecodesGroupedAndUngroupedFields) {
  const int64_t info_a = (int64_t{5} << 32) | R_X86_64_GLOB_DAT;
  const int64_t info_b = (int64_t{9} << 32) | R_X86_64_64;
  // 5 relocations from offset 0x1000:
  //   group 1: 3 relocs, grouped by offset delta (8) and info (info_a), no addend
  //   group 2: 2 relocs, own offset deltas (0x100, -0x10), own info, addend per reloc (+16, -16)
  std::vector<uint8_t> bytes = Aps2({5, 0x1000,
                                     3, 1 | 2, 8, info_a,
                                     2, 8, 0x100, info_b, 16, -0x10, info_b, -16});
  std::vector<PackedRelocation> out;
  std::string error;
  ASSERT_TRUE(DecodeAps2(bytes.data(), bytes.size(), true, &out, &error)) << error;
  ASSERT_EQ(out.size(), 5u);
  const uint64_t expected_offsets[] = {0x1008, 0x1010, 0x1018, 0x1118, 0x1108};
  const int64_t expected_addends[] = {0, 0, 0, 16, 0};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(out[i].offset, expected_offsets[i]) << i;
    EXPECT_EQ(out[i].info, static_cast<uint64_t>(i < 3 ? info_a : info_b)) << i;
    EXPECT_EQ(out[i].addend, expected_addends[i]) << i;
  }
}

TEST(Aps2DecoderTest, GroupAddendAccumulatesAndResets) {
  // group 1: 2 relocs grouped by addend (+32) and info; group 2: no addend flag -> addend back to 0.
  std::vector<uint8_t> bytes = Aps2({3, 0, 2, 1 | 4 | 8, 42, 32, 4, 4, 1, 1 | 2, 4, 42});
  std::vector<PackedRelocation> out;
  std::string error;
  ASSERT_TRUE(DecodeAps2(bytes.data(), bytes.size(), true, &out, &error)) << error;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].addend, 32);
  EXPECT_EQ(out[1].addend, 32);
  EXPECT_EQ(out[2].addend, 0);
  EXPECT_EQ(out[2].offset, 12u);
}

TEST(Aps2DecoderTest, RejectsBadInputWithAReason) {
  std::vector<PackedRelocation> out;
  std::string error;
  const uint8_t not_aps2[] = {'A', 'P', 'S', '1', 0, 0};
  EXPECT_FALSE(DecodeAps2(not_aps2, sizeof(not_aps2), true, &out, &error));
  EXPECT_NE(error.find("APS2"), std::string::npos) << error;

  std::vector<uint8_t> truncated = Aps2({4, 0x1000, 4, 0});  // promises 4 ungrouped relocs, has none
  EXPECT_FALSE(DecodeAps2(truncated.data(), truncated.size(), true, &out, &error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;

  std::vector<uint8_t> oversized_group = Aps2({1, 0, 2, 1 | 2, 8, 7});
  EXPECT_FALSE(DecodeAps2(oversized_group.data(), oversized_group.size(), true, &out, &error));

  std::vector<uint8_t> addend_in_rel = Aps2({1, 0, 1, 8, 4, 7, 5});
  EXPECT_FALSE(DecodeAps2(addend_in_rel.data(), addend_in_rel.size(), false, &out, &error));

  std::vector<uint8_t> huge = Aps2({int64_t{1} << 40, 0, int64_t{1} << 40, 1 | 2, 8, 7});
  EXPECT_FALSE(DecodeAps2(huge.data(), huge.size(), true, &out, &error));
}

#if defined(JP_PACKED_FIXTURE) && defined(JP_UNPACKED_FIXTURE)
std::multiset<std::tuple<std::string, std::string, uint32_t>> SymbolTypes(const LibelfImage& image) {
  std::multiset<std::tuple<std::string, std::string, uint32_t>> out;
  for (const LibelfSlot& s : image.slots) out.emplace(s.symbol, s.version, s.reloc_type);
  return out;
}

// The same library linked by lld with and without --pack-dyn-relocs=android: the packed side must
// decode to the same slots (addresses move with the layout, so symbols and types are compared), and
// the engine must agree with libelf on the packed file.
TEST(Aps2DecoderTest, PackedLibraryHasTheSameSlotsAsUnpacked) {
  MappedFile packed_file, unpacked_file;
  std::string error;
  ASSERT_TRUE(packed_file.Open(JP_PACKED_FIXTURE, &error)) << error;
  ASSERT_TRUE(unpacked_file.Open(JP_UNPACKED_FIXTURE, &error)) << error;
  LibelfImage packed, unpacked;
  ASSERT_TRUE(ReadWithLibelf(packed_file.data(), packed_file.size(), &packed, &error)) << error;
  ASSERT_TRUE(ReadWithLibelf(unpacked_file.data(), unpacked_file.size(), &unpacked, &error)) << error;
  EXPECT_GT(packed.packed_relocations, 0u) << "lld did not pack .rela.dyn";
  EXPECT_EQ(unpacked.packed_relocations, 0u);
  EXPECT_EQ(SymbolTypes(packed), SymbolTypes(unpacked));
  size_t from_packed = 0;
  for (const LibelfSlot& s : packed.slots) from_packed += s.source == SlotSource::kAndroidPacked;
  EXPECT_GE(from_packed, 2u) << "recvfrom (GLOB_DAT) and close (absolute) live in the packed table";

  CheckResult result;
  CheckAgainstEngine(packed_file.data(), packed_file.size(), packed, &result);
  std::string text;
  for (const std::string& line : DescribeDifferences(packed.machine, result)) text += "\n  " + line;
  EXPECT_TRUE(result.agree()) << text;
}
#endif

}  // namespace
}  // namespace jp::elftool
