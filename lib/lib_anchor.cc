// libjankprobe.so is assembled from the per-capability static libraries (plt/, hook/, input/, ...); this
// file gives the shared library target a source of its own, and holds what only the shared library needs:
// the terminate handler of its statically linked C++ runtime.
#include <cxxabi.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <typeinfo>

namespace jp {
int lib_anchor_unused = 0;
}  // namespace jp

// The C++ runtime is linked in statically (cmake/shipped_link.cmake). Its default terminate handler,
// __gnu_cxx::__verbose_terminate_handler, prints the uncaught exception's type demangled and so pulls the
// whole demangler into the library: ~37 KB of text and ~3.3 KB of operator and type tables in
// .data.rel.ro, which relocations write at load. That made RELRO three pages instead of two (8312 -> 5016
// bytes without it), private and resident in every app that loads us, and the first segment one page
// longer. Defining the handler here keeps libstdc++'s archive member, and the demangler with it, out of
// the link. Our code lets no exception escape a thread or the C boundary, so this runs only on a bug: it
// says so on stderr with the type's mangled name (c++filt reads it) and aborts, as the default does. Only
// this library's copy of the runtime calls it: the symbol is not exported (lib/exports.map), the app's own
// C++ runtime keeps its handler. (In builds that link the runtime dynamically, e.g. the sanitizer build,
// this hidden definition is simply unused.)
namespace __gnu_cxx {
void __verbose_terminate_handler() {
  static const char kWhat[] = "jankprobe: terminate called";
  static const char kType[] = " after an uncaught exception of type ";
  (void)!write(STDERR_FILENO, kWhat, sizeof kWhat - 1);
  if (const std::type_info* type = abi::__cxa_current_exception_type()) {
    const char* name = type->name();
    (void)!write(STDERR_FILENO, kType, sizeof kType - 1);
    (void)!write(STDERR_FILENO, name, strlen(name));
  }
  (void)!write(STDERR_FILENO, "\n", 1);
  abort();
}
}  // namespace __gnu_cxx
