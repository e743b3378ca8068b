// jankprobe-demo: the process around the demo app, playing what Android provides around a real app. It
// opens the InputChannel (the libinput.so fixture), runs the dispatcher thread that streams touches into
// it, starts OpenJDK with the JVM harness (android.os stand-ins as the framework, the demo app's jar, which
// holds jankprobe's classes as an APK's dex would, in the app's own class loader), registers the framework
// natives the app calls, and runs the app.
// The app itself loads jankprobe the way an app does (System.loadLibrary + JankProbe.start).
//
//   jankprobe-demo [--check] [--out DIR] [--config-dir DIR]   the scripted faults (./run demo)
//   jankprobe-demo --bench SECONDS --jankprobe on|off [--config FILE] [--app-printer noop] [--warmup S]
//                                                             no faults; prints one JSON line of figures
//   jankprobe-demo --ab SLICES --config ON.json [--off-config OFF.json] [--slice-ms MS] [--settle-ms MS]
//                  [--warmup S]
//                                                             in-process A/B: the flag alternates between ON and
//                                                             OFF (every monitor off) in one JVM; one JSON line
#include <jni.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/jvm/jvm_harness.h"
#include "tools/demo/launcher/report_book.h"
#include "tools/demo/launcher/thread_counters.h"
#include "tools/demo/launcher/touch_dispatcher.h"

