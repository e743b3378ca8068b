include(${CMAKE_CURRENT_LIST_DIR}/jvm_harness.cmake)
jp_add_jvm_test(jvm_early_idle_class_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/early_idle_class_test.cc
                STANDINS jp_android_standins)
