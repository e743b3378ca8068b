// hook::ReleaseFileText on mappings the test makes: a private executable mapping of a test file stands in
// for our text, with the segment its program headers would give. Presence of each page comes from /proc/self/pagemap (bit 63), independently of the code
// under test; a written page of a private file mapping is an anonymous copy, as a patched text page is.
#include "hook/text_release.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
constexpr size_t kPages = 4;

bool Present(const void* addr) {
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint64_t entry = 0;
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(addr) / kPage * sizeof entry);
  const bool ok = pread(fd, &entry, sizeof entry, at) == static_cast<ssize_t>(sizeof entry);
  close(fd);
  return ok && (entry >> 63) != 0;
}

// A test file of kPages pages, page i filled with the byte 'a' + i, mapped private.
class FileMapping : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/jp_text_release_XXXXXX";
    fd_ = mkstemp(path);
    ASSERT_GE(fd_, 0);
    unlink(path);
    for (size_t i = 0; i < kPages; ++i) {
      const std::string page(kPage, static_cast<char>('a' + i));
      ASSERT_EQ(write(fd_, page.data(), page.size()), static_cast<ssize_t>(page.size()));
    }
  }
  void TearDown() override {
    if (base_) munmap(base_, kPages * kPage);
    if (fd_ >= 0) close(fd_);
  }
  // Maps the file with `prot` and reads every page (all present afterwards).
  void Map(int prot) {
    void* p = mmap(nullptr, kPages * kPage, prot, MAP_PRIVATE, fd_, 0);
    ASSERT_NE(p, MAP_FAILED) << "mmap: " << strerror(errno);
    base_ = static_cast<char*>(p);
    TouchAll();
  }
  void TouchAll() {
    for (size_t i = 0; i < kPages; ++i) {
      volatile const char* c = base_ + i * kPage;
      ASSERT_EQ(*c, static_cast<char>('a' + i));
      ASSERT_TRUE(Present(base_ + i * kPage)) << "page " << i;
    }
  }
  char* page(size_t i) { return base_ + i * kPage; }
  // What the program headers of a library loaded from the test file would say: a read-only executable
  // segment over the whole mapping (or with the given flags).
  jp::hook::LoadSegment Segment(bool executable = true, bool writable = false) {
    jp::hook::LoadSegment s;
    s.begin = reinterpret_cast<uintptr_t>(base_);
    s.end = s.begin + kPages * kPage;
    s.executable = executable;
    s.writable = writable;
    return s;
  }
  std::vector<bool> Presence() {
    std::vector<bool> out;
    for (size_t i = 0; i < kPages; ++i) out.push_back(Present(page(i)));
    return out;
  }

  int fd_ = -1;
  char* base_ = nullptr;
};

TEST_F(FileMapping, ReleasesExactlyTheWholePagesInsideTheRangeAndTheyReadBackUnchanged) {
  Map(PROT_READ | PROT_EXEC);
  // Unaligned ends: only pages 1 and 2 lie wholly inside; 0 and 3 hold the partial ends and must stay.
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0) + 100, page(3) + 100, Segment());
  ASSERT_TRUE(r.released) << r.reason;
  EXPECT_EQ(r.pages, 2u);
  EXPECT_EQ(r.resident_pages, 2u);
  EXPECT_EQ(r.page_size, kPage);
  EXPECT_EQ(Presence(), (std::vector<bool>{true, false, false, true}));
  TouchAll();  // the released pages come back from the file, unchanged
}

TEST_F(FileMapping, CountsOnlyThePagesThatWereResident) {
  Map(PROT_READ | PROT_EXEC);
  ASSERT_TRUE(jp::hook::ReleaseFileText(page(1), page(3), Segment()).released);
  const jp::hook::TextReleaseResult again = jp::hook::ReleaseFileText(page(0), page(4), Segment());
  ASSERT_TRUE(again.released) << again.reason;
  EXPECT_EQ(again.pages, 4u);
  EXPECT_EQ(again.resident_pages, 2u);  // pages 0 and 3; 1 and 2 were already gone
  EXPECT_EQ(Presence(), (std::vector<bool>{false, false, false, false}));
}

TEST_F(FileMapping, RefusesARangeHoldingAWrittenPageAndKeepsTheWrite) {
  Map(PROT_READ | PROT_WRITE);
  page(2)[7] = 'X';  // a private copy of page 2, as a breakpoint or an inline hook makes
  ASSERT_EQ(mprotect(base_, kPages * kPage, PROT_READ | PROT_EXEC), 0);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), Segment());
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("private copy"), std::string::npos) << r.reason;
  char where[32];
  snprintf(where, sizeof where, "0x%lx", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(page(2))));
  EXPECT_NE(r.reason.find(where), std::string::npos) << r.reason << " (names the page " << where << ")";
  // All or nothing: no page was released, and the write is still there.
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(page(2)[7], 'X');
  // The clean pages next to it can still be released on their own.
  const jp::hook::TextReleaseResult clean = jp::hook::ReleaseFileText(page(0), page(2), Segment());
  EXPECT_TRUE(clean.released) << clean.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(page(2)[7], 'X');
}

TEST_F(FileMapping, RefusesAWritableOrNonExecutableSegment) {
  Map(PROT_READ | PROT_EXEC);
  const jp::hook::TextReleaseResult writable = jp::hook::ReleaseFileText(page(0), page(4), Segment(true, true));
  EXPECT_FALSE(writable.released);
  EXPECT_NE(writable.reason.find("writable"), std::string::npos) << writable.reason;
  const jp::hook::TextReleaseResult data = jp::hook::ReleaseFileText(page(0), page(4), Segment(false, false));
  EXPECT_FALSE(data.released);
  EXPECT_NE(data.reason.find("not executable"), std::string::npos) << data.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
}

