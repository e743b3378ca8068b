# Run-time tests of the PLT hook engine. The end-to-end suites link the shipped libjankprobe.so, so that
# "every module except jankprobe's own" means what it means in an app; the unit suites for module
# matching and slot writes link the static engine directly.
set(jp_hook_fixture_paths
  JP_HOOK_FULL_PATH="$<TARGET_FILE:jp_hook_full>"
  JP_HOOK_PENDING_A_PATH="$<TARGET_FILE:jp_hook_pending_a>"
  JP_HOOK_PENDING_B_PATH="$<TARGET_FILE:jp_hook_pending_b>"
  JP_HOOK_PENDING_C_PATH="$<TARGET_FILE:jp_hook_pending_c>"
  JP_HOOK_PENDING_D_PATH="$<TARGET_FILE:jp_hook_pending_d>")
set(jp_hook_callers jp_hook_target jp_hook_lazy jp_hook_partial jp_hook_full jp_hook_noplt jp_hook_data jp_hook_loader)

# qemu-i386 7.2 (Debian 12) never returns from pthread_create in an i386 guest (even a 5-line C program),
# so the suites' threaded tests skip themselves there, saying why; every other ABI runs them.
set(jp_hook_env)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^i[3-6]86$")
  set(jp_hook_env ENV JP_TEST_NO_THREADS=1)
endif()

foreach(suite plt_api hook_registry dl_monitor hook_stress)
  jp_add_gtest(${suite}_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/${suite}_test.cc ${CMAKE_CURRENT_LIST_DIR}/hook_test_support.cc
    LIBS jankprobe ${jp_hook_callers} ${jp_hook_env})
  target_compile_definitions(${suite}_test PRIVATE ${jp_hook_fixture_paths})
  # Loaded with dlopen only; built before the test runs.
  add_dependencies(${suite}_test jp_hook_pending_a jp_hook_pending_b jp_hook_pending_c jp_hook_pending_d)
endforeach()

foreach(suite module_list got_patcher)
  jp_add_gtest(${suite}_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/${suite}_test.cc LIBS jp_plt ${jp_hook_callers})
  target_compile_definitions(${suite}_test PRIVATE ${jp_hook_fixture_paths})
endforeach()