namespace {

using jp::demo::FdWatcher;
using jp::demo::ReportBook;
using jp::demo::ThreadCounters;
using jp::demo::TouchDispatcher;
using jp::testing::JavaResult;
using jp::testing::JvmHarness;

constexpr const char* kHostClass = "com.example.demo.DemoHost";
constexpr const char* kAppClass = "com.example.demo.DemoApp";
constexpr const char* kReceiverClass = "com.example.demo.InputReceiver";

struct Options {
  bool check = false;
  std::string out_dir = "out";
  std::string config_dir = JP_DEMO_CONFIG_DIR;
  double bench_seconds = 0;  // > 0: benchmark run, no faults
  double warmup_seconds = 1;  // benchmark: the figures start after this much of the app's run
  std::string config = "demo.json";  // the remote flag JankProbe.start gets, in config_dir
  bool app_printer = false;          // benchmark: the app sets a do-nothing Printer on its main Looper
  bool jankprobe = true;
  int timeout_s = 90;
  int ab_slices = 0;                       // > 0: in-process A/B benchmark
  long ab_slice_ms = 1000;
  long ab_settle_ms = 700;  // > the looper monitor's frame ticker needs to park after a switch (30 frames)
  std::string off_config = "bench-none.json";
};

ReportBook* g_book = nullptr;
TouchDispatcher* g_dispatcher = nullptr;
FdWatcher* g_watcher = nullptr;

std::string ToString(JNIEnv* env, jstring s) {
  if (!s) return std::string();
  const char* chars = env->GetStringUTFChars(s, nullptr);
  std::string out = chars ? chars : "";
  if (chars) env->ReleaseStringUTFChars(s, chars);
  return out;
}

// --- the natives of com.example.demo.DemoHost ---
void JNICALL OnReport(JNIEnv* env, jclass, jstring json) {
  if (g_book) g_book->OnReport(ToString(env, json));
}
void JNICALL Log(JNIEnv* env, jclass, jstring line) {
  if (g_book) g_book->Log(ToString(env, line));
}
void JNICALL Status(JNIEnv* env, jclass, jstring phase, jstring json) {
  if (g_book) g_book->OnStatus(ToString(env, phase), ToString(env, json));
}
jlong JNICALL ThreadCpuNs(JNIEnv*, jclass) {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<jlong>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
jint JNICALL Consume(JNIEnv* env, jclass, jlongArray out) {
  jpfx_event e{};
  const int rc = g_dispatcher->Consume(&e);
  if (rc == 1) {
    const jlong fields[3] = {static_cast<jlong>(e.seq), static_cast<jlong>(e.action), static_cast<jlong>(e.consume_time)};
    env->SetLongArrayRegion(out, 0, 3, fields);
  }
  return rc;
}
jint JNICALL Finish(JNIEnv*, jclass, jint seq, jlong consume_time) {
  return g_dispatcher->Finish(static_cast<uint32_t>(seq), consume_time);
}
void JNICALL InputDrained(JNIEnv*, jclass) { g_watcher->Rearm(); }

// The A/B benchmark's counters belong to the thread that opened them (the app's main thread).
thread_local ThreadCounters* t_counters = nullptr;
jstring JNICALL OpenCounters(JNIEnv* env, jclass) {
  if (!t_counters) t_counters = new ThreadCounters();  // lives as long as the thread: the process is short
  const std::string scope = t_counters->Open() ? t_counters->scope() : "unavailable: " + t_counters->why();
  return env->NewStringUTF(scope.c_str());
}
void JNICALL Counters(JNIEnv* env, jclass, jlongArray out) {
  jp::demo::ThreadCounterValues v;
  if (t_counters) {
    v = t_counters->Read();
  } else {
    v.cpu_ns = ThreadCpuNs(env, nullptr);
  }
  const jlong fields[5] = {v.cpu_ns, v.instructions, v.cycles, v.user_instructions, v.user_cycles};
  env->SetLongArrayRegion(out, 0, 5, fields);
}

// The process's resident memory while the app and jankprobe still run (DemoHost.snapshot, called by the
// app's last message before it stops anything): the benchmark's memory figure. -1 until taken.
long g_running_rss_kb = -1, g_running_anon_kb = -1, g_running_file_kb = -1;
void JNICALL Snapshot(JNIEnv* env, jclass, jstring stage);

bool RegisterHostNatives(JvmHarness* jvm, std::string* why) {
  jclass host = jvm->AppClass(kHostClass, why);
  if (!host) return false;
  static const JNINativeMethod methods[] = {
      {const_cast<char*>("onReport"), const_cast<char*>("(Ljava/lang/String;)V"), reinterpret_cast<void*>(OnReport)},
      {const_cast<char*>("log"), const_cast<char*>("(Ljava/lang/String;)V"), reinterpret_cast<void*>(Log)},
      {const_cast<char*>("status"), const_cast<char*>("(Ljava/lang/String;Ljava/lang/String;)V"), reinterpret_cast<void*>(Status)},
      {const_cast<char*>("threadCpuNs"), const_cast<char*>("()J"), reinterpret_cast<void*>(ThreadCpuNs)},
      {const_cast<char*>("consume"), const_cast<char*>("([J)I"), reinterpret_cast<void*>(Consume)},
      {const_cast<char*>("finish"), const_cast<char*>("(IJ)I"), reinterpret_cast<void*>(Finish)},
      {const_cast<char*>("inputDrained"), const_cast<char*>("()V"), reinterpret_cast<void*>(InputDrained)},
      {const_cast<char*>("openCounters"), const_cast<char*>("()Ljava/lang/String;"), reinterpret_cast<void*>(OpenCounters)},
      {const_cast<char*>("counters"), const_cast<char*>("([J)V"), reinterpret_cast<void*>(Counters)},
      {const_cast<char*>("snapshot"), const_cast<char*>("(Ljava/lang/String;)V"), reinterpret_cast<void*>(Snapshot)},
  };
  JNIEnv* env = jvm->Env();
  if (env->RegisterNatives(host, methods, sizeof methods / sizeof methods[0]) != JNI_OK) {
    *why = "RegisterNatives(DemoHost): " + jvm->TakeException();
    return false;
  }
  return true;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", name);
        return nullptr;
      }
      return argv[++i];
    };
    const char* v = nullptr;
    if (a == "--check") {
      o->check = true;
    } else if (a == "--out") {
      if (!(v = value("--out"))) return false;
      o->out_dir = v;
    } else if (a == "--config-dir") {
      if (!(v = value("--config-dir"))) return false;
      o->config_dir = v;
    } else if (a == "--bench") {
      if (!(v = value("--bench"))) return false;
      o->bench_seconds = std::atof(v);
      if (o->bench_seconds <= 0) return false;
    } else if (a == "--ab") {
      if (!(v = value("--ab"))) return false;
      o->ab_slices = std::atoi(v);
      if (o->ab_slices < 4) return false;
    } else if (a == "--slice-ms") {
      if (!(v = value("--slice-ms"))) return false;
      o->ab_slice_ms = std::atol(v);
      if (o->ab_slice_ms < 100) return false;
    } else if (a == "--settle-ms") {
      if (!(v = value("--settle-ms"))) return false;
      o->ab_settle_ms = std::atol(v);
      if (o->ab_settle_ms < 0) return false;
    } else if (a == "--off-config") {
      if (!(v = value("--off-config"))) return false;
      o->off_config = v;
    } else if (a == "--config") {
      if (!(v = value("--config"))) return false;
      o->config = v;
    } else if (a == "--warmup") {
      if (!(v = value("--warmup"))) return false;
      o->warmup_seconds = std::atof(v);
      if (o->warmup_seconds < 0) return false;
    } else if (a == "--app-printer") {
      if (!(v = value("--app-printer"))) return false;
      if (std::strcmp(v, "noop") != 0 && std::strcmp(v, "none") != 0) return false;
      o->app_printer = std::strcmp(v, "noop") == 0;
    } else if (a == "--jankprobe") {
      if (!(v = value("--jankprobe"))) return false;
      if (std::strcmp(v, "on") != 0 && std::strcmp(v, "off") != 0) return false;
      o->jankprobe = std::strcmp(v, "on") == 0;
    } else if (a == "--timeout") {
      if (!(v = value("--timeout"))) return false;
      o->timeout_s = std::atoi(v);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

// A "Name: N kB" line of /proc/self/status (VmRSS, RssAnon, RssFile); -1 when missing.
long StatusKb(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  const size_t n = std::strlen(field);
  long kb = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') {
      kb = std::atol(line + n + 1);
      break;
    }
  }
  std::fclose(f);
  return kb;
}

