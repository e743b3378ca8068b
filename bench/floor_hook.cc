// libjp_floor_hook.so: the least a hook that notes a wake can be, in a shared object of its own as any
// in-app monitor is (looper_wake_bench's "floor" side). One call into a function that starts a text page
// of its own, one store to a data page of its own. After an eviction both are first touches, and so is the
// object's address region (its page-table walk), as for our library after a wake.
#include <cstdint>

namespace {
alignas(4096) uint64_t g_words[512];
}  // namespace

extern "C" __attribute__((visibility("default"), noinline, aligned(4096))) void jp_floor_hook(uint64_t v) {
  reinterpret_cast<volatile uint64_t*>(g_words)[0] = v;
}
