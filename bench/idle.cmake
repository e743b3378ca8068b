# The idle monitor's cost per queueIdle() call: a trivial handler called directly vs through jankprobe's
# TimingIdleHandlerList wrapper with the monitor on. Runs a real JVM in-process (the JVM test harness).
include(${PROJECT_SOURCE_DIR}/tests/jvm/jvm_harness.cmake)
if(TARGET jp_jvm_harness)
  add_executable(idle_bench ${CMAKE_CURRENT_LIST_DIR}/idle_bench.cc)
  target_link_libraries(idle_bench PRIVATE jp_jvm_harness benchmark::benchmark Threads::Threads)
  target_include_directories(idle_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(idle_bench PRIVATE
      JP_JVM_CHECK_JNI=0
      JP_JVM_SYSTEM_CP="$<TARGET_PROPERTY:jp_android_standins,JAR_FILE>"
      JP_JVM_JANKPROBE_JAR="$<TARGET_PROPERTY:jankprobe_java,JAR_FILE>"
      JP_JVM_APP_JAR="$<TARGET_PROPERTY:jp_test_app,JAR_FILE>"
      JP_LIBJANKPROBE="$<TARGET_FILE:jankprobe>")
  add_dependencies(idle_bench jp_android_standins jankprobe_java jp_test_app jankprobe)
  set_target_properties(idle_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(idle_bench)
endif()
