#include "hook/jni/jni_refs.h"

#include <atomic>
#include <mutex>

#include "hook/jni/jni_util.h"

namespace jp::jni {

// Constant-initialised (no relocation, nothing runs at load): see MainGapBlock.
JP_CONSTINIT MainGapBlock g_main_gap;

namespace {

std::atomic<JavaVM*> g_vm{nullptr};

// The class loader of com.jankprobe.JankProbe (the app's), remembered by JNI_OnLoad: every class below is
// looked up through it, so a set can be resolved later from any thread. FindClass would use the calling
// thread's loader, which on a thread attached from native code sees only the boot classes.
jobject g_loader = nullptr;           // global ref; nullptr: the facade came from the boot loader
jmethodID g_load_class = nullptr;     // ClassLoader.loadClass(String), which links but does not initialise

// Each set is resolved the first time a monitor asks for it (its Start, when the remote flag enables it),
// not in JNI_OnLoad: a monitor that stays off loads none of its classes (metaspace), interns none of its
// names and makes none of its global refs. The flag is set, under g_resolve_mu, once the set's fields are
// final; readers check it with one acquire load, so the accessors stay cheap on the watchdog's paths.
std::mutex g_resolve_mu;
std::atomic<bool> g_queue_resolved{false};
std::atomic<bool> g_idle_resolved{false};
std::atomic<bool> g_barrier_resolved{false};
std::atomic<bool> g_looper_resolved{false};  // the looper monitor's sets: class names, pending list, frames
std::atomic<bool> g_printer_resolved{false};  // the printer source's

QueueRefs g_queue;
IdleRefs g_idle;
BarrierRefs g_barrier;
LooperRefs g_looper;
FrameRefs g_frames;
PrinterRefs g_printer;
std::atomic<const LooperHooks*> g_looper_hooks{nullptr};
std::atomic<const IdleHooks*> g_idle_hooks{nullptr};

jclass LoadClass(JNIEnv* env, const char* name) {
  if (!g_loader) return env->FindClass(name);
  std::string binary(name);
  for (char& c : binary) {
    if (c == '/') c = '.';
  }
  jstring jname = env->NewStringUTF(binary.c_str());
  if (!jname) return nullptr;  // OutOfMemoryError pending: the caller takes it
  auto c = static_cast<jclass>(env->CallObjectMethod(g_loader, g_load_class, jname));
  env->DeleteLocalRef(jname);
  return c;
}

// Small resolver that stops at the first failure and remembers what it was looking for, so a reason reads
// "android/os/MessageQueue.mIdleHandlers: java.lang.NoSuchFieldError: mIdleHandlers".
class Resolver {
 public:
  explicit Resolver(JNIEnv* env) : env_(env) {}
  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }

  // name in JNI form ("android/os/Looper"). The class is loaded and linked, not initialised: its static
  // initialiser runs only when a monitor first uses it.
  jclass Class(const char* name) {
    if (!ok()) return nullptr;
    jclass local = LoadClass(env_, name);
    if (Failed(name) || !local) return Missing(name);
    auto global = static_cast<jclass>(env_->NewGlobalRef(local));
    env_->DeleteLocalRef(local);
    return global;
  }
  jfieldID Field(jclass c, const char* cname, const char* name, const char* sig) {
    if (!ok() || !c) return nullptr;
    jfieldID id = env_->GetFieldID(c, name, sig);
    const std::string what = std::string(cname) + "." + name;
    if (Failed(what.c_str()) || !id) return static_cast<jfieldID>(Missing(what.c_str()));
    return id;
  }
  jfieldID StaticField(jclass c, const char* cname, const char* name, const char* sig) {
    if (!ok() || !c) return nullptr;
    jfieldID id = env_->GetStaticFieldID(c, name, sig);
    const std::string what = std::string(cname) + "." + name;
    if (Failed(what.c_str()) || !id) return static_cast<jfieldID>(Missing(what.c_str()));
    return id;
  }
  jmethodID Method(jclass c, const char* cname, const char* name, const char* sig, bool is_static = false) {
    if (!ok() || !c) return nullptr;
    jmethodID id = is_static ? env_->GetStaticMethodID(c, name, sig) : env_->GetMethodID(c, name, sig);
    const std::string what = std::string(cname) + "." + name + sig;
    if (Failed(what.c_str()) || !id) return static_cast<jmethodID>(Missing(what.c_str()));
    return id;
  }
  // RegisterNatives: a native the class does not declare (NoSuchMethodError) fails the set.
  template <size_t N>
  void Natives(jclass c, const char* cname, const JNINativeMethod (&methods)[N]) {
    if (!ok() || !c) return;
    const jint rc = env_->RegisterNatives(c, methods, static_cast<jint>(N));
    const std::string what = std::string("RegisterNatives ") + cname;
    if (Failed(what.c_str()) || rc != JNI_OK) Missing(what.c_str());
  }

