# The libelf and capstone halves of jankprobe-elf as static libraries, so the tool and the tests
# (tests/plt/differential.cmake) use one implementation. Included from both; the guard keeps it single.
include_guard(GLOBAL)

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(JP_LIBELF QUIET IMPORTED_TARGET GLOBAL libelf)
  pkg_check_modules(JP_CAPSTONE QUIET IMPORTED_TARGET GLOBAL capstone)
endif()
# Without pkg-config metadata, fall back to the plain library and header.
if(NOT JP_LIBELF_FOUND)
  find_library(JP_LIBELF_LIBRARY elf)
  find_path(JP_LIBELF_INCLUDE gelf.h)
  if(JP_LIBELF_LIBRARY AND JP_LIBELF_INCLUDE)
    add_library(jp_libelf_fallback INTERFACE)
    target_link_libraries(jp_libelf_fallback INTERFACE ${JP_LIBELF_LIBRARY})
    target_include_directories(jp_libelf_fallback INTERFACE ${JP_LIBELF_INCLUDE})
    add_library(PkgConfig::JP_LIBELF ALIAS jp_libelf_fallback)
    set(JP_LIBELF_FOUND TRUE)
  endif()
endif()
if(NOT JP_CAPSTONE_FOUND)
  find_library(JP_CAPSTONE_LIBRARY capstone)
  find_path(JP_CAPSTONE_INCLUDE capstone/capstone.h)
  if(JP_CAPSTONE_LIBRARY AND JP_CAPSTONE_INCLUDE)
    add_library(jp_capstone_fallback INTERFACE)
    target_link_libraries(jp_capstone_fallback INTERFACE ${JP_CAPSTONE_LIBRARY})
    target_include_directories(jp_capstone_fallback INTERFACE ${JP_CAPSTONE_INCLUDE})
    add_library(PkgConfig::JP_CAPSTONE ALIAS jp_capstone_fallback)
    set(JP_CAPSTONE_FOUND TRUE)
  endif()
endif()

set(_jp_elf_dir ${PROJECT_SOURCE_DIR}/tools/jankprobe_elf)

# libelf slot list, APS2 decoding and the engine comparison.
if(JP_LIBELF_FOUND AND TARGET jp_plt)
  add_library(jp_elf_libelf STATIC
    ${_jp_elf_dir}/aps2_decoder.cc
    ${_jp_elf_dir}/check.cc
    ${_jp_elf_dir}/libelf_slots.cc
    ${_jp_elf_dir}/mapped_file.cc)
  target_include_directories(jp_elf_libelf PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(jp_elf_libelf PUBLIC jp_plt PkgConfig::JP_LIBELF)
  jp_strict_warnings(jp_elf_libelf)
endif()

# Capstone stub decoding and the tool's report (table and JSON).
if(JP_CAPSTONE_FOUND AND TARGET jp_elf_libelf)
  add_library(jp_elf_inspect STATIC
    ${_jp_elf_dir}/inspection.cc
    ${_jp_elf_dir}/json_output.cc
    ${_jp_elf_dir}/plt_stub_decoder.cc)
  target_link_libraries(jp_elf_inspect PUBLIC jp_elf_libelf PkgConfig::JP_CAPSTONE)
  jp_strict_warnings(jp_elf_inspect)
  if(JP_SANITIZE)
    # RapidJSON 1.1.0's internal::Stack computes `nullptr + n` before its first allocation, which
    # UBSan's pointer-overflow check reports (fixed upstream after 1.1.0). Only that check, only here.
    set_source_files_properties(${_jp_elf_dir}/json_output.cc PROPERTIES COMPILE_OPTIONS -fno-sanitize=pointer-overflow)
  endif()
endif()
