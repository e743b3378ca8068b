include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(idle_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/idle_jvm_test.cc STANDINS jp_android_standins)
