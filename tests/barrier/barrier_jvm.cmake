include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(barrier_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/barrier_jvm_test.cc STANDINS jp_android_standins)
jp_add_jvm_test(barrier_lockfree_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/barrier_lockfree_test.cc
                STANDINS jp_android_standins_lockfree)
