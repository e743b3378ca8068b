# The looper monitor's cost on the main thread: Looper's two log lines per message through jankprobe's
# LooperPrinter vs through a do-nothing Printer (the stand-in's own cost), and whole dispatches with the
# monitor off, on the printer source and on the poll source. Runs a real JVM in-process (the JVM test
# harness), so it needs the JDK.
include(${PROJECT_SOURCE_DIR}/tests/jvm/jvm_harness.cmake)
if(TARGET jp_jvm_harness)
  add_executable(looper_bench ${CMAKE_CURRENT_LIST_DIR}/looper_bench.cc)
  target_link_libraries(looper_bench PRIVATE jp_jvm_harness benchmark::benchmark Threads::Threads)
  target_include_directories(looper_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(looper_bench PRIVATE
      JP_JVM_CHECK_JNI=0
      JP_JVM_SYSTEM_CP="$<TARGET_PROPERTY:jp_android_standins,JAR_FILE>"
      JP_JVM_JANKPROBE_JAR="$<TARGET_PROPERTY:jankprobe_java,JAR_FILE>"
      JP_JVM_APP_JAR="$<TARGET_PROPERTY:jp_test_app,JAR_FILE>"
      JP_LIBJANKPROBE="$<TARGET_FILE:jankprobe>"
      JP_JVM_LIBRARY_PATH="${CMAKE_BINARY_DIR}/tests/fixtures/libutils")
  # The stand-in MessageQueue waits in the libutils.so fixture: the poll source's ground.
  add_dependencies(looper_bench jp_android_standins jankprobe_java jp_test_app jankprobe jp_libutils)
  set_target_properties(looper_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(looper_bench)
endif()

# The poll source per gap, natively: the libutils.so fixture's pollOnce(0) unhooked / hooked on another
# thread / hooked on the main thread, with the real timeline, watchdog and looper timing (no JVM).
if(TARGET jp_libutils)
  add_executable(looper_poll_bench ${CMAKE_CURRENT_LIST_DIR}/looper_poll_bench.cc)
  target_link_libraries(looper_poll_bench PRIVATE jp_looper jp_hook jp_plt benchmark::benchmark Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(looper_poll_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(looper_poll_bench PRIVATE JP_LIBUTILS_PATH="$<TARGET_FILE:jp_libutils>")
  add_dependencies(looper_poll_bench jp_libutils)
  set_target_properties(looper_poll_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(looper_poll_bench)
endif()
