// hook::ReleaseFileText on mappings the test makes: a private executable mapping of a test file stands in
// for our text. Presence of each page comes from /proc/self/pagemap (bit 63), independently of the code
// under test; a written page of a private file mapping is an anonymous copy, as a patched text page is.
#include "hook/text_release.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0) + 100, page(3) + 100, page(0));
  ASSERT_TRUE(r.released) << r.reason;
  EXPECT_EQ(r.pages, 2u);
  EXPECT_EQ(r.resident_pages, 2u);
  EXPECT_EQ(r.page_size, kPage);
  EXPECT_EQ(Presence(), (std::vector<bool>{true, false, false, true}));
  TouchAll();  // the released pages come back from the file, unchanged
}

TEST_F(FileMapping, CountsOnlyThePagesThatWereResident) {
  Map(PROT_READ | PROT_EXEC);
  ASSERT_TRUE(jp::hook::ReleaseFileText(page(1), page(3), page(0)).released);
  const jp::hook::TextReleaseResult again = jp::hook::ReleaseFileText(page(0), page(4), page(0));
  ASSERT_TRUE(again.released) << again.reason;
  EXPECT_EQ(again.pages, 4u);
  EXPECT_EQ(again.resident_pages, 2u);  // pages 0 and 3; 1 and 2 were already gone
  EXPECT_EQ(Presence(), (std::vector<bool>{false, false, false, false}));
}

TEST_F(FileMapping, RefusesARangeHoldingAWrittenPageAndKeepsTheWrite) {
  Map(PROT_READ | PROT_WRITE);
  page(2)[7] = 'X';  // a private copy of page 2, as a breakpoint or an inline hook makes
  ASSERT_EQ(mprotect(base_, kPages * kPage, PROT_READ | PROT_EXEC), 0);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), page(0));
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("private copy"), std::string::npos) << r.reason;
  char where[32];
  snprintf(where, sizeof where, "0x%lx", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(page(2))));
  EXPECT_NE(r.reason.find(where), std::string::npos) << r.reason << " (names the page " << where << ")";
  // All or nothing: no page was released, and the write is still there.
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(page(2)[7], 'X');
  // The clean pages next to it can still be released on their own.
  const jp::hook::TextReleaseResult clean = jp::hook::ReleaseFileText(page(0), page(2), page(0));
  EXPECT_TRUE(clean.released) << clean.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(page(2)[7], 'X');
}

TEST_F(FileMapping, RefusesAWritableMapping) {
  Map(PROT_READ | PROT_WRITE | PROT_EXEC);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), page(0));
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("rwxp"), std::string::npos) << r.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
}

TEST_F(FileMapping, RefusesARangeOutsideTheOwnersMapping) {
  Map(PROT_READ | PROT_EXEC);
  // The owner is this test's code, not the mapping: the range is not "our" text.
  const void* owner = reinterpret_cast<const void*>(&Present);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), owner);
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("not in the mapping of our code"), std::string::npos) << r.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
}

TEST_F(FileMapping, RefusesARangeThatRunsPastTheMapping) {
  Map(PROT_READ | PROT_EXEC);
  ASSERT_EQ(munmap(page(3), kPage), 0);  // a hole where the range's last page was
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(0), page(4), page(0));
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("runs past its mapping"), std::string::npos) << r.reason;
  EXPECT_TRUE(Present(page(0)) && Present(page(1)) && Present(page(2)));
  ASSERT_EQ(munmap(base_, 3 * kPage), 0);
  base_ = nullptr;
}

TEST_F(FileMapping, RefusesARangeWithoutAWholePage) {
  Map(PROT_READ | PROT_EXEC);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(page(1) + 1, page(2) + kPage - 1, page(0));
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("no whole page"), std::string::npos) << r.reason;
  EXPECT_EQ(Presence(), (std::vector<bool>{true, true, true, true}));
}

// /proc/self/maps is read through a 4 KiB buffer: a mapping whose line is longer (a path near PATH_MAX)
// must neither hide the mappings after it nor be misread.
TEST_F(FileMapping, MappingsWithLinesLongerThanTheReadBufferAreReadRight) {
  Map(PROT_READ | PROT_EXEC);
  std::string dir = "/tmp/jp_text_release_long_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::vector<std::string> made;
  std::string path = dir;
  while (path.size() < 4096 - 300) {
    path += "/" + std::string(200, 'd');
    ASSERT_EQ(mkdir(path.c_str(), 0700), 0) << strerror(errno);
    made.push_back(path);
  }
  path += "/" + std::string(4095 - path.size() - 1, 'f');  // 4095 characters: the longest path there is
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(2 * kPage)), 0);
  // Mapped after the test file: a lower address, so its line comes first in /proc/self/maps.
  void* p = mmap(nullptr, 2 * kPage, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  close(fd);
  ASSERT_NE(p, MAP_FAILED);
  char* long_base = static_cast<char*>(p);
  volatile char touch = long_base[0];
  touch = long_base[kPage];
  (void)touch;

  const jp::hook::TextReleaseResult after_it = jp::hook::ReleaseFileText(page(0), page(4), page(0));
  EXPECT_TRUE(after_it.released) << after_it.reason;
  const jp::hook::TextReleaseResult in_it = jp::hook::ReleaseFileText(long_base, long_base + 2 * kPage, long_base);
  EXPECT_TRUE(in_it.released) << in_it.reason;
  EXPECT_FALSE(Present(long_base) || Present(long_base + kPage));

  munmap(p, 2 * kPage);
  unlink(path.c_str());
  for (auto it = made.rbegin(); it != made.rend(); ++it) rmdir(it->c_str());
  rmdir(dir.c_str());
}

TEST(TextRelease, RefusesAnonymousExecutableMemory) {
  void* p = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  char* base = static_cast<char*>(p);
  base[0] = base[kPage] = 1;
  ASSERT_EQ(mprotect(p, 2 * kPage, PROT_READ | PROT_EXEC), 0);
  const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(base, base + 2 * kPage, base);
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.reason.find("anonymous"), std::string::npos) << r.reason;
  EXPECT_TRUE(Present(base) && Present(base + kPage));
  EXPECT_EQ(base[kPage], 1);
  munmap(p, 2 * kPage);
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
