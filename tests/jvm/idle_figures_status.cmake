include(${CMAKE_CURRENT_LIST_DIR}/jvm_harness.cmake)
jp_add_jvm_test(jvm_idle_figures_status_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/idle_figures_status_test.cc
                STANDINS jp_android_standins)
