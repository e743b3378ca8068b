# plt/raw_wait.h (the epoll_pwait syscall by inline asm, which the looper's poll source makes for the main
# thread's blocking wait): an engine fragment, so the cross-ABI builds run it under qemu for each asm variant.
# qemu-i386 hangs in pthread_create: there the signal comes from the interval timer (JP_TEST_NO_THREADS).
set(jp_raw_wait_env)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^i[3-6]86$")
  set(jp_raw_wait_env ENV JP_TEST_NO_THREADS=1)
endif()
jp_add_gtest(raw_wait_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/raw_wait_test.cc TIMEOUT 60 ${jp_raw_wait_env})
