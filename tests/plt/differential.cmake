# Host-only checks of the engine's ELF parser against libelf (tools/jankprobe_elf), the tool's PLT stub
# decoding (capstone) and its command line. Needs libelf; skipped when cross-compiling (engine-only
# cross builds include this fragment too).
if(NOT CMAKE_CROSSCOMPILING)
  include(${PROJECT_SOURCE_DIR}/tools/jankprobe_elf/library.cmake)
endif()

if(TARGET jp_elf_libelf)
  # Fixture libraries with known imports: plain (default linker) and APS2-packed (lld).
  add_library(jp_elf_tool_fixture SHARED ${CMAKE_CURRENT_LIST_DIR}/elf_tool_fixture.c)
  set_target_properties(jp_elf_tool_fixture PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/elf_tool)
  find_program(JP_LD_LLD ld.lld)
  set(_jp_packed_defs)
  if(JP_LD_LLD)
    foreach(variant IN ITEMS unpacked packed)
      add_library(jp_elf_tool_fixture_lld_${variant} SHARED ${CMAKE_CURRENT_LIST_DIR}/elf_tool_fixture.c)
      set_target_properties(jp_elf_tool_fixture_lld_${variant} PROPERTIES
        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/elf_tool)
      target_link_options(jp_elf_tool_fixture_lld_${variant} PRIVATE -fuse-ld=lld)
    endforeach()
    target_link_options(jp_elf_tool_fixture_lld_packed PRIVATE -Wl,--pack-dyn-relocs=android)
    set(_jp_packed_defs
      JP_PACKED_FIXTURE="$<TARGET_FILE:jp_elf_tool_fixture_lld_packed>"
      JP_UNPACKED_FIXTURE="$<TARGET_FILE:jp_elf_tool_fixture_lld_unpacked>")
  endif()

  # The differential run over every library on the host (several hundred files, tens of thousands of
  # slots), plus the APS2 decoder.
  jp_add_gtest(differential_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/differential_test.cc
    LIBS jp_elf_libelf
    TIMEOUT 600)
  target_compile_definitions(differential_test PRIVATE ${_jp_packed_defs})
  add_dependencies(differential_test jp_elf_tool_fixture)
  if(JP_LD_LLD)
    add_dependencies(differential_test jp_elf_tool_fixture_lld_packed jp_elf_tool_fixture_lld_unpacked)
  endif()

  if(TARGET jp_elf_inspect)
    jp_add_gtest(plt_stub_decoder_test
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/plt_stub_decoder_test.cc
      LIBS jp_elf_inspect)
    target_compile_definitions(plt_stub_decoder_test PRIVATE
      JP_PLAIN_FIXTURE="$<TARGET_FILE:jp_elf_tool_fixture>")
    add_dependencies(plt_stub_decoder_test jp_elf_tool_fixture)
  endif()

  if(TARGET jankprobe-elf)
    jp_add_gtest(jankprobe_elf_tool_test
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/jankprobe_elf_tool_test.cc
      LIBS jp_elf_libelf)
    target_compile_definitions(jankprobe_elf_tool_test PRIVATE
      JP_ELF_TOOL="$<TARGET_FILE:jankprobe-elf>"
      JP_PLAIN_FIXTURE="$<TARGET_FILE:jp_elf_tool_fixture>"
      ${_jp_packed_defs})
    add_dependencies(jankprobe_elf_tool_test jankprobe-elf jp_elf_tool_fixture)
    if(JP_SANITIZE)
      # RapidJSON 1.1.0 Document parsing trips UBSan's pointer-overflow (see tools/jankprobe_elf/library.cmake).
      target_compile_options(jankprobe_elf_tool_test PRIVATE -fno-sanitize=pointer-overflow)
    endif()
    # The engine's own fixture libraries (tests/fixtures/plt_fixtures.cmake): lazy/relro/noplt layouts,
    # versioned, SysV hash, lld APS2, foreign ABIs. --check must pass on every one of them.
    if(TARGET jp_plt_fixtures AND DEFINED JP_PLT_FIXTURE_DIR)
      target_compile_definitions(jankprobe_elf_tool_test PRIVATE JP_PLT_FIXTURE_DIR="${JP_PLT_FIXTURE_DIR}")
      add_dependencies(jankprobe_elf_tool_test jp_plt_fixtures)
    endif()
    if(JP_LD_LLD)
      add_dependencies(jankprobe_elf_tool_test jp_elf_tool_fixture_lld_packed)
    endif()
  endif()
endif()
