// The cost of hook::ReleaseFileText on the start path: a private r-x mapping of a file the size of the
// library's start-only range (128 KiB, all resident, as after a start), released; Args: the extra mappings
// the process has (/proc/self/maps is scanned line by line up to ours), and the range's size.
// BM_ReleaseThenRefault adds what the next configure pays to run from those pages again (one minor fault
// per 64 KiB fault-around window, per page where fault-around does not apply).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hook/text_release.h"

namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

struct Fixture {
  char* base = nullptr;
  size_t size = 0;
  std::vector<void*> filler;

  Fixture(size_t bytes, int extra_mappings) : size(bytes) {
    char path[] = "/tmp/jp_text_release_bench_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) abort();
    unlink(path);
    const std::string data(bytes, '\x90');
    if (write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) abort();
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) abort();
    base = static_cast<char*>(p);
    // Separate mappings (alternating protections so the kernel cannot merge them) lengthen the maps file.
    for (int i = 0; i < extra_mappings; ++i) {
      void* m = mmap(nullptr, kPage, i % 2 ? PROT_READ : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) abort();
      filler.push_back(m);
    }
  }
  ~Fixture() {
    munmap(base, size);
    for (void* m : filler) munmap(m, kPage);
  }
  void TouchAll() {
    for (size_t off = 0; off < size; off += kPage) {
      const char c = *static_cast<volatile const char*>(base + off);  // a read: the mapping is r-x
      benchmark::DoNotOptimize(c);
    }
  }
};

void BM_Release(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(1)) * 1024, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    state.PauseTiming();
    f.TouchAll();  // resident again, as after a start
    state.ResumeTiming();
    const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(f.base, f.base + f.size, f.base);
    if (!r.released) state.SkipWithError(r.reason.c_str());
  }
}
// 250 extra mappings: about the JVM demo app's (237 lines of maps); 3000: an Android app with its many
// libraries, dex and art files.
BENCHMARK(BM_Release)->ArgNames({"mappings", "kib"})->Args({0, 128})->Args({250, 128})->Args({3000, 128})
    ->Args({250, 512})->Unit(benchmark::kMicrosecond);

void BM_ReleaseThenRefault(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)) * 1024, 0);
  f.TouchAll();
  for (auto _ : state) {
    const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(f.base, f.base + f.size, f.base);
    if (!r.released) state.SkipWithError(r.reason.c_str());
    f.TouchAll();
  }
}
BENCHMARK(BM_ReleaseThenRefault)->ArgNames({"kib"})->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
