// The modules loaded in this process, as dl_iterate_phdr reports them, and which of them a hook's
// `caller` argument selects (a file name, an absolute path, or NULL = all but jankprobe's own module).
#ifndef JANKPROBE_PLT_MODULE_LIST_H_
#define JANKPROBE_PLT_MODULE_LIST_H_

#include <link.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace jp::plt {

// One loaded module. Valid only inside the ForEachLoadedModule callback that produced it.
struct LoadedModule {
  uintptr_t load_bias = 0;
  const ElfW(Phdr)* phdrs = nullptr;
  size_t phnum = 0;
  const char* name = "";  // dlpi_name: "" for the main executable on glibc
  uintptr_t start = 0;    // lowest and one-past-highest address of its PT_LOAD segments
  uintptr_t end = 0;
  bool contains_jankprobe = false;

  bool Contains(uintptr_t address) const { return address >= start && address < end; }
};

// Calls fn for every loaded module, from inside dl_iterate_phdr. glibc and bionic hold the loader's
// lock for the whole iteration, so no module can be dlclose'd and unmapped while fn reads or writes
// it: that is why the engine needs no SIGSEGV guard around GOT reads and writes. The same lock means
// fn must not call dlopen/dlsym/dlclose (glibc takes dl_load_lock there too: lock-order deadlock);
// resolve everything that needs dlsym before iterating. fn returns false to stop early.
void ForEachLoadedModule(const std::function<bool(const LoadedModule&)>& fn);

// Which modules a hook applies to.
class CallerSpec {
 public:
  enum class Kind { kAllButJankprobe, kFileName, kPath };

  // caller: NULL, "libfoo.so" or "/abs/path/libfoo.so". Resolves the path's realpath once, here,
  // so matching inside the loader callback stays cheap.
  explicit CallerSpec(const char* caller);

  Kind kind() const { return kind_; }
  const std::string& text() const { return text_; }  // as given ("" for NULL)
  std::string Describe() const;                        // for error messages
  bool Matches(const LoadedModule& module) const;
  // A file name or path can name a library that is simply not loaded yet (a pending hook).
  bool CanBePending() const { return kind_ != Kind::kAllButJankprobe; }
  bool operator==(const CallerSpec& other) const { return kind_ == other.kind_ && text_ == other.text_; }

 private:
  Kind kind_;
  std::string text_;
  std::string real_path_;  // realpath of a kPath caller when the file exists
};

// The last path component of a module name ("/system/lib64/libinput.so" -> "libinput.so").
const char* BaseName(const char* path);

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_MODULE_LIST_H_
