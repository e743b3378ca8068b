# The previous targets cached per call site (plt/prev_cache.h), which the input proxies and the looper's
# poll source use. Engine code: built and run for every ABI (the cross runs under qemu too). qemu-i386 hangs
# in pthread_create, so there the racing test skips itself (JP_TEST_NO_THREADS, as the hook suites do).
# jp_hook_full: a real hook for the engine's answers (jp_target_add, tests/fixtures/hook_fixtures.cmake).
set(jp_prev_cache_env)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^i[3-6]86$")
  set(jp_prev_cache_env ENV JP_TEST_NO_THREADS=1)
endif()
jp_add_gtest(prev_cache_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/prev_cache_test.cc LIBS jp_plt jp_hook_full TIMEOUT 60
             ${jp_prev_cache_env})
