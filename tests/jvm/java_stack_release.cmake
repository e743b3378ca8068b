# The stack release of our attached threads (hook/jni/java_stack_release): a plain test, no JVM needed.
jp_add_gtest(java_stack_release_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/java_stack_release_test.cc LIBS jp_hook)
