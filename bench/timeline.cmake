# Timeline append/read cost and resident memory; watchdog arm/disarm cost.
add_executable(timeline_bench ${CMAKE_CURRENT_LIST_DIR}/timeline_bench.cc)
target_link_libraries(timeline_bench PRIVATE jp_hook benchmark::benchmark Threads::Threads)
target_include_directories(timeline_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
set_target_properties(timeline_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
jp_strict_warnings(timeline_bench)
