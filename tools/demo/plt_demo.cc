// The demo: hook zlib's imports of malloc / free / memcpy before zlib is even loaded, load it, compress
// and uncompress a buffer through it, and show which GOT slots were patched and which calls the proxies
// saw. Every call is also written into jankprobe's timeline, exported as a Chrome trace (Perfetto UI).
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "jankprobe/jankprobe.h"
#include "jankprobe/plt.h"
#include "plt/elf_image.h"

namespace {

constexpr const char* kLibrary = "libz.so.1";

std::atomic<unsigned long> g_malloc_calls{0}, g_free_calls{0}, g_memcpy_calls{0}, g_memcpy_bytes{0};
void* g_prev_malloc = nullptr;
void* g_prev_free = nullptr;
void* g_prev_memcpy = nullptr;
jp_plt_hook* g_malloc_hook = nullptr;
jp_plt_hook* g_free_hook = nullptr;
jp_plt_hook* g_memcpy_hook = nullptr;

void* MallocProxy(size_t n) {
  g_malloc_calls++;
  return reinterpret_cast<void* (*)(size_t)>(JP_PLT_PREV(g_malloc_hook, g_prev_malloc))(n);
}
void FreeProxy(void* p) {
  g_free_calls++;
  reinterpret_cast<void (*)(void*)>(JP_PLT_PREV(g_free_hook, g_prev_free))(p);
}
void* MemcpyProxy(void* d, const void* s, size_t n) {
  g_memcpy_calls++;
  g_memcpy_bytes += n;
  return reinterpret_cast<void* (*)(void*, const void*, size_t)>(JP_PLT_PREV(g_memcpy_hook, g_prev_memcpy))(d, s, n);
}

// Lists the patched slots of the loaded library with the engine's own ELF reader.
void PrintSlots(const char* symbol, const void* proxy) {
  struct Ctx {
    const char* symbol;
    const void* proxy;
  } ctx{symbol, proxy};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) -> int {
        auto* c = static_cast<Ctx*>(arg);
        if (!info->dlpi_name || !strstr(info->dlpi_name, kLibrary)) return 0;
        std::unique_ptr<jp::plt::ElfImage> image;
        if (!jp::plt::ElfImage::FromLoaded(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &image).ok()) return 1;
        std::vector<jp::plt::ImportSlot> slots;
        image->FindImportSlots(c->symbol, "", &slots);
        for (const auto& s : slots) {
          void* const* slot = reinterpret_cast<void* const*>(info->dlpi_addr + s.got_vaddr);
          printf("    %-8s %-22s GOT +0x%-6llx version %-12s -> %s\n", c->symbol,
                 jp::plt::RelocTypeName(image->machine(), s.reloc_type), static_cast<unsigned long long>(s.got_vaddr),
                 s.version.empty() ? "-" : std::string(s.version).c_str(),
                 *slot == c->proxy ? "our proxy" : "original");
        }
        return 1;
      },
      &ctx);
}

}  // namespace

