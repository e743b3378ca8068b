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
