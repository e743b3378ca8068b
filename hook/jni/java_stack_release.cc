#include "hook/jni/java_stack_release.h"

namespace jp::jni {

__thread bool t_java_frames_ran = false;

namespace internal {
StackReleaseState g_stack_release;
}  // namespace internal

}  // namespace jp::jni
