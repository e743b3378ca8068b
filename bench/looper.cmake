# The looper monitor's cost on the main thread: Looper's two log lines per message through jankprobe's
# LooperPrinter vs through a do-nothing Printer (the stand-in's own cost), and whole dispatches with the
# monitor off, on the printer source and on the poll source. Runs a real JVM in-process (the JVM test
# harness), so it needs the JDK.
include(${PROJECT_SOURCE_DIR}/tests/jvm/jvm_harness.cmake)
if(TARGET jp_jvm_harness)
  # The stand-in MessageQueue waits in the libutils.so fixture: the poll source's ground.
  jp_add_jvm_bench(looper_bench ${CMAKE_CURRENT_LIST_DIR}/looper_bench.cc)
endif()

# The poll source per gap, natively: the libutils.so fixture's pollOnce(0) unhooked / hooked on another
# thread / hooked on the main thread, with the real timeline, watchdog and looper timing (no JVM).
if(TARGET jp_libutils)
  add_executable(looper_poll_bench ${CMAKE_CURRENT_LIST_DIR}/looper_poll_bench.cc ${CMAKE_CURRENT_LIST_DIR}/cold_caches.cc)
  target_link_libraries(looper_poll_bench PRIVATE jp_looper jp_hook jp_plt benchmark::benchmark Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(looper_poll_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(looper_poll_bench PRIVATE JP_LIBUTILS_PATH="$<TARGET_FILE:jp_libutils>")
  add_dependencies(looper_poll_bench jp_libutils)
  set_target_properties(looper_poll_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(looper_poll_bench)
endif()
