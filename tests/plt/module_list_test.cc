// Module enumeration and caller matching. Linked with the static engine, so "the module containing
// jankprobe" is this test executable.
#include "plt/module_list.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fixtures/hook/callers.h"

namespace jp::plt {
namespace {

struct Seen {
  std::string name;
  bool contains_jankprobe;
  bool contains_full_call_add;
};

std::vector<Seen> Snapshot(const CallerSpec& spec) {
  std::vector<Seen> matched;
  ForEachLoadedModule([&](const LoadedModule& m) {
    if (spec.Matches(m)) {
      matched.push_back({m.name, m.contains_jankprobe, m.Contains(reinterpret_cast<uintptr_t>(&full_call_add))});
    }
    return true;
  });
  return matched;
}

TEST(ModuleList, ExactlyOneModuleContainsJankprobe) {
  int count = 0;
  std::string name = "?";
  ForEachLoadedModule([&](const LoadedModule& m) {
    EXPECT_LT(m.start, m.end);
    if (m.contains_jankprobe) {
      ++count;
      name = m.name;
    }
    return true;
  });
  EXPECT_EQ(count, 1);
  EXPECT_EQ(name, "");  // glibc names the main executable ""
}

TEST(ModuleList, NullMatchesEverythingButJankprobe) {
  std::vector<Seen> all = Snapshot(CallerSpec(nullptr));
  size_t loaded = 0;
  ForEachLoadedModule([&](const LoadedModule&) { return ++loaded, true; });
  EXPECT_EQ(all.size(), loaded - 1);
  bool fixture_seen = false;
  for (const Seen& s : all) {
    EXPECT_FALSE(s.contains_jankprobe) << s.name;
    fixture_seen |= s.contains_full_call_add;
  }
  EXPECT_TRUE(fixture_seen);
}

TEST(ModuleList, FileNameMatchesTheOneModuleWithThatBaseName) {
  std::vector<Seen> matched = Snapshot(CallerSpec("libjp_hook_full.so"));
  ASSERT_EQ(matched.size(), 1u);
  EXPECT_TRUE(matched[0].contains_full_call_add);
  EXPECT_TRUE(Snapshot(CallerSpec("jp_hook_full.so")).empty());  // a suffix is not a file name
  EXPECT_TRUE(Snapshot(CallerSpec("libjp_hook_full")).empty());
}

TEST(ModuleList, PathMatchesExactlyAndCanonically) {
  ASSERT_EQ(Snapshot(CallerSpec(JP_HOOK_FULL_PATH)).size(), 1u);
  std::string dotted = JP_HOOK_FULL_PATH;
  dotted.insert(dotted.rfind('/'), "/.");
  ASSERT_EQ(Snapshot(CallerSpec(dotted.c_str())).size(), 1u);
  EXPECT_TRUE(Snapshot(CallerSpec("/nonexistent/libjp_hook_full.so")).empty());
}

TEST(ModuleList, CallerKinds) {
  EXPECT_EQ(CallerSpec(nullptr).kind(), CallerSpec::Kind::kAllButJankprobe);
  EXPECT_FALSE(CallerSpec(nullptr).CanBePending());
  EXPECT_EQ(CallerSpec("libx.so").kind(), CallerSpec::Kind::kFileName);
  EXPECT_EQ(CallerSpec("/a/libx.so").kind(), CallerSpec::Kind::kPath);
  EXPECT_TRUE(CallerSpec("/a/libx.so").CanBePending());
  EXPECT_STREQ(BaseName("/system/lib64/libinput.so"), "libinput.so");
  EXPECT_STREQ(BaseName("libinput.so"), "libinput.so");
}

TEST(ModuleList, StopsWhenTheCallbackSaysSo) {
  int calls = 0;
  ForEachLoadedModule([&](const LoadedModule&) { return ++calls < 2; });
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace jp::plt
