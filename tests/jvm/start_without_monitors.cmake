include(${CMAKE_CURRENT_LIST_DIR}/jvm_harness.cmake)
jp_add_jvm_test(jvm_start_without_monitors_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/start_without_monitors_test.cc
                STANDINS jp_android_standins)