int main(int argc, char** argv) {
  const char* out_dir = argc > 1 ? argv[1] : "out";
  printf("jankprobe demo: PLT/GOT hooks in a live library (%s)\n\n", kLibrary);
  if (dlopen(kLibrary, RTLD_NOLOAD)) printf("  (%s was already loaded)\n", kLibrary);

  printf("1. install hooks for %s, which is not loaded yet (pending hooks)\n", kLibrary);
  g_malloc_hook = jp_plt_hook_install(kLibrary, "malloc", reinterpret_cast<void*>(MallocProxy), &g_prev_malloc);
  g_free_hook = jp_plt_hook_install(kLibrary, "free", reinterpret_cast<void*>(FreeProxy), &g_prev_free);
  g_memcpy_hook = jp_plt_hook_install(kLibrary, "memcpy", reinterpret_cast<void*>(MemcpyProxy), &g_prev_memcpy);
  if (!g_malloc_hook || !g_free_hook || !g_memcpy_hook) {
    printf("   install failed: %s\n", jp_plt_last_error());
    return 1;
  }
  printf("   slots patched now: malloc %zu, free %zu, memcpy %zu (pending until dlopen)\n",
         jp_plt_hook_slot_count(g_malloc_hook), jp_plt_hook_slot_count(g_free_hook),
         jp_plt_hook_slot_count(g_memcpy_hook));

  printf("2. dlopen(%s): the engine patches it before dlopen returns\n", kLibrary);
  void* z = dlopen(kLibrary, RTLD_NOW);
  if (!z) {
    printf("   dlopen failed: %s\n", dlerror());
    return 1;
  }
  printf("   slots patched now: malloc %zu, free %zu, memcpy %zu\n", jp_plt_hook_slot_count(g_malloc_hook),
         jp_plt_hook_slot_count(g_free_hook), jp_plt_hook_slot_count(g_memcpy_hook));
  PrintSlots("malloc", reinterpret_cast<void*>(MallocProxy));
  PrintSlots("free", reinterpret_cast<void*>(FreeProxy));
  PrintSlots("memcpy", reinterpret_cast<void*>(MemcpyProxy));

  using Compress2 = int (*)(unsigned char*, unsigned long*, const unsigned char*, unsigned long, int);
  using Uncompress = int (*)(unsigned char*, unsigned long*, const unsigned char*, unsigned long);
  auto compress2 = reinterpret_cast<Compress2>(dlsym(z, "compress2"));
  auto uncompress = reinterpret_cast<Uncompress>(dlsym(z, "uncompress"));
  std::vector<unsigned char> input(256 * 1024);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<unsigned char>((i * 7) ^ (i >> 5));
  std::vector<unsigned char> packed(input.size() * 2), unpacked(input.size());

  auto round_trip = [&](const char* label) {
    const unsigned long m0 = g_malloc_calls, f0 = g_free_calls, c0 = g_memcpy_calls;
    unsigned long packed_len = packed.size(), unpacked_len = unpacked.size();
    int rc1 = compress2(packed.data(), &packed_len, input.data(), input.size(), 6);
    int rc2 = uncompress(unpacked.data(), &unpacked_len, packed.data(), packed_len);
    const bool same = rc1 == 0 && rc2 == 0 && unpacked_len == input.size() &&
                      memcmp(unpacked.data(), input.data(), input.size()) == 0;
    printf("   %s: %zu -> %lu -> %lu bytes (%s); proxies saw malloc %lu, free %lu, memcpy %lu\n", label,
           input.size(), packed_len, unpacked_len, same ? "round trip ok" : "ROUND TRIP BROKEN",
           g_malloc_calls - m0, g_free_calls - f0, g_memcpy_calls - c0);
    return same;
  };
  printf("3. compress + uncompress through zlib\n");
  bool ok = round_trip("hooked");

  printf("4. remove the hooks; zlib calls libc directly again\n");
  printf("   remove: malloc %d, free %d, memcpy %d (0 = every slot restored)\n", jp_plt_hook_remove(g_malloc_hook),
         jp_plt_hook_remove(g_free_hook), jp_plt_hook_remove(g_memcpy_hook));
  PrintSlots("malloc", reinterpret_cast<void*>(MallocProxy));
  ok = round_trip("unhooked") && ok;

  printf("5. the plugin core: timeline + export (monitors arrive with the next issues)\n");
  if (jankprobe_start("{\"input\":{\"enabled\":false},\"idle\":{\"enabled\":false},"
                      "\"barrier\":{\"enabled\":false},\"looper\":{\"enabled\":false}}") != 0) {
    printf("   start failed: %s\n", jankprobe_last_error());
    return 1;
  }
  const std::string trace = std::string(out_dir) + "/trace.json";
  if (jankprobe_export(trace.c_str(), JANKPROBE_EXPORT_CHROME_TRACE) != 0) {
    printf("   export failed: %s\n", jankprobe_last_error());
  } else {
    printf("   status: %s\n   wrote %s (open it in https://ui.perfetto.dev)\n", jankprobe_status(), trace.c_str());
  }
  jankprobe_stop();
  return ok ? 0 : 1;
}
