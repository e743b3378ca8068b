# The idle monitor's cost per queueIdle() call: a trivial handler called directly vs through jankprobe's
# TimingIdleHandlerList wrapper with the monitor on. Runs a real JVM in-process (the JVM test harness).
include(${PROJECT_SOURCE_DIR}/tests/jvm/jvm_harness.cmake)
if(TARGET jp_jvm_harness)
  jp_add_jvm_bench(idle_bench ${CMAKE_CURRENT_LIST_DIR}/idle_bench.cc)  # jankprobe-hotspot.jar
  # The same on the portable jankprobe.jar (its GapWord reads the direct buffer's view, as on ART).
  jp_add_jvm_bench(idle_buffer_bench ${CMAKE_CURRENT_LIST_DIR}/idle_bench.cc JANKPROBE_JAR jankprobe_java)
endif()
