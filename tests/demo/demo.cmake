# The demo is also a test: jankprobe-demo --check plays the fault script and fails unless every fault was
# reported once with the right culprit and nothing else was (tools/demo/launcher/report_book.cc).
# The run takes ~17 s (the 6 s stuck message dominates); the launcher gives up by itself after 90 s.
if(TARGET jankprobe-demo)
  add_test(NAME demo_check COMMAND jankprobe-demo --check --out ${CMAKE_BINARY_DIR}/tests/demo/out --timeout 90)
  # Same JVM-under-ASan options as the JVM tests (tests/jvm/jvm_harness.cmake): the JVM handles its own SIGSEGVs.
  set_tests_properties(demo_check PROPERTIES TIMEOUT 120 RUN_SERIAL ON
      ENVIRONMENT "ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:abort_on_error=1")
endif()
