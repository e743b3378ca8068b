# The host's cost of a line first touched after a sleep (what every in-situ figure of the demo is made of).
add_executable(host_wake_bench ${CMAKE_CURRENT_LIST_DIR}/host_wake_bench.cc)
target_link_libraries(host_wake_bench PRIVATE benchmark::benchmark)
set_target_properties(host_wake_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
jp_strict_warnings(host_wake_bench)
