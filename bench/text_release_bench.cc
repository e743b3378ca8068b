// The cost of the text release on the start path: hook::FindLoadSegment of our own code (the loader's
// program headers) and hook::ReleaseFileText over a private r-x mapping of a file the size of the
// library's start-only range (128 KiB, all resident, as after a start); Args: the extra mappings the
// process has (until session 7 the release scanned /proc/self/maps up to ours: 46 us at 250 mappings, 418 us
// at 3000; the program headers do not depend on them), and the range's size.
// BM_ReleaseThenRefault adds what the next configure pays to run from those pages again (one minor fault
// per 64 KiB fault-around window, per page where fault-around does not apply).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
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
  jp::hook::LoadSegment Segment() const {
    jp::hook::LoadSegment s;
    s.begin = reinterpret_cast<uintptr_t>(base);
    s.end = s.begin + size;
    s.executable = true;
    return s;
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
    // As ReleaseStartOnlyText does: the segment of our own code first (this benchmark's own, here; the
    // test file stands in for its range).
    jp::hook::LoadSegment own;
    std::string why;
    if (!jp::hook::FindLoadSegment(reinterpret_cast<const void*>(&BM_Release), &own, &why)) {
      state.SkipWithError(why.c_str());
      break;
    }
    benchmark::DoNotOptimize(own);
    const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(f.base, f.base + f.size, f.Segment());
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
    const jp::hook::TextReleaseResult r = jp::hook::ReleaseFileText(f.base, f.base + f.size, f.Segment());
    if (!r.released) state.SkipWithError(r.reason.c_str());
    f.TouchAll();
  }
}
BENCHMARK(BM_ReleaseThenRefault)->ArgNames({"kib"})->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
