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
  add_executable(looper_poll_bench ${CMAKE_CURRENT_LIST_DIR}/looper_poll_bench.cc)
  target_link_libraries(looper_poll_bench PRIVATE jp_looper jp_hook jp_plt benchmark::benchmark Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(looper_poll_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(looper_poll_bench PRIVATE JP_LIBUTILS_PATH="$<TARGET_FILE:jp_libutils>")
  add_dependencies(looper_poll_bench jp_libutils)
  set_target_properties(looper_poll_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(looper_poll_bench)
endif()

# A cold wake's cost with our code and data where an app has them: the poll source inside a twin of the
# shipped library (linked the same way, cmake/shipped_link.cmake, plus bench/library_twin.cc's entry
# points), driven from an executable that holds none of our code.
if(TARGET jp_libutils AND TARGET jp_looper)
  add_library(jankprobe_twin SHARED ${PROJECT_SOURCE_DIR}/lib/lib_anchor.cc ${PROJECT_SOURCE_DIR}/lib/monitors.cc
              ${CMAKE_CURRENT_LIST_DIR}/library_twin.cc)
  target_include_directories(jankprobe_twin PRIVATE ${PROJECT_SOURCE_DIR}
                             $<TARGET_PROPERTY:jp_hook,INTERFACE_INCLUDE_DIRECTORIES>)
  jp_link_as_shipped(jankprobe_twin ${CMAKE_CURRENT_LIST_DIR}/library_twin.map)
  # A second, identical copy, loaded beside the first: what the two differ by is a run's resolution.
  add_library(jankprobe_twin_b SHARED ${PROJECT_SOURCE_DIR}/lib/lib_anchor.cc ${PROJECT_SOURCE_DIR}/lib/monitors.cc
              ${CMAKE_CURRENT_LIST_DIR}/library_twin.cc)
  target_include_directories(jankprobe_twin_b PRIVATE ${PROJECT_SOURCE_DIR}
                             $<TARGET_PROPERTY:jp_hook,INTERFACE_INCLUDE_DIRECTORIES>)
  jp_link_as_shipped(jankprobe_twin_b ${CMAKE_CURRENT_LIST_DIR}/library_twin.map)
  add_library(jp_floor_hook SHARED ${CMAKE_CURRENT_LIST_DIR}/floor_hook.cc)
  add_executable(looper_wake_bench ${CMAKE_CURRENT_LIST_DIR}/looper_wake_bench.cc ${CMAKE_CURRENT_LIST_DIR}/cold_caches.cc)
  target_link_libraries(looper_wake_bench PRIVATE benchmark::benchmark Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(looper_wake_bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(looper_wake_bench PRIVATE JP_LIBUTILS_PATH="$<TARGET_FILE:jp_libutils>"
                             JP_TWIN_PATH="$<TARGET_FILE:jankprobe_twin>" JP_TWIN_B_PATH="$<TARGET_FILE:jankprobe_twin_b>" JP_FLOOR_PATH="$<TARGET_FILE:jp_floor_hook>")
  add_dependencies(looper_wake_bench jp_libutils jankprobe_twin jankprobe_twin_b jp_floor_hook)
  set_target_properties(looper_wake_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(looper_wake_bench)
endif()
