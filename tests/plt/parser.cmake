# ELF parser suites (plt/elf_image.cc and the per-table parsers it is built from). They run in every
# build, including the cross-ABI engine-only ones under qemu.
set(_jp_parser_tests ${CMAKE_CURRENT_LIST_DIR})
add_library(jp_plt_parser_test_util STATIC ${_jp_parser_tests}/parser_test_util.cc)
target_include_directories(jp_plt_parser_test_util PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_definitions(jp_plt_parser_test_util PRIVATE JP_PLT_FIXTURE_DIR="${JP_PLT_FIXTURE_DIR}")
target_link_libraries(jp_plt_parser_test_util PUBLIC ${CMAKE_DL_LIBS})
jp_strict_warnings(jp_plt_parser_test_util)

set(_jp_parser_defs JP_PLT_FIXTURE_DIR="${JP_PLT_FIXTURE_DIR}")
if(JP_CAN_LINK_APS2)
  list(APPEND _jp_parser_defs JP_HAVE_LLD_FIXTURES=1)
endif()
if(JP_PLT_FOREIGN_ABIS)
  list(APPEND _jp_parser_defs JP_HAVE_FOREIGN_FIXTURES=1)
endif()

foreach(suite IN ITEMS sleb128 aps2_decoder segment_map dynamic_section reloc_types elf_image elf_image_malformed elf_image_packed)
  jp_add_gtest(${suite}_test SOURCES ${_jp_parser_tests}/${suite}_test.cc LIBS jp_plt jp_plt_parser_test_util TIMEOUT 120)
  target_compile_definitions(${suite}_test PRIVATE ${_jp_parser_defs})
  add_dependencies(${suite}_test jp_plt_fixtures)
endforeach()