long ResidentKb() { return StatusKb("VmRSS"); }

// Which pages of libjankprobe.so's mappings are resident, as runs of file offsets (/proc/self/pagemap's
// present bit), one line per mapping ("perms offset size_KiB start-end..."): which 64 KiB fault-around
// windows of the text a run touched, which smaps' Rss total cannot tell. Written beside the smaps copy.
void SnapshotLibraryPages(const std::string& to) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  FILE* pagemap = std::fopen("/proc/self/pagemap", "rb");
  FILE* out = maps && pagemap ? std::fopen(to.c_str(), "w") : nullptr;
  if (!out) {
    std::fprintf(stderr, "demo: cannot write the resident pages of libjankprobe.so to %s\n", to.c_str());
  } else {
    const long page = sysconf(_SC_PAGESIZE);
    char line[4096];
    while (std::fgets(line, sizeof line, maps)) {
      if (!std::strstr(line, "libjankprobe.so")) continue;
      unsigned long start = 0, end = 0, offset = 0;
      char perms[8] = {};
      if (std::sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &offset) != 4) continue;
      std::fprintf(out, "%s %lx %lu", perms, offset, (end - start) / 1024);
      long run_start = -1, last = -1;
      for (unsigned long a = start; a < end; a += static_cast<unsigned long>(page)) {
        uint64_t entry = 0;
        const bool read = std::fseek(pagemap, static_cast<long>(a / page * sizeof entry), SEEK_SET) == 0 &&
                          std::fread(&entry, sizeof entry, 1, pagemap) == 1;
        if (!read || !(entry >> 63)) continue;  // bit 63: page present
        const long at = static_cast<long>(a - start + offset);
        if (at != last + page) {
          if (run_start >= 0) std::fprintf(out, " %lx-%lx", run_start, last + page);
          run_start = at;
        }
        last = at;
      }
      if (run_start >= 0) std::fprintf(out, " %lx-%lx", run_start, last + page);
      std::fprintf(out, "\n");
    }
  }
  if (out) std::fclose(out);
  if (pagemap) std::fclose(pagemap);
  if (maps) std::fclose(maps);
}

// Measurement aid: with JP_DEMO_SMAPS=<prefix> set, /proc/self/smaps is copied to <prefix>.<stage> so that
// the growth can be split per mapping (tools/footprint/smaps_diff.py). The benchmark's runs leave it unset.
void SnapshotSmaps(const char* stage) {
  const char* prefix = std::getenv("JP_DEMO_SMAPS");
  if (!prefix || !*prefix) return;
  const std::string to = std::string(prefix) + "." + stage;
  FILE* in = std::fopen("/proc/self/smaps", "r");
  FILE* out = in ? std::fopen(to.c_str(), "w") : nullptr;
  if (!in || !out) {
    std::fprintf(stderr, "demo: cannot copy /proc/self/smaps to %s\n", to.c_str());
    if (in) std::fclose(in);
    return;
  }
  char buf[8192];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) std::fwrite(buf, 1, n, out);
  std::fclose(in);
  std::fclose(out);
  SnapshotLibraryPages(to + ".pages");
}

