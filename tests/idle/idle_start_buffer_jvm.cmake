# idle_start_jvm_test's scenarios with the wrapper reading the gap word through its direct-buffer view (the
# jankprobe.idle.bufferRead system property, which the test sets for its JVM): ART's path, on HotSpot.
include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(idle_start_buffer_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/idle_start_jvm_test.cc
                STANDINS jp_android_standins)
if(TARGET idle_start_buffer_jvm_test)
  target_compile_definitions(idle_start_buffer_jvm_test PRIVATE JP_IDLE_BUFFER_READ=1)
endif()
