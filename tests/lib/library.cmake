# What libjankprobe.so asks of the app's process: its dependencies and its exported symbols.
find_library(JP_LIBELF elf)
if(JP_LIBELF AND NOT CMAKE_CROSSCOMPILING)
  jp_add_gtest(library_surface_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/library_surface_test.cc LIBS ${JP_LIBELF})
  target_compile_definitions(library_surface_test PRIVATE JP_LIBRARY_PATH="$<TARGET_FILE:jankprobe>"
                             JP_SHIPPED_PATH="$<TARGET_FILE_DIR:jankprobe>/ship/libjankprobe.so"
                             JP_SANITIZED=$<BOOL:${JP_SANITIZE}>)
  add_dependencies(library_surface_test jankprobe)
endif()

# Resident memory of loading and starting the library, in a forked child (no libelf needed).
if(NOT CMAKE_CROSSCOMPILING)
  jp_add_gtest(library_footprint_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/footprint_test.cc)
  target_compile_definitions(library_footprint_test PRIVATE JP_LIBRARY_PATH="$<TARGET_FILE:jankprobe>"
                             JP_SANITIZED=$<BOOL:${JP_SANITIZE}>)
  add_dependencies(library_footprint_test jankprobe)
endif()

# The start-only text given back after start and configure (hook/text_release.h): the range's layout in
# the file, no page of it resident afterwards, nothing outside it dropped, the library still working.
if(NOT CMAKE_CROSSCOMPILING AND NOT JP_ENGINE_ONLY)
  # Linked with the host libinput.so fixture: the input monitor (and so the watchdog) can run.
  # libelf: the wake path's functions from the file's symbol table (the Release layout check).
  find_library(JP_LIBELF elf)
  jp_add_gtest(text_release_library_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/text_release_library_test.cc
               LIBS jp_libinput ${JP_LIBELF})
  # JP_RELEASE_BUILD: the layout checks that hold for the build lib/startup_order.ld is generated from.
  target_compile_definitions(text_release_library_test PRIVATE JP_LIBRARY_PATH="$<TARGET_FILE:jankprobe>"
                             JP_SANITIZED=$<BOOL:${JP_SANITIZE}> JP_RELEASE_BUILD=$<CONFIG:Release>)
  add_dependencies(text_release_library_test jankprobe)
endif()
