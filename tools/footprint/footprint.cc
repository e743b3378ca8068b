// jankprobe-footprint: what loading and starting libjankprobe.so costs in resident memory, step by step,
// each scenario in a fresh process (this program re-executes itself), so that nothing an earlier scenario
// touched is counted as free by a later one.
//
// Per step it reads /proc/self/status (VmRSS, RssAnon, RssFile), the libjankprobe.so mappings of
// /proc/self/smaps (Rss, and the dirty pages relocations and .data/.bss writes made private) and glibc's
// heap in use (mallinfo2: every arena, every thread). Every buffer this program uses is static and touched
// before the baseline, so the program's own reads do not show up as growth.
//
// Usage: jankprobe-footprint [--runs=N] [--touches=N] [--so=PATH] [--detail] [scenario...]
//   scenarios: none (dlopen + start with every monitor off), input (then the input monitor on, against the
//   host libinput.so fixture this program links, then N touch round trips through it), idle, barrier,
//   looper (JNI monitors: on the host they only get as far as their "disabled: why").
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/fixtures/libinput/input_channel.h"

namespace {

constexpr int kMaxSteps = 8;
constexpr size_t kProcBufBytes = 1 << 20;
char g_proc_buf[kProcBufBytes];  // .bss, touched whole before the baseline

struct Sample {
  long rss_kb = 0, anon_kb = 0, file_kb = 0;  // /proc/self/status
  long so_rss_kb = 0, so_anon_kb = 0;         // smaps: libjankprobe.so mappings, and their copied-on-write pages
  long so_text_rss_kb = 0;                    // ... of which the executable mapping
  long heap_bytes = 0;                        // mallinfo2: in use, all arenas + mmapped chunks
  long threads = 0;
};

struct Step {
  char name[64];
  Sample s;
};

// --detail: Rss per mapped path ("[anon]" for nameless mappings) at each step, to see where growth lands.
constexpr int kMaxPaths = 256;
struct PathRss {
  char path[128];
  long kb;
};
struct PathTable {
  PathRss rows[kMaxPaths];
  int count;
};
PathTable g_paths[kMaxSteps];
bool g_detail = false;     // parent: print the first run's per-path growth
bool g_first_run = false;
PathTable* g_current_paths = nullptr;  // set while a step is being taken

void AddPathRss(const char* path, long kb) {
  if (!g_current_paths) return;
  PathTable& t = *g_current_paths;
  for (int i = 0; i < t.count; ++i) {
    if (strcmp(t.rows[i].path, path) == 0) {
      t.rows[i].kb += kb;
      return;
    }
  }
  if (t.count == kMaxPaths) return;
  snprintf(t.rows[t.count].path, sizeof t.rows[t.count].path, "%s", path);
  t.rows[t.count++].kb = kb;
}

long PathKb(const PathTable& t, const char* path) {
  for (int i = 0; i < t.count; ++i) {
    if (strcmp(t.rows[i].path, path) == 0) return t.rows[i].kb;
  }
  return 0;
}

// The whole of a /proc file into g_proc_buf (NUL-terminated); false on failure.
bool ReadProc(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t used = 0;
  for (;;) {
    ssize_t n = read(fd, g_proc_buf + used, kProcBufBytes - 1 - used);
    if (n < 0) {
      close(fd);
      return false;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
    if (used == kProcBufBytes - 1) break;
  }
  close(fd);
  g_proc_buf[used] = '\0';
  return true;
}

long FieldKb(const char* text, const char* key) {
  const char* p = strstr(text, key);
  return p ? strtol(p + strlen(key), nullptr, 10) : -1;
}

// "7f12...-7f34... r-xp 00000000 08:01 123  /path": a smaps mapping header (field lines are "Key:  N kB").
bool IsMappingHeader(const char* line) {
  const char* p = line;
  while (isxdigit(static_cast<unsigned char>(*p))) ++p;
  if (p == line || *p != '-') return false;
  const char* q = ++p;
  while (isxdigit(static_cast<unsigned char>(*p))) ++p;
  return p != q && *p == ' ';
}

bool Take(Sample* out, const char* so_name) {
  if (!ReadProc("/proc/self/status")) return false;
  out->rss_kb = FieldKb(g_proc_buf, "\nVmRSS:");
  out->anon_kb = FieldKb(g_proc_buf, "\nRssAnon:");
  out->file_kb = FieldKb(g_proc_buf, "\nRssFile:");
  out->threads = FieldKb(g_proc_buf, "\nThreads:");
  if (!ReadProc("/proc/self/smaps")) return false;
  // A mapping's header line ends in its path; its Rss/Private_Dirty lines follow until the next header.
  out->so_rss_kb = out->so_anon_kb = out->so_text_rss_kb = 0;
  bool ours = false, exec = false;
  const char* path = "[anon]";
  if (g_current_paths) g_current_paths->count = 0;
  for (char* line = g_proc_buf; *line;) {
    char* end = strchr(line, '\n');
    if (end) *end = '\0';
    if (IsMappingHeader(line)) {
      ours = strstr(line, so_name) != nullptr;
      // The path is the sixth field; nameless anonymous mappings have none.
      const char* p = line;
      for (int field = 0; field < 5 && p; ++field) {
        p = strchr(p, ' ');
        while (p && *p == ' ') ++p;
      }
      path = p && *p ? p : "[anon]";
      const char* perms = strchr(line, ' ') + 1;
      exec = perms[2] == 'x';
    } else if (ours && strncmp(line, "Rss:", 4) == 0) {
      const long kb = strtol(line + 4, nullptr, 10);
      out->so_rss_kb += kb;
      if (exec) out->so_text_rss_kb += kb;
    }
    if (!IsMappingHeader(line) && strncmp(line, "Rss:", 4) == 0) {
      AddPathRss(path, strtol(line + 4, nullptr, 10));
    } else if (ours && strncmp(line, "Anonymous:", 10) == 0) {
      out->so_anon_kb += strtol(line + 10, nullptr, 10);
    }
    if (!end) break;
    line = end + 1;
  }
  struct mallinfo2 mi = mallinfo2();
  out->heap_bytes = static_cast<long>(mi.uordblks + mi.hblkhd);
  return true;
}

// The body of one scenario, in its own process. Prints one line per step: name and the raw sample.
int RunScenario(const char* scenario, const char* so_path, int touches) {
  static Step steps[kMaxSteps];
  int n = 0;
  const char* so_name = strrchr(so_path, '/') ? strrchr(so_path, '/') + 1 : so_path;
  // Warm up everything this process uses itself: the proc buffer, stdio, the fixture's code paths.
  memset(g_proc_buf, 1, sizeof g_proc_buf);
  Sample warm;
  Take(&warm, so_name);
  // An app has threads long before it loads us: run libc's thread creation, join and a second malloc arena
  // once here, so that libc's own code and data pages touched by our first thread count as baseline.
  pthread_t warm_thread;
  if (pthread_create(&warm_thread, nullptr, [](void*) -> void* {
        free(malloc(64));
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        pthread_setname_np(pthread_self(), "warm-up");
        sched_yield();
        return nullptr;
      }, nullptr) == 0) {
    pthread_join(warm_thread, nullptr);
  }
  jpfx_channel* ch = nullptr;
  const bool input = strcmp(scenario, "input") == 0;
  auto round_trips = [&](int count) {
    for (int i = 0; i < count; ++i) {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      const int64_t now = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
      const uint32_t seq = static_cast<uint32_t>(i + 1);
      if (jpfx_publish_motion(ch, seq, i == 0 ? 0 : 2, now, 1) != 0) return false;
      jpfx_event ev;
      if (jpfx_consume(ch, &ev) != 1) return false;
      if (jpfx_finish(ch, ev.seq, 1, ev.consume_time) != 0) return false;
      uint32_t fseq;
      int handled;
      int64_t ct;
      while (jpfx_dispatcher_receive(ch, &fseq, &handled, &ct) > 0) {
      }
    }
    return true;
  };
  if (input) {
    ch = jpfx_channel_open(34, JPFX_IO_BIONIC);
    if (!ch) {
      fprintf(stderr, "footprint: cannot open the fixture channel: %s\n", strerror(errno));
      return 1;
    }
    if (!round_trips(64)) {  // the fixture's own first-use costs belong to the baseline
      fprintf(stderr, "footprint: fixture round trip failed before jankprobe was loaded\n");
      return 1;
    }
  }
  // JP_FOOTPRINT_UNTIL=dlopen|start|on|use ends the process after that step: startup_order.py uses it to
  // tell which functions each phase runs first.
  const char* until = getenv("JP_FOOTPRINT_UNTIL");
  auto stop_after = [until](const char* phase) {
    if (until && strcmp(until, phase) == 0) exit(0);
  };
  auto record = [&](const char* name) {
    snprintf(steps[n].name, sizeof steps[n].name, "%s", name);
    g_current_paths = &g_paths[n];
    if (!Take(&steps[n].s, so_name)) {
      fprintf(stderr, "footprint: cannot read /proc/self: %s\n", strerror(errno));
      exit(1);
    }
    g_current_paths = nullptr;
    ++n;
  };
  record("baseline");

  void* so = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    fprintf(stderr, "footprint: dlopen %s: %s\n", so_path, dlerror());
    return 1;
  }
  using StartFn = int (*)(const char*);
  using StopFn = void (*)();
  using ErrFn = const char* (*)();
  auto start = reinterpret_cast<StartFn>(dlsym(so, "jankprobe_start"));
  auto configure = reinterpret_cast<StartFn>(dlsym(so, "jankprobe_configure"));
  auto stop = reinterpret_cast<StopFn>(dlsym(so, "jankprobe_stop"));
  auto last_error = reinterpret_cast<ErrFn>(dlsym(so, "jankprobe_last_error"));
  auto status = reinterpret_cast<ErrFn>(dlsym(so, "jankprobe_status"));
  if (!start || !configure || !stop || !last_error || !status) {
    fprintf(stderr, "footprint: %s lacks the jankprobe C API\n", so_path);
    return 1;
  }
  record("dlopen");
  stop_after("dlopen");

  auto config = [](const char* on) {
    static char text[1024];
    auto flag = [on](const char* m) { return strcmp(on, m) == 0 ? "true" : "false"; };
    snprintf(text, sizeof text,
             "{\"enabled\": true, \"sample_rate\": 1,"
             " \"input\": {\"enabled\": %s, \"lag_ms\": 150, \"anr_ms\": 5000, \"android_api\": 34},"
             " \"idle\": {\"enabled\": %s}, \"barrier\": {\"enabled\": %s}, \"looper\": {\"enabled\": %s},"
             " \"report\": {\"max_reports_per_minute\": 10},"
             " \"device\": {\"device_id\": \"footprint\", \"app_version\": \"1.0\", \"api_level\": 34}}",
             flag("input"), flag("idle"), flag("barrier"), flag("looper"));
    return text;
  };
  if (start(config("")) != 0) {
    fprintf(stderr, "footprint: jankprobe_start: %s\n", last_error());
    return 1;
  }
  record("start, every monitor off");
  stop_after("start");

  if (strcmp(scenario, "none") != 0) {
    const int rc = configure(config(scenario));
    char name[64];
    snprintf(name, sizeof name, "%s on%s", scenario, rc == 0 ? "" : " (refused)");
    record(name);
    if (rc != 0) printf("note %s: %s\n", scenario, last_error());
    stop_after("on");
    if (input && rc == 0) {
      if (!round_trips(touches)) {
        fprintf(stderr, "footprint: round trips with the input monitor on failed\n");
        return 1;
      }
      snprintf(name, sizeof name, "after %d touches", touches);
      record(name);
      stop_after("use");
    }
  }
  stop();
  record("stop");
  if (ch) jpfx_channel_close(ch);
  for (int i = 0; i < n; ++i) {
    const Sample& s = steps[i].s;
    printf("step %s|%ld|%ld|%ld|%ld|%ld|%ld|%ld|%ld\n", steps[i].name, s.rss_kb, s.anon_kb, s.file_kb, s.so_rss_kb,
           s.so_text_rss_kb, s.so_anon_kb, s.heap_bytes, s.threads);
  }
  for (int i = 1; i < n; ++i) {
    // Paths that grew or shrank in this step (new paths and ones that disappeared included).
    for (int pass = 0; pass < 2; ++pass) {
      const PathTable& a = pass == 0 ? g_paths[i] : g_paths[i - 1];
      const PathTable& b = pass == 0 ? g_paths[i - 1] : g_paths[i];
      for (int r = 0; r < a.count; ++r) {
        if (pass == 1 && PathKb(b, a.rows[r].path) != 0) continue;  // printed in the first pass
        bool in_b = false;
        for (int q = 0; q < b.count; ++q) in_b |= strcmp(b.rows[q].path, a.rows[r].path) == 0;
        if (pass == 1 && in_b) continue;
        const long delta = pass == 0 ? a.rows[r].kb - PathKb(b, a.rows[r].path) : -a.rows[r].kb;
        if (delta != 0) printf("detail %s|%s|%+ld\n", steps[i].name, a.rows[r].path, delta);
      }
    }
  }
  return 0;
}

// Runs one scenario in a child (this executable again) and collects its step lines.
int Child(const char* self, const char* scenario, const char* so_path, int touches, Step* steps, int* count) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    char touch_arg[32];
    snprintf(touch_arg, sizeof touch_arg, "%d", touches);
    execl(self, self, "--child", scenario, so_path, touch_arg, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  static char out[16384];
  size_t used = 0;
  ssize_t r;
  while ((r = read(fds[0], out + used, sizeof out - 1 - used)) > 0) used += static_cast<size_t>(r);
  close(fds[0]);
  out[used] = '\0';
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) return -1;
  *count = 0;
  for (char* line = strtok(out, "\n"); line; line = strtok(nullptr, "\n")) {
    if (strncmp(line, "detail ", 7) == 0) {
      if (g_detail && g_first_run) printf("%s\n", line);
      continue;
    }
    if (strncmp(line, "note ", 5) == 0) {
      fprintf(stderr, "%s\n", line);
      continue;
    }
    if (strncmp(line, "step ", 5) != 0 || *count >= kMaxSteps) continue;
    Step& st = steps[(*count)++];
    char* bar = strchr(line + 5, '|');
    if (!bar) return -1;
    *bar = '\0';
    snprintf(st.name, sizeof st.name, "%s", line + 5);
    Sample& s = st.s;
    if (sscanf(bar + 1, "%ld|%ld|%ld|%ld|%ld|%ld|%ld|%ld", &s.rss_kb, &s.anon_kb, &s.file_kb, &s.so_rss_kb,
               &s.so_text_rss_kb, &s.so_anon_kb, &s.heap_bytes, &s.threads) != 8) {
      return -1;
    }
  }
  return 0;
}

