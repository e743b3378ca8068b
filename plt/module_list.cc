#include "plt/module_list.h"

#include <climits>
#include <cstdlib>
#include <cstring>

namespace jp::plt {
namespace {

// Any function of ours will do: the module whose PT_LOAD range contains it is jankprobe's own. A range
// check instead of dladdr because dladdr takes the loader lock that dl_iterate_phdr already holds.
void JankprobeAnchor() {}

struct IterateContext {
  const std::function<bool(const LoadedModule&)>* fn;
  bool stopped;
};

int OnModule(struct dl_phdr_info* info, size_t, void* data) {
  auto* ctx = static_cast<IterateContext*>(data);
  LoadedModule module;
  module.load_bias = info->dlpi_addr;
  module.phdrs = info->dlpi_phdr;
  module.phnum = info->dlpi_phnum;
  module.name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (size_t i = 0; i < module.phnum; ++i) {
    const ElfW(Phdr)& ph = module.phdrs[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t seg_start = module.load_bias + ph.p_vaddr;
    uintptr_t seg_end = seg_start + ph.p_memsz;
    if (seg_start < lo) lo = seg_start;
    if (seg_end > hi) hi = seg_end;
  }
  if (hi == 0) return 0;  // nothing mapped: not a module we can read
  module.start = lo;
  module.end = hi;
  module.contains_jankprobe = module.Contains(reinterpret_cast<uintptr_t>(&JankprobeAnchor));
  if (!(*ctx->fn)(module)) {
    ctx->stopped = true;
    return 1;
  }
  return 0;
}

}  // namespace

void ForEachLoadedModule(const std::function<bool(const LoadedModule&)>& fn) {
  IterateContext ctx{&fn, false};
  dl_iterate_phdr(&OnModule, &ctx);
}

const char* BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

CallerSpec::CallerSpec(const char* caller) {
  if (caller == nullptr) {
    kind_ = Kind::kAllButJankprobe;
    return;
  }
  text_ = caller;
  if (std::strchr(caller, '/') == nullptr) {
    kind_ = Kind::kFileName;
    return;
  }
  kind_ = Kind::kPath;
  char resolved[PATH_MAX];
  if (realpath(caller, resolved) != nullptr) real_path_ = resolved;
}

std::string CallerSpec::Describe() const {
  return kind_ == Kind::kAllButJankprobe ? std::string("any loaded module") : text_;
}

bool CallerSpec::Matches(const LoadedModule& module) const {
  switch (kind_) {
    case Kind::kAllButJankprobe:
      return !module.contains_jankprobe;
    case Kind::kFileName:
      return text_ == BaseName(module.name);
    case Kind::kPath: {
      if (text_ == module.name) return true;
      // The loader records the path it was given ("./lib/../libfoo.so", a RUNPATH join); compare
      // canonical paths, but only for modules whose base name already matches (realpath costs syscalls).
      if (real_path_.empty() || std::strcmp(BaseName(text_.c_str()), BaseName(module.name)) != 0) return false;
      char resolved[PATH_MAX];
      return realpath(module.name, resolved) != nullptr && real_path_ == resolved;
    }
  }
  return false;
}

}  // namespace jp::plt
