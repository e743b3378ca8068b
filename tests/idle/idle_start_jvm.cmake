# The idle wrapper's start for each kind of gap word: its own JVM (the test writes the gap words in place of
# the poll source, and its calls from long-gone gaps report lags the other idle tests need not see).
include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(idle_start_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/idle_start_jvm_test.cc STANDINS jp_android_standins)
