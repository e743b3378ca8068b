#include "tests/jvm/jvm_harness.h"

#include <mutex>

namespace jp::testing {
namespace {

std::mutex g_mu;
JvmHarness* g_harness = nullptr;
bool g_tried = false;
std::string g_failure;

}  // namespace

// A Java string's text ("" when the VM cannot give it).
static std::string Utf(JNIEnv* env, jstring s) {
  const char* chars = env->GetStringUTFChars(s, nullptr);
  std::string text = chars ? chars : "";
  if (chars) env->ReleaseStringUTFChars(s, chars);
  return text;
}

std::string JoinClasspath(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += ':';
    out += p;
  }
  return out;
}

JvmHarness* JvmHarness::Get() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_harness;
}

JvmHarness* JvmHarness::Start(const JvmOptions& options, std::string* why) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_harness || g_tried) {
    if (!g_harness && why) *why = g_failure;
    return g_harness;
  }
  g_tried = true;  // a failed JNI_CreateJavaVM cannot be retried in the same process
  auto* h = new JvmHarness();
  if (!h->Init(options, &g_failure)) {
    if (why) *why = g_failure;
    return nullptr;  // leaked on purpose: a half-created VM must not be torn down
  }
  g_harness = h;
  return h;
}

bool JvmHarness::Init(const JvmOptions& options, std::string* why) {
  std::vector<std::string> texts;
  texts.push_back("-Djava.class.path=" + JoinClasspath(options.system_classpath));
  if (options.check_jni) texts.push_back("-Xcheck:jni");  // makes HotSpot warn about JNI misuse (e.g. calls with an exception pending)
  for (const std::string& a : options.jvm_args) texts.push_back(a);
  std::vector<JavaVMOption> opts(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) opts[i].optionString = const_cast<char*>(texts[i].c_str());
  JavaVMInitArgs args{};
  args.version = JNI_VERSION_1_8;
  args.nOptions = static_cast<jint>(opts.size());
  args.options = opts.data();
  args.ignoreUnrecognized = JNI_FALSE;
  JNIEnv* env = nullptr;
  const jint rc = JNI_CreateJavaVM(&vm_, reinterpret_cast<void**>(&env), &args);
  if (rc != JNI_OK) {
    *why = "JNI_CreateJavaVM failed: " + std::to_string(rc);
    return false;
  }

  // new URLClassLoader(URL[] { new File(p).toURI().toURL(), ... }, ClassLoader.getSystemClassLoader())
  env->PushLocalFrame(64);
  jclass file_class = env->FindClass("java/io/File");
  jclass uri_class = env->FindClass("java/net/URI");
  jclass url_class = env->FindClass("java/net/URL");
  jclass loader_class = env->FindClass("java/net/URLClassLoader");
  jclass cl_class = env->FindClass("java/lang/ClassLoader");
  jmethodID file_ctor = env->GetMethodID(file_class, "<init>", "(Ljava/lang/String;)V");
  jmethodID to_uri = env->GetMethodID(file_class, "toURI", "()Ljava/net/URI;");
  jmethodID to_url = env->GetMethodID(uri_class, "toURL", "()Ljava/net/URL;");
  jmethodID loader_ctor = env->GetMethodID(loader_class, "<init>", "([Ljava/net/URL;Ljava/lang/ClassLoader;)V");
  jmethodID system_loader = env->GetStaticMethodID(cl_class, "getSystemClassLoader", "()Ljava/lang/ClassLoader;");
  std::string error = TakeException();
  if (!error.empty()) {
    *why = "JDK classes: " + error;
    return false;
  }
  jobjectArray urls = env->NewObjectArray(static_cast<jsize>(options.app_classpath.size()), url_class, nullptr);
  for (size_t i = 0; i < options.app_classpath.size() && error.empty(); ++i) {
    jobject file = env->NewObject(file_class, file_ctor, NewString(options.app_classpath[i]));
    error = TakeException();
    jobject uri = file && error.empty() ? env->CallObjectMethod(file, to_uri) : nullptr;
    if (error.empty()) error = TakeException();
    jobject url = uri && error.empty() ? env->CallObjectMethod(uri, to_url) : nullptr;
    if (error.empty()) error = TakeException();
    if (error.empty()) env->SetObjectArrayElement(urls, static_cast<jsize>(i), url);
  }
  jobject parent = error.empty() ? env->CallStaticObjectMethod(cl_class, system_loader) : nullptr;
  if (error.empty()) error = TakeException();
  jobject loader = error.empty() ? env->NewObject(loader_class, loader_ctor, urls, parent) : nullptr;
  if (error.empty()) error = TakeException();
  if (!error.empty() || !loader) {
    *why = "app class loader: " + error;
    return false;
  }
  app_loader_ = env->NewGlobalRef(loader);
  env->PopLocalFrame(nullptr);
  return true;
}

