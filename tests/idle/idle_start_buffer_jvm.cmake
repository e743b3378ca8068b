# idle_start_jvm_test's scenarios on the portable jar (jankprobe.jar, what an app gets: its GapWord reads the
# gap word through the direct buffer's view, ART's path), on HotSpot; the test asserts that path.
include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(idle_start_buffer_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/idle_start_jvm_test.cc
                STANDINS jp_android_standins JANKPROBE_JAR jankprobe_java)
if(TARGET idle_start_buffer_jvm_test)
  target_compile_definitions(idle_start_buffer_jvm_test PRIVATE JP_IDLE_BUFFER_READ=1)
endif()
