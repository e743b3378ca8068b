# Round trip on an InputChannel socketpair with and without the input monitor's proxies.
if(TARGET jp_libinput)
  add_executable(input_bench ${CMAKE_CURRENT_LIST_DIR}/input_bench.cc)
  target_link_libraries(input_bench PRIVATE jp_input jp_hook jp_plt jp_libinput benchmark::benchmark Threads::Threads)
  target_include_directories(input_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  set_target_properties(input_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(input_bench)
endif()
