# The looper monitor: pure parts (line parsing, history window, sample merging, frame gaps) as unit tests,
# the monitor itself on the real-JVM harness.
jp_add_gtest(looper_unit_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/dispatch_line_test.cc ${CMAKE_CURRENT_LIST_DIR}/message_history_test.cc
          ${CMAKE_CURRENT_LIST_DIR}/stack_samples_test.cc ${CMAKE_CURRENT_LIST_DIR}/frame_stats_test.cc
  LIBS jp_looper jp_hook)

include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(looper_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/looper_jvm_test.cc STANDINS jp_android_standins)
# The poll source on the same harness: its own JVM (its own default config), and our engine (jp_plt) to
# read libutils.so's GOT slot.
jp_add_jvm_test(looper_poll_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/looper_poll_jvm_test.cc STANDINS jp_android_standins)
if(TARGET looper_poll_jvm_test)
  target_link_libraries(looper_poll_jvm_test PRIVATE jp_plt)
endif()
# The poll source natively (no JVM): its gap records through the drain and the report sink's providers.
include(${CMAKE_CURRENT_LIST_DIR}/../fixtures/libutils.cmake)
if(TARGET jp_libutils)
  jp_add_gtest(poll_source_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/poll_source_test.cc LIBS jp_looper jp_hook jp_plt TIMEOUT 60)
  target_compile_definitions(poll_source_test PRIVATE JP_LIBUTILS_PATH="$<TARGET_FILE:jp_libutils>")
  add_dependencies(poll_source_test jp_libutils)
endif()
