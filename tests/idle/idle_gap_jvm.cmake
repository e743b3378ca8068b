# The idle wrapper's start from the looper poll source's gap: its own JVM (the looper monitor on, with the
# stand-in MessageQueue waiting in the libutils.so fixture).
include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(idle_gap_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/idle_gap_jvm_test.cc STANDINS jp_android_standins)