 private:
  bool Failed(const char* what) { return TakeException(env_, what, &why_); }
  std::nullptr_t Missing(const char* what) {
    if (ok()) why_ = std::string(what) + ": not found";
    return nullptr;
  }
  JNIEnv* env_;
  std::string why_;
};

void ResolveQueue(JNIEnv* env) {
  Resolver r(env);
  g_queue.looper = r.Class("android/os/Looper");
  g_queue.message_queue = r.Class("android/os/MessageQueue");
  g_queue.looper_get_main = r.Method(g_queue.looper, "Looper", "getMainLooper", "()Landroid/os/Looper;", true);
  g_queue.looper_get_queue = r.Method(g_queue.looper, "Looper", "getQueue", "()Landroid/os/MessageQueue;");
  g_queue.system_clock = r.Class("android/os/SystemClock");
  g_queue.uptime_millis = r.Method(g_queue.system_clock, "SystemClock", "uptimeMillis", "()J", true);
  g_queue.ok = r.ok();
  g_queue.why = r.why();
}

void JNICALL NativeIdleArm(JNIEnv* env, jclass, jlong started_ns) {
  const IdleHooks* hooks = g_idle_hooks.load(std::memory_order_acquire);
  if (hooks) hooks->arm(env, started_ns);
}

// The one clear of running_since for a call that did not fold, hooks or not. First: it must precede the
// end's fence with the watchdog's capture (idle_timing.cc, AttachStack), and with no hooks (the monitor
// off) the call is not timed but has ended all the same: the watchdog must not see it running.
jint JNICALL NativeIdleEnd(JNIEnv* env, jclass, jlong started_ns, jlong ended_ns, jint name_key, jstring handler_class,
                           jboolean keep, jboolean counted) {
  IdleSharedWords().running_since.store(0, std::memory_order_relaxed);
  const IdleHooks* hooks = g_idle_hooks.load(std::memory_order_acquire);
  return hooks ? hooks->end(env, started_ns, ended_ns, name_key, handler_class, keep, counted) : 0;
}

// A buffer over the idle words (24 bytes at the end of the poll gate's line) for TimingIdleHandlerList's
// static initialiser, or null with no exception pending (out of memory, or a VM without JNI access to
// direct buffers): the initialiser then throws, the class fails to initialise and ResolveIdle's member
// lookups report it.
jobject JNICALL NativeIdleWords(JNIEnv* env, jclass) {
  jobject buffer = env->NewDirectByteBuffer(&IdleSharedWords(), sizeof(IdleWords));
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return nullptr;
  }
  return buffer;
}

// The words' address for the host GapWord's Unsafe read of the gap word on HotSpot (java/hotspot: its static
// initialiser; static storage, so the address stays valid for the life of the process). Declared in
// TimingIdleHandlerList, as nativeUnsafe, so that both jars have the natives registered here; the portable
// GapWord (java/src, what apps get) never calls either. From here rather
// than from the buffer's internals by reflection: the same storage as nativeWords' buffer by construction.
jlong JNICALL NativeIdleWordsAddress(JNIEnv*, jclass) {
  return static_cast<jlong>(reinterpret_cast<intptr_t>(&IdleSharedWords()));
}