void JNICALL Snapshot(JNIEnv* env, jclass, jstring stage) {
  g_running_rss_kb = ResidentKb();
  g_running_anon_kb = StatusKb("RssAnon");
  g_running_file_kb = StatusKb("RssFile");
  SnapshotSmaps(ToString(env, stage).c_str());
}

std::string Absolute(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  std::string out = real ? real : path;
  std::free(real);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s [--check] [--out DIR] [--config-dir DIR] [--timeout S]\n"
                 "       | --bench SECONDS --jankprobe on|off [--config FILE] [--app-printer noop] [--warmup S]\n"
                 "       | --ab SLICES(>=4) --config ON.json [--off-config OFF.json] [--slice-ms MS(>=100)]\n"
                 "         [--settle-ms MS] [--warmup S]\n",
                 argv[0]);
    return 2;
  }
  const bool ab = o.ab_slices > 0;
  const bool bench = o.bench_seconds > 0 || ab;
  if (bench) {  // the deadline below must not cut a long benchmark or A/B run short (e.g. --warmup 60)
    const double needed_s =
        o.warmup_seconds + (ab ? o.ab_slices * (o.ab_slice_ms + o.ab_settle_ms) / 1000.0 : o.bench_seconds);
    o.timeout_s = std::max(o.timeout_s, static_cast<int>(needed_s) + 30);
  }
  FILE* out = bench ? stderr : stdout;  // a benchmark run prints only its JSON line on stdout
  ReportBook book(out);
  g_book = &book;

  // Nothing in this process may hang a test: the whole run has a deadline.
  std::thread([timeout = o.timeout_s, out] {
    std::this_thread::sleep_for(std::chrono::seconds(timeout));
    std::fprintf(out, "demo: no end after %d s, giving up\n", timeout);
    std::fflush(out);
    _exit(3);
  }).detach();

  if (!bench && std::system(("mkdir -p '" + o.out_dir + "'").c_str()) != 0) {
    std::fprintf(stderr, "demo: cannot create %s\n", o.out_dir.c_str());
    return 1;
  }
  std::string why;
  TouchDispatcher dispatcher;
  g_dispatcher = &dispatcher;
  if (!dispatcher.Open(&why)) {
    std::fprintf(stderr, "demo: %s\n", why.c_str());
    return 1;
  }
  std::string lib_dir = JP_DEMO_LIBJANKPROBE;
  lib_dir = lib_dir.substr(0, lib_dir.rfind('/'));
  jp::testing::JvmOptions jvm_options;
  jvm_options.system_classpath = {JP_DEMO_STANDINS_JAR};
  jvm_options.app_classpath = {JP_DEMO_APP_JAR};  // the app with jankprobe's classes, as in an APK's dex
  jvm_options.jvm_args = {"-Djava.library.path=" + lib_dir, "-Xms64m", "-Xmx64m"};
  // Extra JVM options for measurements (e.g. JP_DEMO_JVM_ARGS="-XX:NativeMemoryTracking=summary
  // -XX:+PrintNMTStatistics"), split at blanks; the runs the benchmark compares leave it unset.
  if (const char* extra = std::getenv("JP_DEMO_JVM_ARGS")) {
    std::istringstream words(extra);
    for (std::string word; words >> word;) jvm_options.jvm_args.push_back(word);
  }
  // -Xcheck:jni makes every JNI call dearer; a benchmark measures JNI at its real cost.
  jvm_options.check_jni = !bench;
  const long rss_before_jvm = ResidentKb();
  JvmHarness* jvm = JvmHarness::Start(jvm_options, &why);
  if (!jvm) {
    std::fprintf(stderr, "demo: cannot start the JVM: %s\n", why.c_str());
    return 1;
  }
  if (!RegisterHostNatives(jvm, &why)) {
    std::fprintf(stderr, "demo: %s\n", why.c_str());
    return 1;
  }
  FdWatcher watcher;
  g_watcher = &watcher;
  const bool watching = watcher.Start(
      dispatcher.app_fd(),
      [jvm] {
        JNIEnv* env = jvm->Env();
        env->PushLocalFrame(8);
        JavaResult r = jvm->CallStatic(kReceiverClass, "onFdReadable", "()V");
        env->PopLocalFrame(nullptr);
        if (!r.ok) g_book->Log("fd watcher: " + r.why);
      },
      [jvm] { jvm->vm()->DetachCurrentThread(); }, &why);
  if (!watching) {
    std::fprintf(stderr, "demo: %s\n", why.c_str());
    return 1;
  }
  dispatcher.Start();

  if (!bench) {
    book.Log("jankprobe demo: app on OpenJDK, touches at 120/s through libinput.so, remote flag " +
             Absolute(o.config_dir + "/demo.json"));
  }
  SnapshotSmaps("before");
  const long rss_before_app = ResidentKb();
  const long anon_before_app = StatusKb("RssAnon"), file_before_app = StatusKb("RssFile");
  JNIEnv* env = jvm->Env();
  env->PushLocalFrame(16);
  JavaResult r;
  if (ab) {
    jvalue args[7]{};
    args[0].l = jvm->NewString(Absolute(o.config_dir));
    args[1].l = jvm->NewString(o.config);
    args[2].l = jvm->NewString(o.off_config);
    args[3].j = static_cast<jlong>(o.warmup_seconds * 1000);
    args[4].j = static_cast<jlong>(o.ab_settle_ms);
    args[5].j = static_cast<jlong>(o.ab_slice_ms);
    args[6].i = o.ab_slices;
    r = jvm->CallStatic(kAppClass, "benchAB", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;JJJI)[J",
                        {args[0], args[1], args[2], args[3], args[4], args[5], args[6]});
  } else if (bench) {
    jvalue args[6]{};
    args[0].l = jvm->NewString(Absolute(o.config_dir));
    args[1].l = jvm->NewString(o.config);
    args[2].z = o.jankprobe ? JNI_TRUE : JNI_FALSE;
    args[3].z = o.app_printer ? JNI_TRUE : JNI_FALSE;
    args[4].j = static_cast<jlong>(o.warmup_seconds * 1000);
    args[5].j = static_cast<jlong>(o.bench_seconds * 1000);
    r = jvm->CallStatic(kAppClass, "bench", "(Ljava/lang/String;Ljava/lang/String;ZZJJ)[J",
                        {args[0], args[1], args[2], args[3], args[4], args[5]});
  } else {
    jvalue args[5]{};
    args[0].l = jvm->NewString(Absolute(o.config_dir));
    args[1].l = jvm->NewString(Absolute(o.out_dir));
    args[2].z = o.jankprobe ? JNI_TRUE : JNI_FALSE;
    args[3].z = JNI_TRUE;
    args[4].j = 0;
    r = jvm->CallStatic(kAppClass, "run", "(Ljava/lang/String;Ljava/lang/String;ZZJ)[J",
                        {args[0], args[1], args[2], args[3], args[4]});
  }
  const long rss_after_app = ResidentKb();
  const long anon_after_app = StatusKb("RssAnon"), file_after_app = StatusKb("RssFile");
  SnapshotSmaps("after");
  // The app's figures: 6 for a run, 8 per slice for an A/B run ({on, cpu_ns, wall_ns, instructions,
  // cycles, touches, user-mode instructions, user-mode cycles}).
  const int fields = ab ? 8 : 6;
  std::vector<jlong> result(ab ? static_cast<size_t>(o.ab_slices) * fields : fields);
  const jsize got = r.ok && r.value.l ? env->GetArrayLength(static_cast<jlongArray>(r.value.l)) : 0;
  const bool complete = got == static_cast<jsize>(result.size());
  if (complete) env->GetLongArrayRegion(static_cast<jlongArray>(r.value.l), 0, got, result.data());
  env->PopLocalFrame(nullptr);
  dispatcher.Stop();
  watcher.Stop();
  if (ab) {
    bool measured = complete;
    for (int i = 0; i < o.ab_slices; ++i) measured = measured && result[static_cast<size_t>(i) * fields + 2] > 0;
    if (!measured) {
      std::fprintf(stderr, "demo: the A/B run did not complete%s%s\n", r.ok ? "" : ": ", r.ok ? "" : r.why.c_str());
      std::fflush(nullptr);
      _exit(1);
    }
    // One JSON line for bench/demo_bench.cc.
    std::printf("{\"ab\":true,\"config\":\"%s\",\"off_config\":\"%s\",\"reports\":%zu,\"slices\":[",
                o.config.c_str(), o.off_config.c_str(), book.reports().size());
    for (int i = 0; i < o.ab_slices; ++i) {
      const jlong* s = &result[static_cast<size_t>(i) * fields];
      std::printf("%s[%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld]", i ? "," : "", static_cast<long long>(s[0]),
                  static_cast<long long>(s[1]), static_cast<long long>(s[2]), static_cast<long long>(s[3]),
                  static_cast<long long>(s[4]), static_cast<long long>(s[5]), static_cast<long long>(s[6]),
                  static_cast<long long>(s[7]));
    }
    std::printf("]}\n");
    std::fflush(nullptr);
    _exit(0);
  }
  if (!r.ok) {
    std::fprintf(stderr, "demo: the app failed: %s\n", r.why.c_str());
    std::fflush(nullptr);
    _exit(1);
  }
  const double run_s = static_cast<double>(result[2]) / 1e9;

  if (bench) {
    // One JSON line for bench/demo_bench.cc.
    std::printf("{\"jankprobe\":%s,\"start_rc\":%lld,\"main_cpu_ns\":%lld,\"run_ns\":%lld,\"clicks\":%lld,"
                "\"ticks\":%lld,\"input_errors\":%lld,\"touches_published\":%llu,\"touches_finished\":%llu,"
                "\"rss_kb_before_jvm\":%ld,\"rss_kb_before_app\":%ld,\"rss_kb_after_app\":%ld,"
                "\"anon_kb_before_app\":%ld,\"anon_kb_after_app\":%ld,\"file_kb_before_app\":%ld,"
                "\"file_kb_after_app\":%ld,\"rss_kb_running\":%ld,\"anon_kb_running\":%ld,"
                "\"file_kb_running\":%ld,\"reports\":%zu}\n",
                o.jankprobe ? "true" : "false", static_cast<long long>(result[0]), static_cast<long long>(result[1]),
                static_cast<long long>(result[2]), static_cast<long long>(result[3]),
                static_cast<long long>(result[4]), static_cast<long long>(result[5]),
                static_cast<unsigned long long>(dispatcher.published()),
                static_cast<unsigned long long>(dispatcher.finished()), rss_before_jvm, rss_before_app, rss_after_app,
                anon_before_app, anon_after_app, file_before_app, file_after_app, g_running_rss_kb, g_running_anon_kb,
                g_running_file_kb, book.reports().size());
    std::fflush(nullptr);
    _exit(result[0] == 0 && result[5] == 0 ? 0 : 1);
  }

  std::fprintf(out, "\n== the run: %.1f s, %llu touches published, %llu finished (%llu ticks held back while the app "
               "was behind), %lld clicks, %lld feed ticks, main thread CPU %.1f ms\n",
               run_s, static_cast<unsigned long long>(dispatcher.published()),
               static_cast<unsigned long long>(dispatcher.finished()),
               static_cast<unsigned long long>(dispatcher.held_back_ticks()), static_cast<long long>(result[3]),
               static_cast<long long>(result[4]), static_cast<double>(result[1]) / 1e6);
  bool ok = book.SummarizeAndCheck(/*faults_played=*/true);
  if (result[0] != 0) {
    std::fprintf(out, "JankProbe.start returned %lld\n", static_cast<long long>(result[0]));
    ok = false;
  }
  if (result[5] != 0 || dispatcher.errors() != 0) {
    std::fprintf(out, "input channel errors: app %lld, dispatcher %llu\n", static_cast<long long>(result[5]),
                 static_cast<unsigned long long>(dispatcher.errors()));
    ok = false;
  }
  std::fprintf(out, "\nChrome trace: %s\n  open https://ui.perfetto.dev, \"Open trace file\", pick it (or drag it in)\n",
               Absolute(o.out_dir + "/trace.json").c_str());
  std::fprintf(out, "Reports (JSON Lines): %s\n", Absolute(o.out_dir + "/reports.jsonl").c_str());
  if (o.check) std::fprintf(out, "check: %s\n", ok ? "PASSED" : "FAILED");
  std::fflush(nullptr);
  // The JVM is not torn down (DestroyJavaVM waits for every non-daemon thread): leave at once.
  _exit(o.check && !ok ? 1 : 0);
}
