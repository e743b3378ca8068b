# The plugin core: lifecycle behind jankprobe.h, reports (blocked_by, key frames, rate limits), exporters.
jp_add_gtest(plugin_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/plugin_test.cc LIBS jp_hook)
jp_add_gtest(report_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/report_test.cc LIBS jp_hook)
jp_add_gtest(plugin_recovery_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/plugin_recovery_test.cc LIBS jp_hook)
