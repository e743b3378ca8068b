#include "hook/jni/java_stack_release.h"

namespace jp::jni {

__thread bool t_java_frames_ran = false;
__thread uint64_t t_rare_text_sweep_ns = 0;

namespace internal {
StackReleaseState g_stack_release;
}  // namespace internal

}  // namespace jp::jni
