# jankprobe-elf: the host ELF inspector (libelf + capstone), checked against the engine's parser.
# tools/ is only added for host builds, so this never cross-compiles.
include(${PROJECT_SOURCE_DIR}/tools/jankprobe_elf/library.cmake)
if(TARGET jp_elf_inspect)
  add_executable(jankprobe-elf ${PROJECT_SOURCE_DIR}/tools/jankprobe_elf/main.cc)
  target_link_libraries(jankprobe-elf PRIVATE jp_elf_inspect)
  set_target_properties(jankprobe-elf PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
  jp_strict_warnings(jankprobe-elf)
else()
  message(WARNING "jankprobe-elf not built: needs libelf (libelf-dev) and capstone (libcapstone-dev)")
endif()
