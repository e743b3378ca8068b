# jankprobe-footprint: resident memory of loading and starting libjankprobe.so, per step and per monitor,
# each scenario in a fresh process. Links the host libinput.so fixture so the input monitor has a target.
# jp_libinput is defined later (tests/ is added after tools/); target names resolve at generate time.
if(JP_BUILD_TESTS)
  add_executable(jankprobe-footprint ${PROJECT_SOURCE_DIR}/tools/footprint/footprint.cc)
  target_include_directories(jankprobe-footprint PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(jankprobe-footprint PRIVATE jp_libinput ${CMAKE_DL_LIBS})
  target_compile_definitions(jankprobe-footprint PRIVATE JP_FOOTPRINT_SO="$<TARGET_FILE:jankprobe>")
  add_dependencies(jankprobe-footprint jankprobe)
  set_target_properties(jankprobe-footprint PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
  jp_strict_warnings(jankprobe-footprint)
endif()

# Regenerates lib/startup_order.ld from this build: valgrind's callgrind over jankprobe-footprint for the host
# phases, and (as root, with tracefs) kernel uprobes over the demo app on the JVM for the JNI, monitor and
# report paths (tools/footprint/uprobe_trace.py), each trace split at the text release that ends start,
# configure and stop (what runs after it goes in the steady-state or rare section; what runs in both of two
# runs of each benchmark variant outside the app's calls, in the first text window); ~3 min, on a quiet host. Run it after changes to what runs at load, at start
# or in a monitor: `cmake --build <dir> --target jankprobe-startup-order`, then rebuild.
find_program(JP_VALGRIND valgrind)
find_package(Python3 COMPONENTS Interpreter)
if(JP_BUILD_TESTS AND JP_VALGRIND AND Python3_Interpreter_FOUND)
  add_custom_target(jankprobe-startup-order
    COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/footprint/startup_order.py ${CMAKE_BINARY_DIR}
            ${PROJECT_SOURCE_DIR}/lib/startup_order.ld
    DEPENDS jankprobe-footprint jankprobe
    COMMENT "lib/startup_order.ld from callgrind runs of jankprobe-footprint and uprobe traces of the demo app"
    VERBATIM)
  # jankprobe-demo is defined in tools/demo.cmake (only with a JDK); the JVM phases are skipped without it.
  if(TARGET jankprobe-demo)
    add_dependencies(jankprobe-startup-order jankprobe-demo)
  endif()
endif()