// What jankprobe itself makes resident: every anonymous page (heap, stacks, mmaps, its COW pages) and
// the file pages of libjankprobe.so. Pages of other libraries (libc code first run by our thread) are
// left out: in an app they are shared with the zygote and resident already.
long Own(const Sample& s) { return s.anon_kb + (s.so_rss_kb - s.so_anon_kb); }

long Median(long* v, int n) {
  std::sort(v, v + n);
  return v[n / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[1], "--child") == 0) return RunScenario(argv[2], argv[3], atoi(argv[4]));
  int runs = 5, touches = 10000;
  const char* so_path = JP_FOOTPRINT_SO;
  const char* scenarios[8];
  int nscen = 0;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--runs=", 7) == 0) {
      runs = atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--touches=", 10) == 0) {
      touches = atoi(argv[i] + 10);
    } else if (strcmp(argv[i], "--detail") == 0) {
      g_detail = true;
    } else if (strncmp(argv[i], "--so=", 5) == 0) {
      so_path = argv[i] + 5;
    } else if (argv[i][0] != '-' && nscen < 8) {
      scenarios[nscen++] = argv[i];
    } else {
      fprintf(stderr, "usage: %s [--runs=N] [--touches=N] [--so=PATH] [--detail] [none|input|idle|barrier|looper...]\n",
              argv[0]);
      return 2;
    }
  }
  if (runs < 1 || runs > 64 || touches < 1) {
    fprintf(stderr, "footprint: --runs must be 1..64 and --touches positive\n");
    return 2;
  }
  if (nscen == 0) {
    static const char* all[] = {"none", "input", "idle", "barrier", "looper"};
    for (const char* s : all) scenarios[nscen++] = s;
  }
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  printf("# %s, %d fresh processes per scenario; KiB growth over the step before, median [min, max]\n", so_path,
         runs);
  for (int sc = 0; sc < nscen; ++sc) {
    static Step all_runs[64][kMaxSteps];
    int count = 0;
    for (int r = 0; r < runs; ++r) {
      int c = 0;
      g_first_run = r == 0;
      if (Child(self, scenarios[sc], so_path, touches, all_runs[r], &c) != 0 || (r > 0 && c != count)) {
        fprintf(stderr, "footprint: scenario %s failed\n", scenarios[sc]);
        return 1;
      }
      count = c;
    }
    printf("\n## %s\n", scenarios[sc]);
    printf("| step | RSS | own | anon | file | .so Rss | .so text | .so COW | other files | heap | threads |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int st = 1; st < count; ++st) {
      printf("| %s |", all_runs[0][st].name);
      long v[64];
      auto column = [&](auto field, long div) {
        for (int r = 0; r < runs; ++r) v[r] = (field(all_runs[r][st].s) - field(all_runs[r][st - 1].s)) / div;
        const long med = Median(v, runs);
        printf(" %+ld [%+ld, %+ld] |", med, v[0], v[runs - 1]);
      };
      column([](const Sample& s) { return s.rss_kb; }, 1);
      column([](const Sample& s) { return Own(s); }, 1);
      column([](const Sample& s) { return s.anon_kb; }, 1);
      column([](const Sample& s) { return s.file_kb; }, 1);
      column([](const Sample& s) { return s.so_rss_kb; }, 1);
      column([](const Sample& s) { return s.so_text_rss_kb; }, 1);
      column([](const Sample& s) { return s.so_anon_kb; }, 1);
      column([](const Sample& s) { return s.file_kb - (s.so_rss_kb - s.so_anon_kb); }, 1);
      column([](const Sample& s) { return s.heap_bytes; }, 1024);
      column([](const Sample& s) { return s.threads; }, 1);
      printf("\n");
    }
    // Loaded and started, relative to the baseline: the figure the issue-7 budget is about.
    long v[64], w[64];
    for (int r = 0; r < runs; ++r) {
      v[r] = all_runs[r][2].s.rss_kb - all_runs[r][0].s.rss_kb;
      w[r] = Own(all_runs[r][2].s) - Own(all_runs[r][0].s);
    }
    printf("| **loaded + started, total** | %+ld | %+ld |\n", Median(v, runs), Median(w, runs));
  }
  return 0;
}
