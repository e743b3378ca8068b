# The event timeline (ring, strings, file persistence) and the watchdog.
jp_add_gtest(timeline_ring_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/timeline_ring_test.cc LIBS jp_hook)
jp_add_gtest(timeline_intern_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/timeline_intern_test.cc LIBS jp_hook)
jp_add_gtest(timeline_file_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/timeline_file_test.cc LIBS jp_hook TIMEOUT 120)
jp_add_gtest(watchdog_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/watchdog_test.cc LIBS jp_hook TIMEOUT 120)
