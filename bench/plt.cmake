# PLT hook engine: per-call cost of a hooked call vs the plain call, install and remove times.
# Needs the hook fixtures (tests/fixtures/hook_fixtures.cmake), built when JP_BUILD_TESTS is ON.
if(TARGET jp_hook_full)
  add_executable(plt_bench ${CMAKE_CURRENT_LIST_DIR}/plt_bench.cc)
  target_include_directories(plt_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(plt_bench PRIVATE jankprobe jp_hook_target jp_hook_full jp_hook_lazy jp_hook_partial
                        jp_hook_noplt jp_hook_data benchmark::benchmark Threads::Threads)
  set_target_properties(plt_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(plt_bench)
endif()
