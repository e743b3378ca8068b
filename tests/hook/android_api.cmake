# The device's API level (hook/android_api.h), read by the input monitor and the asymmetric fence.
jp_add_gtest(android_api_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/android_api_test.cc LIBS jp_hook)
