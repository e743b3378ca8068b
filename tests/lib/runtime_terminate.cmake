# The statically linked C++ runtime without its demangler: lib/lib_anchor.cc's own terminate handler.
find_library(JP_LIBELF elf)
if(JP_LIBELF AND NOT CMAKE_CROSSCOMPILING)
  # lib_anchor.cc compiled in as well, to run its handler in a death test.
  jp_add_gtest(runtime_terminate_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/runtime_terminate_test.cc
               ${PROJECT_SOURCE_DIR}/lib/lib_anchor.cc LIBS ${JP_LIBELF})
  target_compile_definitions(runtime_terminate_test PRIVATE JP_LIBRARY_PATH="$<TARGET_FILE:jankprobe>")
  add_dependencies(runtime_terminate_test jankprobe)
endif()
