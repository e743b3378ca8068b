# The watchdog's sweep of the rare text (hook/text_release.h SweepRareText, from the loop's give-back
# point in hook/jni/java_stack_release.h), against the real libjankprobe.so in a forked child.
if(NOT CMAKE_CROSSCOMPILING AND NOT JP_ENGINE_ONLY)
  # Linked with the host libinput.so fixture: the input monitor keeps the watchdog's loop running.
  jp_add_gtest(text_release_sweep_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/text_release_sweep_test.cc
               LIBS jp_hook jp_libinput)
  target_compile_definitions(text_release_sweep_test PRIVATE JP_LIBRARY_PATH="$<TARGET_FILE:jankprobe>"
                             JP_SANITIZED=$<BOOL:${JP_SANITIZE}>)
  add_dependencies(text_release_sweep_test jankprobe)
endif()
