// The library tests that load libjankprobe.so itself do it in a forked child each (a fresh dlopen, a
// fresh process: what is resident, what the library's threads do): InChild runs the body there and turns
// its exit code into the parent's result; LibraryApi is the public C API the body calls, looked up in the
// loaded library, with its load address (for offsets read from the file, tests/lib/library_file.h).
// Shared by tests/lib/text_release_library_test.cc and tests/hook/text_release_sweep_test.cc.
#ifndef JANKPROBE_TESTS_LIB_LIBRARY_CHILD_H_
#define JANKPROBE_TESTS_LIB_LIBRARY_CHILD_H_

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

// In the child: gtest's assertions do not report to the parent, so a failed check prints its line and
// returns its own exit code from the body.
#define CHILD_CHECK(cond, code, ...)          \
  do {                                        \
    if (!(cond)) {                            \
      fprintf(stderr, "child: " __VA_ARGS__); \
      fprintf(stderr, "\n");                  \
      return code;                            \
    }                                         \
  } while (0)

namespace jp::testing {

// The exports a child calls (nullptr where the library lacks one: the body checks what it needs) and the
// library's load address (0 if dladdr could not tell).
struct LibraryApi {
  using StartFn = int (*)(const char*);
  using StopFn = void (*)();
  using StatusFn = const char* (*)();
  using SetListenerFn = void (*)(void (*)(const char*, void*), void*);

  explicit LibraryApi(void* so)
      : start(reinterpret_cast<StartFn>(dlsym(so, "jankprobe_start"))),
        configure(reinterpret_cast<StartFn>(dlsym(so, "jankprobe_configure"))),
        stop(reinterpret_cast<StopFn>(dlsym(so, "jankprobe_stop"))),
        status(reinterpret_cast<StatusFn>(dlsym(so, "jankprobe_status"))),
        last_error(reinterpret_cast<StatusFn>(dlsym(so, "jankprobe_last_error"))),
        set_listener(reinterpret_cast<SetListenerFn>(dlsym(so, "jankprobe_set_report_listener"))) {
    Dl_info info{};
    if (start && dladdr(reinterpret_cast<void*>(start), &info) && info.dli_fbase) {
      base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    }
  }

  StartFn start, configure;
  StopFn stop;
  StatusFn status, last_error;
  SetListenerFn set_listener;
  uintptr_t base = 0;
};

// Runs body(so) in a forked child with the library at `path` loaded (RTLD_LOCAL); the child's failures come
// back as its stderr lines: exit 0 = pass, 90 = dlopen failed.
template <typename Body>
void InChild(const char* path, Body body) {
  fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    void* so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      _exit(90);
    }
    _exit(body(so));
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's lines above";
}

}  // namespace jp::testing

#endif  // JANKPROBE_TESTS_LIB_LIBRARY_CHILD_H_