JNIEnv* JvmHarness::Env() {
  JNIEnv* env = nullptr;
  if (vm_->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) == JNI_OK) return env;
  if (vm_->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), nullptr) != JNI_OK) return nullptr;
  return env;
}

std::string JvmHarness::TakeException() {
  JNIEnv* env = Env();
  if (!env->ExceptionCheck()) return std::string();
  jthrowable t = env->ExceptionOccurred();
  env->ExceptionClear();
  jclass throwable = env->FindClass("java/lang/Throwable");
  jmethodID to_string = env->GetMethodID(throwable, "toString", "()Ljava/lang/String;");
  auto s = static_cast<jstring>(env->CallObjectMethod(t, to_string));
  std::string text = "exception";
  if (!env->ExceptionCheck() && s) text = Utf(env, s);
  env->ExceptionClear();
  env->DeleteLocalRef(s);
  env->DeleteLocalRef(throwable);
  env->DeleteLocalRef(t);
  return text;
}

jstring JvmHarness::NewString(const std::string& s) { return Env()->NewStringUTF(s.c_str()); }

jclass JvmHarness::AppClass(const std::string& binary_name, std::string* why) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (const auto& [name, cls] : classes_) {
      if (name == binary_name) return cls;
    }
  }
  JNIEnv* env = Env();
  env->PushLocalFrame(16);
  jclass class_class = env->FindClass("java/lang/Class");
  jmethodID for_name =
      env->GetStaticMethodID(class_class, "forName", "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;");
  jobject cls = env->CallStaticObjectMethod(class_class, for_name, NewString(binary_name), JNI_TRUE, app_loader_);
  const std::string error = TakeException();
  jclass global = nullptr;
  if (error.empty() && cls) global = static_cast<jclass>(env->NewGlobalRef(cls));
  env->PopLocalFrame(nullptr);
  if (!global) {
    if (why) *why = "Class.forName(" + binary_name + "): " + error;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  classes_.emplace_back(binary_name, global);
  return global;
}

JavaResult JvmHarness::CallStatic(const std::string& class_name, const char* method, const char* sig,
                                  const std::vector<jvalue>& args) {
  JavaResult r;
  jclass cls = AppClass(class_name, &r.why);
  if (!cls) return r;
  JNIEnv* env = Env();
  jmethodID id = env->GetStaticMethodID(cls, method, sig);
  if (!id) {
    r.why = class_name + "." + method + sig + ": " + TakeException();
    return r;
  }
  const std::string s(sig);
  const char ret = s[s.find(')') + 1];
  const jvalue* a = args.empty() ? nullptr : args.data();
  switch (ret) {
    case 'V': env->CallStaticVoidMethodA(cls, id, a); break;
    case 'Z': r.value.z = env->CallStaticBooleanMethodA(cls, id, a); break;
    case 'I': r.value.i = env->CallStaticIntMethodA(cls, id, a); break;
    case 'J': r.value.j = env->CallStaticLongMethodA(cls, id, a); break;
    default: r.value.l = env->CallStaticObjectMethodA(cls, id, a); break;
  }
  r.why = TakeException();
  r.ok = r.why.empty();
  if (r.ok && (ret == 'L') && r.value.l && s.find(")Ljava/lang/String;") != std::string::npos) {
    r.text = Utf(env, static_cast<jstring>(r.value.l));
  }
  return r;
}

JavaResult JvmHarness::StaticString(const std::string& class_name, const char* field) {
  JavaResult r;
  jclass cls = AppClass(class_name, &r.why);
  if (!cls) return r;
  JNIEnv* env = Env();
  jfieldID id = env->GetStaticFieldID(cls, field, "Ljava/lang/String;");
  if (!id) {
    r.why = class_name + "." + field + ": " + TakeException();
    return r;
  }
  auto str = static_cast<jstring>(env->GetStaticObjectField(cls, id));
  r.ok = str != nullptr;
  if (!r.ok) r.why = class_name + "." + field + " is null";
  r.value.l = str;
  if (str) r.text = Utf(env, str);
  return r;
}

}  // namespace jp::testing