// Read-only data (the library's first segment: headers, dynamic symbols, .rodata) goes the same way, but
// need not be executable; a writable segment is refused there too.
TEST_F(FileMapping, ReadOnlyDataPagesAreReleasedUnlessTheSegmentIsWritable) {
  Map(PROT_READ);
  const jp::hook::TextReleaseResult writable =
      jp::hook::ReleaseReadOnlyFilePages(page(0), page(4), Segment(false, true));
  EXPECT_FALSE(writable.released);
  EXPECT_NE(writable.reason.find("writable"), std::string::npos) << writable.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseReadOnlyFilePages(page(1), page(4), Segment(false, false));
  ASSERT_TRUE(r.released) << r.reason;
  EXPECT_EQ(r.resident_pages, 3u);
  EXPECT_EQ(Presence(), (std::vector<bool>{true, false, false, false}));
  TouchAll();
}

// The mapping's protection is not what decides: a tool may have made our text writable to patch it. As
// long as no page was written, every page is still the file's and comes back unchanged.
TEST_F(FileMapping, AWritableMappingWithNoWrittenPageIsReleasedAndReadsBackUnchanged) {
  Map(PROT_READ | PROT_WRITE | PROT_EXEC);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), Segment());
  ASSERT_TRUE(r.released) << r.reason;
  EXPECT_EQ(r.resident_pages, 4u);
  EXPECT_EQ(Presence(), (std::vector<bool>{false, false, false, false}));
  TouchAll();
}

TEST_F(FileMapping, RefusesARangeOutsideTheSegment) {
  Map(PROT_READ | PROT_EXEC);
  jp::hook::LoadSegment short_segment = Segment();
  short_segment.end -= kPage;  // the range's last page is not in it
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), short_segment);
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("not inside the segment"), std::string::npos) << r.reason;
  jp::hook::LoadSegment later = Segment();
  later.begin += kPage;  // nor its first
  const jp::hook::TextReleaseResult r2 = jp::hook::ReleaseFileText(page(0), page(4), later);
  EXPECT_FALSE(r2.released);
  EXPECT_NE(r2.reason.find("not inside the segment"), std::string::npos) << r2.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
}

// Anonymous memory mapped over text (some hook tools copy and remap it) holds the only copy of its bytes.
TEST_F(FileMapping, RefusesAnonymousMemoryMappedOverTheText) {
  Map(PROT_READ | PROT_EXEC);
  void* p = mmap(page(1), kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(p, page(1));
  page(1)[0] = 'Z';
  ASSERT_EQ(mprotect(page(1), kPage, PROT_READ | PROT_EXEC), 0);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), Segment());
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("private copy"), std::string::npos) << r.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(page(1)[0], 'Z');
}

TEST_F(FileMapping, RefusesARangeWithoutAWholePage) {
  Map(PROT_READ | PROT_EXEC);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(1) + 1, page(2) + kPage - 1, Segment());
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("no whole page"), std::string::npos) << r.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
}

TEST(TextRelease, RefusesAnonymousExecutableMemory) {
  void* p = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  char* base = static_cast<char*>(p);
  base[0] = base[kPage] = 1;
  ASSERT_EQ(mprotect(p, 2 * kPage, PROT_READ | PROT_EXEC), 0);
  jp::hook::LoadSegment segment;  // as if a segment claimed it
  segment.begin = reinterpret_cast<uintptr_t>(base);
  segment.end = segment.begin + 2 * kPage;
  segment.executable = true;
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(base, base + 2 * kPage, segment);
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("private copy"), std::string::npos) << r.reason;
  EXPECT_TRUE(Present(base) && Present(base + kPage));
  EXPECT_EQ(base[kPage], 1);
  munmap(p, 2 * kPage);
}

int g_written_data = 1;  // in this executable's writable data segment

// The program headers of the objects the loader has: this test's own code is in a read-only executable
// segment, its data in a writable one, and memory the loader never loaded is in none.
TEST(TextRelease, FindLoadSegmentReadsTheLoadersProgramHeaders) {
  jp::hook::LoadSegment code, data;
  std::string why;
  const void* fn = reinterpret_cast<const void*>(&Present);
  ASSERT_TRUE(jp::hook::FindLoadSegment(fn, &code, &why)) << why;
  EXPECT_TRUE(code.executable);
  EXPECT_FALSE(code.writable);
  EXPECT_LE(code.begin, reinterpret_cast<uintptr_t>(fn));
  EXPECT_LT(reinterpret_cast<uintptr_t>(fn), code.end);
  ASSERT_TRUE(jp::hook::FindLoadSegment(&g_written_data, &data, &why)) << why;
  EXPECT_TRUE(data.writable);
  EXPECT_FALSE(data.executable);
  EXPECT_TRUE(data.end <= code.begin || code.end <= data.begin);

  void* p = mmap(nullptr, kPage, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  jp::hook::LoadSegment none;
  why.clear();
  EXPECT_FALSE(jp::hook::FindLoadSegment(p, &none, &why));
  EXPECT_NE(why.find("no loaded object"), std::string::npos) << why;
  munmap(p, kPage);
}

// Linked from the static libraries (no lib/startup_order.ld): there is no range, and status says so.
TEST(TextRelease, WithoutTheLinkerRangeNothingIsReleasedAndStatusSaysWhy) {
  jp::hook::ReleaseStartOnlyText();
  const std::string status = jp::hook::TextReleaseStatusJson();
  EXPECT_NE(status.find("\"state\":\"unavailable: this build has no start-only text range\""), std::string::npos)
      << status;
  EXPECT_NE(status.find("\"releases\":0"), std::string::npos) << status;
}

}  // namespace
