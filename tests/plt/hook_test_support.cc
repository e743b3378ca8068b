#include "tests/plt/hook_test_support.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace jp::test {

std::atomic<unsigned long> foreign_calls{0};
void* foreign_prev = nullptr;

int ForeignProxy(int a, int b) {
  foreign_calls.fetch_add(1, std::memory_order_relaxed);
  return reinterpret_cast<AddFn>(__atomic_load_n(&foreign_prev, __ATOMIC_ACQUIRE))(a, b);
}

bool ThreadsUnavailable() { return std::getenv("JP_TEST_NO_THREADS") != nullptr; }

void* RealTargetAdd() { return dlsym(RTLD_DEFAULT, "jp_target_add"); }

namespace {

struct PatchRequest {
  const char* basename;
  void* expected;
  void* replacement;
  size_t written;
  bool count_only = false;
};

int PatchModule(struct dl_phdr_info* info, size_t, void* data) {
  auto* request = static_cast<PatchRequest*>(data);
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const char* slash = std::strrchr(name, '/');
  if (std::strcmp(slash != nullptr ? slash + 1 : name, request->basename) != 0) return 0;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
    uintptr_t start = (info->dlpi_addr + ph.p_vaddr + sizeof(void*) - 1) & ~(sizeof(void*) - 1);
    uintptr_t end = info->dlpi_addr + ph.p_vaddr + ph.p_filesz;  // .bss holds no relocated pointers
    for (uintptr_t word = start; word + sizeof(void*) <= end; word += sizeof(void*)) {
      if (*reinterpret_cast<void**>(word) != request->expected) continue;
      if (request->count_only) {
        ++request->written;
        continue;
      }
      // The RELRO part is read-only now; a crude tool leaves the page writable afterwards.
      mprotect(reinterpret_cast<void*>(word & ~(page - 1)), page, PROT_READ | PROT_WRITE);
      __atomic_store_n(reinterpret_cast<void**>(word), request->replacement, __ATOMIC_RELEASE);
      ++request->written;
    }
  }
  return 0;
}

}  // namespace

size_t CountWords(const char* module_basename, const void* value) {
  PatchRequest request{module_basename, const_cast<void*>(value), nullptr, 0, true};
  dl_iterate_phdr(&PatchModule, &request);
  return request.written;
}

size_t ForeignPatch(const char* module_basename, void* expected, void* replacement) {
  PatchRequest request{module_basename, expected, replacement, 0};
  dl_iterate_phdr(&PatchModule, &request);
  return request.written;
}

}  // namespace jp::test
