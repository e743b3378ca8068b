// The idle wrapper's start for each kind of gap word (TimingIdleHandlerList.Timed#queueIdle): a clean gap
// the previous call did not see is the start, however old; the same gap again chains to the previous call's
// end; a flagged gap or none takes the wrapper's own clock read. IdleStartScenarios writes the gap words (in
// place of the poll source, which this idle-only configuration leaves off), calls one wrapped handler per
// case on the main thread and returns the duration the wrapper added to the handler class's figures with
// the bounds the clock reads around the call give (ground truth).
//
// Built twice, one JVM each, once per GapWord, the class that reads the gap word (TimingIdleHandlerList.GAP_READ
// says how): idle_start_jvm_test with jankprobe-hotspot.jar, where it must be Unsafe.getLong at the words'
// address (a silent fall back to the buffer fails it), and idle_start_buffer_jvm_test (JP_IDLE_BUFFER_READ)
// with the portable jankprobe.jar an app gets, whose GapWord reads the direct buffer's view (ART's path). The
// scenarios are the same for both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/jvm/app_under_test.h"
#include "tests/jvm/status_json.h"

namespace jp::testing {
namespace {

const char* kConfig =
    R"({"input":{"enabled":false},"looper":{"enabled":false},"barrier":{"enabled":false},"idle":{"lag_ms":150}})";

#ifndef JP_IDLE_BUFFER_READ
#define JP_IDLE_BUFFER_READ 0
#endif

const AppLaunch& Launch() { return LaunchApp(kConfig); }

// TimingIdleHandlerList.GAP_READ (how the wrapper reads the gap word), or "error: <why>".
std::string GapRead() {
  const JavaResult r = Jvm()->StaticString("com.jankprobe.TimingIdleHandlerList", "GAP_READ");
  if (r.value.l) Jvm()->Env()->DeleteLocalRef(r.value.l);
  return r.ok ? r.text : "error: " + r.why;
}

TEST(IdleStartJvmTest, TheGapWordIsReadTheWayThisJarsGapWordDoes) {
  const AppLaunch& launch = Launch();
  if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  ASSERT_EQ(launch.start_rc, 0) << CallString("status");
  ASSERT_EQ(StatusOf("idle").state, "on");  // the wrapper's class is initialised
  if (JP_IDLE_BUFFER_READ) {
    // The portable GapWord names no Unsafe: the view, whatever the VM.
    EXPECT_EQ(GapRead(), "direct buffer: the portable GapWord");
  } else {
    // The host's GapWord on HotSpot (OpenJDK 17): the Unsafe read, not a silent fall back to the buffer.
    EXPECT_EQ(GapRead(), "Unsafe.getLong(address)");
  }
}

TEST(IdleStartJvmTest, EveryCallIsTimedFromItsGapThePreviousEndOfItsPassOrItsOwnClock) {
  const AppLaunch& launch = Launch();
  if (!launch.ok) GTEST_SKIP() << "no JVM in this process: " << launch.why;
  ASSERT_EQ(launch.start_rc, 0) << CallString("status");
  ASSERT_EQ(StatusOf("idle").state, "on");
  const char* cases[] = {
      "a clean gap 3 ms old (its start)",
      "a clean gap 2.5 s old (its start)",
      "a gap 2^32 ns after the previous call's, same low 32 bits (a new pass: its start)",
      "the first handler of a pass (its gap)",
      "the second handler of that pass (the first one's end)",
      "a flagged gap (the wrapper's clock)",
      "no gap (the wrapper's clock)",
      "no gap again, 2 ms later (the wrapper's clock, not chained)",
      "a clean gap ahead of the clock (0, not less)",
      "the longest of a class's calls, 3 ms then 1 ms (the figure: equal to the larger)",
  };
  constexpr int kCases = sizeof(cases) / sizeof(cases[0]);
  JNIEnv* env = Jvm()->Env();
  env->PushLocalFrame(8);
  JavaResult r = Jvm()->CallStatic("com.example.app.IdleStartScenarios", "onMain", "()[J", {});
  std::vector<jlong> v(3 * kCases, -1);
  const bool got = r.ok && r.value.l && env->GetArrayLength(static_cast<jlongArray>(r.value.l)) == 3 * kCases;
  if (got) env->GetLongArrayRegion(static_cast<jlongArray>(r.value.l), 0, 3 * kCases, v.data());
  env->PopLocalFrame(nullptr);
  ASSERT_TRUE(r.ok) << r.why;
  ASSERT_TRUE(got) << "the main thread did not run the cases (or their count differs)";
  for (int i = 0; i < kCases; ++i) {
    const std::string what = std::string(cases[i]) + ": " + std::to_string(v[3 * i]) + " ns, the true duration in [" +
                             std::to_string(v[3 * i + 1]) + ", " + std::to_string(v[3 * i + 2]) + "]";
    EXPECT_GE(v[3 * i], v[3 * i + 1]) << what;
    EXPECT_LE(v[3 * i], v[3 * i + 2]) << what;
  }
}

}  // namespace
}  // namespace jp::testing
