// The jankprobe-elf command line, run as a process: --check and --json on fixture libraries with known
// imports, exit codes, and bad files (clear error, non-zero exit, never a signal).
#include <elf.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tools/jankprobe_elf/libelf_slots.h"
#include "tools/jankprobe_elf/mapped_file.h"

namespace {

struct ToolRun {
  int exit_code = -1;
  bool signaled = false;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/jankprobe_elf_tool_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  ToolRun Tool(const std::string& args) {
    ToolRun r;
    const std::string out = dir_ + "/out", err = dir_ + "/err";
    const std::string cmd = std::string("'") + JP_ELF_TOOL + "' " + args + " >'" + out + "' 2>'" + err + "'";
    int status = std::system(cmd.c_str());
    // system() runs through sh, which reports a child killed by a signal as 128 + signo.
    if (WIFEXITED(status)) {
      r.exit_code = WEXITSTATUS(status);
      r.signaled = r.exit_code > 128;
    } else {
      r.signaled = true;
    }
    r.out = ReadAll(out);
    r.err = ReadAll(err);
    return r;
  }

  std::string WriteFile(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  std::string dir_;
};

TEST_F(ToolTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(Tool("").exit_code, 2);
  ToolRun r = Tool("--bogus x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown option"), std::string::npos) << r.err;
  ToolRun help = Tool("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("exit status"), std::string::npos) << help.out;
}

TEST_F(ToolTest, TableNamesEachKindOfSlotAndTheStub) {
  ToolRun r = Tool(std::string("--check ") + JP_PLAIN_FIXTURE);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // sendto is called through the PLT; its row carries a stub address in .plt / .plt.sec.
  size_t row = r.out.find("sendto@GLIBC");
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string line = r.out.substr(r.out.rfind('\n', row) + 1, r.out.find('\n', row) - r.out.rfind('\n', row));
  EXPECT_NE(line.find("JUMP_SLOT"), std::string::npos) << line;
  EXPECT_NE(line.find(" .plt"), std::string::npos) << line;
  EXPECT_NE(r.out.find("recvfrom@GLIBC"), std::string::npos);
  EXPECT_NE(r.out.find("close@GLIBC"), std::string::npos);
  EXPECT_NE(r.out.find("check: engine agrees"), std::string::npos) << r.out;
}

// The JSON must carry what libelf sees, slot for slot, and the engine check.
void ExpectJsonMatchesLibelf(const rapidjson::Value& file, const std::string& path) {
  SCOPED_TRACE(path);
  jp::elftool::MappedFile mapped;
  std::string error;
  ASSERT_TRUE(mapped.Open(path, &error)) << error;
  jp::elftool::LibelfImage image;
  ASSERT_TRUE(jp::elftool::ReadWithLibelf(mapped.data(), mapped.size(), &image, &error)) << error;

  ASSERT_TRUE(file.HasMember("slots") && file["slots"].IsArray());
  const auto& slots = file["slots"].GetArray();
  ASSERT_EQ(slots.Size(), image.slots.size());
  bool saw_jump = false, saw_glob = false, saw_abs = false;
  for (rapidjson::SizeType i = 0; i < slots.Size(); ++i) {
    const auto& s = slots[i];
    EXPECT_EQ(s["got"].GetUint64(), image.slots[i].got_vaddr);
    EXPECT_EQ(std::string(s["symbol"].GetString()), image.slots[i].symbol);
    EXPECT_EQ(s["type"].GetUint(), image.slots[i].reloc_type);
    const std::string symbol = s["symbol"].GetString();
    const std::string kind = s["kind"].GetString();
    if (symbol == "sendto") {
      saw_jump = kind == "jump_slot";
      EXPECT_TRUE(s["stub"].IsObject()) << "sendto has a PLT stub";
      EXPECT_EQ(std::string(s["version"].GetString()).rfind("GLIBC_", 0), 0u);
    }
    if (symbol == "recvfrom") saw_glob = kind == "glob_dat";
    if (symbol == "close") saw_abs = kind == "absolute";
  }
  EXPECT_TRUE(saw_jump && saw_glob && saw_abs) << "sendto/recvfrom/close kinds";
  ASSERT_TRUE(file.HasMember("check"));
  EXPECT_TRUE(file["check"]["agree"].GetBool());
  EXPECT_EQ(file["check"]["engine_slots"].GetUint64(), file["check"]["libelf_slots"].GetUint64());
}

TEST_F(ToolTest, JsonOutputMatchesLibelfAndTheEngineAgrees) {
  std::string args = std::string("--json --check ") + JP_PLAIN_FIXTURE;
  std::vector<std::string> paths = {JP_PLAIN_FIXTURE};
#ifdef JP_PACKED_FIXTURE
  args += std::string(" ") + JP_PACKED_FIXTURE;
  paths.push_back(JP_PACKED_FIXTURE);
#endif
  ToolRun r = Tool(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  ASSERT_FALSE(doc.HasParseError()) << r.out;
  const auto& files = doc["files"].GetArray();
  ASSERT_EQ(files.Size(), paths.size());
  for (rapidjson::SizeType i = 0; i < files.Size(); ++i) {
    EXPECT_EQ(std::string(files[i]["path"].GetString()), paths[i]);
    ExpectJsonMatchesLibelf(files[i], paths[i]);
  }
#ifdef JP_PACKED_FIXTURE
  bool packed_table = false;
  for (const auto& s : files[1]["slots"].GetArray()) packed_table |= std::string(s["table"].GetString()) == "android";
  EXPECT_TRUE(packed_table) << "the packed fixture lists slots from its APS2 table";
#endif
}

TEST_F(ToolTest, BadFilesGiveAClearErrorAndExitThree) {
  const std::string fixture = ReadAll(JP_PLAIN_FIXTURE);
  ASSERT_GT(fixture.size(), 1024u);
  struct Case {
    std::string name;
    std::string bytes;
  };
  std::string bad_shoff = fixture;  // section header table pointed past the end of the file
  ASSERT_GE(bad_shoff.size(), sizeof(Elf64_Ehdr));
  const uint64_t far = 0x7fffffff0ull;
  std::memcpy(&bad_shoff[offsetof(Elf64_Ehdr, e_shoff)], &far, sizeof(far));
  std::string other_machine = fixture;
  const uint16_t mips = EM_MIPS;
  std::memcpy(&other_machine[offsetof(Elf64_Ehdr, e_machine)], &mips, sizeof(mips));
  const std::vector<Case> cases = {
      {"text.so", "this is not an ELF file\n"},
      {"empty.so", ""},
      {"header_only.so", fixture.substr(0, 64)},
      {"half.so", fixture.substr(0, fixture.size() / 2)},
      {"bad_shoff.so", bad_shoff},
      {"mips.so", other_machine},
  };
  for (const Case& c : cases) {
    const std::string path = WriteFile(c.name, c.bytes);
    for (const char* mode : {"", "--check ", "--json --check "}) {
      ToolRun r = Tool(mode + path);
      EXPECT_FALSE(r.signaled) << c.name << " " << mode << r.err;
      EXPECT_NE(r.exit_code, 0) << c.name << " " << mode;
      EXPECT_NE(r.err.find(path), std::string::npos) << c.name << ": the error names the file: " << r.err;
    }
  }
  ToolRun missing = Tool(dir_ + "/does_not_exist.so");
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
  ToolRun text = Tool(dir_ + "/text.so");
  EXPECT_EQ(text.exit_code, 3);
}

TEST_F(ToolTest, GoodFilesAreStillReportedNextToABadOne) {
  const std::string bad = WriteFile("bad.so", "garbage");
  ToolRun r = Tool(std::string("--json --check ") + bad + " " + JP_PLAIN_FIXTURE);
  EXPECT_EQ(r.exit_code, 3);
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  ASSERT_FALSE(doc.HasParseError()) << r.out;
  const auto& files = doc["files"].GetArray();
  ASSERT_EQ(files.Size(), 2u);
  EXPECT_TRUE(files[0].HasMember("error"));
  EXPECT_TRUE(files[1].HasMember("slots"));
}

#ifdef JP_PLT_FIXTURE_DIR
TEST_F(ToolTest, CheckPassesOnEveryEngineFixture) {
  std::string args = "--check";
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(JP_PLT_FIXTURE_DIR)) {
    if (entry.path().extension() != ".so") continue;
    args += " '" + entry.path().string() + "'";
    ++count;
  }
  ASSERT_GE(count, 5u) << "fixture libraries missing from " << JP_PLT_FIXTURE_DIR;
  ToolRun r = Tool(args);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  size_t agreed = 0;
  for (size_t pos = r.out.find("check: engine agrees"); pos != std::string::npos;
       pos = r.out.find("check: engine agrees", pos + 1)) {
    ++agreed;
  }
  EXPECT_EQ(agreed, count);
}
#endif

}  // namespace
