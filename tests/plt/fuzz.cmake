# libFuzzer over ELF file images: the engine's parser (every source of jp_plt, compiled into the fuzzer
# with coverage instrumentation, so jp_plt itself and the other targets keep their normal flags).
# `./run test` (scripts/run.sh, fuzz) builds this with -DJP_FUZZ=ON and clang and runs every
# ${CMAKE_BINARY_DIR}/fuzz/*_fuzzer seeded with the .so files under tests/fixtures/.
if(JP_FUZZ AND NOT CMAKE_CROSSCOMPILING)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(WARNING "JP_FUZZ=ON needs clang (libFuzzer); ${CMAKE_CXX_COMPILER_ID} found, no fuzz targets")
  else()
    get_target_property(_jp_fuzz_plt_sources jp_plt SOURCES)
    add_executable(elf_image_fuzzer ${CMAKE_CURRENT_LIST_DIR}/elf_image_fuzzer.cc ${_jp_fuzz_plt_sources})
    target_include_directories(elf_image_fuzzer PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
    target_compile_options(elf_image_fuzzer PRIVATE
      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(elf_image_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(elf_image_fuzzer PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
    set_target_properties(elf_image_fuzzer PROPERTIES
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    jp_strict_warnings(elf_image_fuzzer)

    # Extra seeds beside the fixture libraries: small glibc-built libraries of the four ABIs (REL and
    # RELA, ELF32 and ELF64, real .gnu.version_r), renamed *.so so the run script's glob picks them up.
    set(_jp_seed_dir ${CMAKE_BINARY_DIR}/tests/fixtures/fuzz_seeds)
    file(MAKE_DIRECTORY ${_jp_seed_dir})
    foreach(pair IN ITEMS "x86_64:/usr/lib/x86_64-linux-gnu" "aarch64:/usr/aarch64-linux-gnu/lib"
                          "armhf:/usr/arm-linux-gnueabihf/lib" "i686:/usr/i686-linux-gnu/lib")
      string(REPLACE ":" ";" parts ${pair})
      list(GET parts 0 abi)
      list(GET parts 1 dir)
      foreach(lib IN ITEMS libdl.so.2 libutil.so.1)
        if(EXISTS ${dir}/${lib})
          string(REPLACE ".so." "-" stem ${lib})
          file(COPY_FILE ${dir}/${lib} ${_jp_seed_dir}/seed-${abi}-${stem}.so ONLY_IF_DIFFERENT)
        endif()
      endforeach()
    endforeach()
  endif()
endif()
