# The demo app's overhead: jankprobe off vs on, each run a jankprobe-demo --bench process (tools/demo.cmake).
if(TARGET jankprobe-demo)
  add_executable(demo_bench ${CMAKE_CURRENT_LIST_DIR}/demo_bench.cc)
  target_link_libraries(demo_bench PRIVATE benchmark::benchmark)
  target_compile_definitions(demo_bench PRIVATE JP_DEMO_LAUNCHER="$<TARGET_FILE:jankprobe-demo>")
  add_dependencies(demo_bench jankprobe-demo)
  set_target_properties(demo_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(demo_bench)
endif()