// sun.misc.Unsafe.theUnsafe for the same read, or null with no exception pending (no such class or field:
// the wrapper then keeps its buffer, no error). Called from the host GapWord's static initialiser only (never
// with the portable jar), so FindClass searches from its loader (the app's, which delegates to the platform's).
// Through JNI, which checks no access, rather than by reflection in Java, which loads accessor classes.
jobject JNICALL NativeIdleUnsafe(JNIEnv* env, jclass) {
  jclass unsafe = env->FindClass("sun/misc/Unsafe");
  jfieldID the = unsafe ? env->GetStaticFieldID(unsafe, "theUnsafe", "Lsun/misc/Unsafe;") : nullptr;
  jobject out = the ? env->GetStaticObjectField(unsafe, the) : nullptr;
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    out = nullptr;
  }
  if (unsafe) env->DeleteLocalRef(unsafe);
  return out;
}

void ResolveIdle(JNIEnv* env) {
  if (!g_queue.ok) {
    g_idle.why = g_queue.why;
    return;
  }
  static const JNINativeMethod kNatives[] = {
      {const_cast<char*>("nativeArm"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(NativeIdleArm)},
      {const_cast<char*>("nativeEnd"), const_cast<char*>("(JJILjava/lang/String;ZZ)I"),
       reinterpret_cast<void*>(NativeIdleEnd)},
      {const_cast<char*>("nativeWords"), const_cast<char*>("()Ljava/nio/ByteBuffer;"),
       reinterpret_cast<void*>(NativeIdleWords)},
      {const_cast<char*>("nativeWordsAddress"), const_cast<char*>("()J"),
       reinterpret_cast<void*>(NativeIdleWordsAddress)},
      {const_cast<char*>("nativeUnsafe"), const_cast<char*>("()Ljava/lang/Object;"),
       reinterpret_cast<void*>(NativeIdleUnsafe)},
  };
  Resolver r(env);
  IdleRefs& i = g_idle;
  i.idle_handlers = r.Field(g_queue.message_queue, "MessageQueue", "mIdleHandlers", "Ljava/util/ArrayList;");
  i.timing_list = r.Class("com/jankprobe/TimingIdleHandlerList");
  // The natives before any member lookup: Class() loads and links the class without initialising it, the
  // first GetMethodID initialises it, and its static initialiser takes the shared words from nativeWords.
  // Nothing of jankprobe's initialises it before (JankProbe never names it); app code that did, before the
  // idle monitor's first start, would find nativeWords unregistered: the class would fail to initialise
  // (UnsatisfiedLinkError) and the lookups below would say so.
  r.Natives(i.timing_list, "TimingIdleHandlerList", kNatives);
  i.timing_list_ctor = r.Method(i.timing_list, "TimingIdleHandlerList", "<init>", "(Ljava/util/Collection;)V");
  i.timing_list_unwrapped = r.Method(i.timing_list, "TimingIdleHandlerList", "unwrapped", "()Ljava/util/ArrayList;");
  i.timing_list_fold_below = r.StaticField(i.timing_list, "TimingIdleHandlerList", "foldBelowNs", "J");
  i.timing_list_figures = r.Method(i.timing_list, "TimingIdleHandlerList", "figures", "()[Ljava/lang/Object;", true);
  i.timing_list_covered = r.StaticField(i.timing_list, "TimingIdleHandlerList", "covered", "I");
  i.ok = r.ok();
  i.why = r.why();
}

void ResolveBarrier(JNIEnv* env) {
  if (!g_queue.ok) {
    g_barrier.why = g_queue.why;
    return;
  }
  Resolver r(env);
  BarrierRefs& b = g_barrier;
  jclass mq = g_queue.message_queue;
  b.messages = r.Field(mq, "MessageQueue", "mMessages", "Landroid/os/Message;");
  b.remove_sync_barrier = r.Method(mq, "MessageQueue", "removeSyncBarrier", "(I)V");
  b.message = r.Class("android/os/Message");
  b.msg_target = r.Field(b.message, "Message", "target", "Landroid/os/Handler;");
  b.msg_when = r.Field(b.message, "Message", "when", "J");
  b.msg_arg1 = r.Field(b.message, "Message", "arg1", "I");
  b.msg_obtain = r.Method(b.message, "Message", "obtain", "(Landroid/os/Handler;I)Landroid/os/Message;", true);
  b.msg_set_async = r.Method(b.message, "Message", "setAsynchronous", "(Z)V");
  b.handler = r.Class("android/os/Handler");
  b.handler_ctor = r.Method(b.handler, "Handler", "<init>", "(Landroid/os/Looper;)V");
  b.handler_send = r.Method(b.handler, "Handler", "sendMessage", "(Landroid/os/Message;)Z");
  b.handler_send_delayed = r.Method(b.handler, "Handler", "sendMessageDelayed", "(Landroid/os/Message;J)Z");
  b.handler_has = r.Method(b.handler, "Handler", "hasMessages", "(I)Z");
  b.handler_remove = r.Method(b.handler, "Handler", "removeMessages", "(I)V");
  b.ok = r.ok();
  b.why = r.why();
  if (b.ok) {
    // Optional: its absence (NoSuchFieldError, cleared) means a queue with one implementation. Cleared
    // through the function table: JNIEnv_::ExceptionClear has an out-of-line copy in plain .text (only the
    // rare paths used it), and this path runs at every start on most devices.
    b.use_concurrent = env->GetFieldID(mq, "mUseConcurrent", "Z");
    if (env->functions->ExceptionCheck(env)) env->functions->ExceptionClear(env);
  }
}

void JNICALL NativeLooperBegin(JNIEnv* env, jclass, jstring line) {
  const LooperHooks* hooks = g_looper_hooks.load(std::memory_order_acquire);
  if (hooks) hooks->begin(env, line);
}

void JNICALL NativeLooperEnd(JNIEnv* env, jclass) {
  const LooperHooks* hooks = g_looper_hooks.load(std::memory_order_acquire);
  if (hooks) hooks->end(env);
}

void JNICALL NativeFrame(JNIEnv* env, jclass, jlong frame_time_nanos) {
  const LooperHooks* hooks = g_looper_hooks.load(std::memory_order_acquire);
  if (hooks) hooks->frame(env, frame_time_nanos);
}

void JNICALL NativeFrames(JNIEnv* env, jclass, jlong frame_time_nanos, jint count) {
  const LooperHooks* hooks = g_looper_hooks.load(std::memory_order_acquire);
  if (hooks) hooks->frames(env, frame_time_nanos, count);
}

void JNICALL NativeParked(JNIEnv* env, jclass, jboolean parked) {
  const LooperHooks* hooks = g_looper_hooks.load(std::memory_order_acquire);
  if (hooks && hooks->parked) hooks->parked(env, parked);
}

// The looper monitor's sets, whichever source it runs: class names, the pending-message walk, the frame
// ticker (its natives registered here). The printer's set is PrinterRefs, resolved on its own.
void ResolveLooper(JNIEnv* env) {
  if (!g_queue.ok) {
    g_looper.why = g_looper.pending_why = g_frames.why = g_queue.why;
    return;
  }
  LooperRefs& l = g_looper;
  {
    Resolver r(env);
    l.class_class = r.Class("java/lang/Class");
    l.class_get_name = r.Method(l.class_class, "Class", "getName", "()Ljava/lang/String;");
    l.ok = r.ok();
    l.why = r.why();
  }
  {
    Resolver r(env);
    l.queue_messages = r.Field(g_queue.message_queue, "MessageQueue", "mMessages", "Landroid/os/Message;");
    jclass message = r.Class("android/os/Message");
    l.msg_next = r.Field(message, "Message", "next", "Landroid/os/Message;");
    l.msg_when = r.Field(message, "Message", "when", "J");
    l.msg_what = r.Field(message, "Message", "what", "I");
    l.msg_target = r.Field(message, "Message", "target", "Landroid/os/Handler;");
    l.msg_callback = r.Field(message, "Message", "callback", "Ljava/lang/Runnable;");
    l.msg_is_async = r.Method(message, "Message", "isAsynchronous", "()Z");
    (void)message;  // kept as a global ref: the ids stay valid only while the class stays loaded
    l.pending_ok = r.ok();
    l.pending_why = r.why();
  }
  {
    static const JNINativeMethod kTicker[] = {
        {const_cast<char*>("nativeFrame"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(NativeFrame)},
        {const_cast<char*>("nativeFrames"), const_cast<char*>("(JI)V"), reinterpret_cast<void*>(NativeFrames)},
        {const_cast<char*>("nativeParked"), const_cast<char*>("(Z)V"), reinterpret_cast<void*>(NativeParked)},
    };
    Resolver r(env);
    FrameRefs& f = g_frames;
    f.ticker = r.Class("com/jankprobe/FrameTicker");
    r.Natives(f.ticker, "FrameTicker", kTicker);
    f.ticker_ctor = r.Method(f.ticker, "FrameTicker", "<init>", "()V");
    f.ticker_start = r.Method(f.ticker, "FrameTicker", "start", "()V");
    f.ticker_stop = r.Method(f.ticker, "FrameTicker", "stop", "()V");
    f.ticker_resume_from_native = r.Method(f.ticker, "FrameTicker", "resumeFromNative", "()V", true);
    // The ticker links against android.view.Choreographer only when it runs: check it is there now (loaded,
    // not initialised; on the host stand-in its initialiser builds the vsync executor).
    jclass choreographer = r.Class("android/view/Choreographer");
    if (choreographer) env->DeleteGlobalRef(choreographer);
    f.ok = r.ok();
    f.why = r.why();
  }
}

// The printer source's set (ResolveLooper's ran before: LooperPrinter calls into FrameTicker).
void ResolvePrinter(JNIEnv* env) {
  if (!g_queue.ok) {
    g_printer.why = g_queue.why;
    return;
  }
  static const JNINativeMethod kPrinter[] = {
      {const_cast<char*>("nativeBegin"), const_cast<char*>("(Ljava/lang/String;)V"),
       reinterpret_cast<void*>(NativeLooperBegin)},
      {const_cast<char*>("nativeEnd"), const_cast<char*>("()V"), reinterpret_cast<void*>(NativeLooperEnd)},
  };
  Resolver r(env);
  PrinterRefs& p = g_printer;
  p.looper_logging = r.Field(g_queue.looper, "Looper", "mLogging", "Landroid/util/Printer;");
  p.set_message_logging = r.Method(g_queue.looper, "Looper", "setMessageLogging", "(Landroid/util/Printer;)V");
  p.printer = r.Class("com/jankprobe/LooperPrinter");
  r.Natives(p.printer, "LooperPrinter", kPrinter);
  p.printer_ctor = r.Method(p.printer, "LooperPrinter", "<init>", "(Landroid/util/Printer;)V");
  p.printer_retire = r.Method(p.printer, "LooperPrinter", "retire", "()V");
  p.printer_previous = r.Method(p.printer, "LooperPrinter", "previous", "()Landroid/util/Printer;");
  p.printer_chains_to = r.Method(p.printer, "LooperPrinter", "chainsTo",
                                 "(Landroid/util/Printer;Lcom/jankprobe/LooperPrinter;)Z", true);
  p.ok = r.ok();
  p.why = r.why();
}

enum class Set { kQueue, kIdle, kBarrier, kLooper, kPrinter };

void MarkUnresolvable(Set set, const std::string& why) {
  switch (set) {
    case Set::kQueue: g_queue.why = why; break;
    case Set::kIdle: g_idle.why = why; break;
    case Set::kBarrier: g_barrier.why = why; break;
    case Set::kLooper: g_looper.why = g_frames.why = g_looper.pending_why = why; break;
    case Set::kPrinter: g_printer.why = why; break;
  }
}

// Resolves `set` (and the sets it builds on: the queue's, and the looper's for the printer's) on the
// calling thread, attaching it if it is not attached yet. Without a VM (the library loaded by dlopen, not
// System.loadLibrary) nothing is resolved and the set says why; the monitors check Vm() themselves and
// report the same.
void Resolve(Set set, std::atomic<bool>* done) {
  std::lock_guard<std::mutex> lock(g_resolve_mu);
  if (done->load(std::memory_order_relaxed)) return;
  JavaVM* vm = g_vm.load(std::memory_order_acquire);
  if (!vm) {
    MarkUnresolvable(set, "no Java VM: libjankprobe.so was not loaded with System.loadLibrary");
    return;
  }
  std::string why;
  JNIEnv* env = AttachedEnv(vm, "jankprobe-control", &why);
  if (!env) {
    MarkUnresolvable(set, why);  // not marked done: a later call may attach
    return;
  }
  ScopedLocalFrame frame(env, 32);
  if (!frame.ok()) {
    MarkUnresolvable(set, "PushLocalFrame failed");
    return;
  }
  if (!g_queue_resolved.load(std::memory_order_relaxed)) {
    ResolveQueue(env);
    g_queue_resolved.store(true, std::memory_order_release);
  }
  if (set == Set::kPrinter && !g_looper_resolved.load(std::memory_order_relaxed)) {
    ResolveLooper(env);
    g_looper_resolved.store(true, std::memory_order_release);
  }
  switch (set) {
    case Set::kQueue: break;
    case Set::kIdle: ResolveIdle(env); break;
    case Set::kBarrier: ResolveBarrier(env); break;
    case Set::kLooper: ResolveLooper(env); break;
    case Set::kPrinter: ResolvePrinter(env); break;
  }
  done->store(true, std::memory_order_release);
}

template <typename Refs>
const Refs& Resolved(Set set, std::atomic<bool>* done, const Refs& refs) {
  if (!done->load(std::memory_order_acquire)) Resolve(set, done);
  return refs;
}

}  // namespace

bool RememberClassLoader(JNIEnv* env, jclass anchor, std::string* why) {
  jclass class_class = env->FindClass("java/lang/Class");
  if (TakeException(env, "FindClass java/lang/Class", why) || !class_class) return false;
  jmethodID get_loader = env->GetMethodID(class_class, "getClassLoader", "()Ljava/lang/ClassLoader;");
  env->DeleteLocalRef(class_class);
  if (TakeException(env, "Class.getClassLoader", why) || !get_loader) return false;
  jobject loader = env->CallObjectMethod(anchor, get_loader);
  if (TakeException(env, "Class.getClassLoader()", why)) return false;
  if (!loader) return true;  // boot loader: FindClass sees the same classes from every thread
  jclass loader_class = env->FindClass("java/lang/ClassLoader");
  if (TakeException(env, "FindClass java/lang/ClassLoader", why) || !loader_class) return false;
  g_load_class = env->GetMethodID(loader_class, "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;");
  env->DeleteLocalRef(loader_class);
  if (TakeException(env, "ClassLoader.loadClass", why) || !g_load_class) return false;
  g_loader = env->NewGlobalRef(loader);
  env->DeleteLocalRef(loader);
  if (!g_loader) {
    if (why) *why = "NewGlobalRef(class loader) failed";
    return false;
  }
  return true;
}

const QueueRefs& Queue() { return Resolved(Set::kQueue, &g_queue_resolved, g_queue); }
const IdleRefs& Idle() { return Resolved(Set::kIdle, &g_idle_resolved, g_idle); }
const BarrierRefs& Barrier() { return Resolved(Set::kBarrier, &g_barrier_resolved, g_barrier); }
const LooperRefs& Looper() { return Resolved(Set::kLooper, &g_looper_resolved, g_looper); }
const FrameRefs& Frames() { return Resolved(Set::kLooper, &g_looper_resolved, g_frames); }
const PrinterRefs& Printer() { return Resolved(Set::kPrinter, &g_printer_resolved, g_printer); }

JavaVM* Vm() { return g_vm.load(std::memory_order_acquire); }
void SetVm(JavaVM* vm) { g_vm.store(vm, std::memory_order_release); }


jobject MainLooper(JNIEnv* env, std::string* why) {
  if (!Queue().ok) {
    if (why) *why = g_queue.why;
    return nullptr;
  }
  jobject looper = env->CallStaticObjectMethod(g_queue.looper, g_queue.looper_get_main);
  if (TakeException(env, "Looper.getMainLooper", why)) return nullptr;
  if (!looper && why) *why = "no main looper yet (Looper.prepareMainLooper has not run)";
  return looper;
}

jobject MainQueue(JNIEnv* env, std::string* why) {
  jobject looper = MainLooper(env, why);
  if (!looper) return nullptr;
  jobject queue = env->CallObjectMethod(looper, g_queue.looper_get_queue);
  env->DeleteLocalRef(looper);
  if (TakeException(env, "Looper.getQueue", why)) return nullptr;
  if (!queue && why) *why = "the main looper has no MessageQueue";
  return queue;
}

void SetLooperHooks(const LooperHooks* hooks) { g_looper_hooks.store(hooks, std::memory_order_release); }

void SetIdleHooks(const IdleHooks* hooks) { g_idle_hooks.store(hooks, std::memory_order_release); }

}  // namespace jp::jni
