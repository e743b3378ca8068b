# After hook.cmake (fragments are included in sorted order): it uses that file's fixture paths and env.
# The dlopen monitor's modes (plt/dl_monitor_mode.h). Each mode is chosen once per process, so the loader
# mode and the off mode get a test binary each; they link the static engine for its test seam
# (plt::UseLoaderEntriesForTest, not exported from libjankprobe.so).
foreach(suite dl_monitor_loader dl_monitor_off)
  jp_add_gtest(${suite}_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/${suite}_test.cc ${CMAKE_CURRENT_LIST_DIR}/hook_test_support.cc
    LIBS jp_plt jp_fake_app jp_fake_libdl jp_fake_linker jp_hook_loader jp_hook_full jp_hook_target ${jp_hook_env})
  target_compile_definitions(${suite}_test PRIVATE ${jp_hook_fixture_paths})
  add_dependencies(${suite}_test jp_hook_pending_a jp_hook_pending_b jp_hook_pending_c)
endforeach()
jp_add_gtest(dl_monitor_mode_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/dl_monitor_mode_test.cc LIBS jp_plt)
