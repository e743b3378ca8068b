include(${CMAKE_CURRENT_LIST_DIR}/../jvm/jvm_harness.cmake)
jp_add_jvm_test(barrier_jvm_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/barrier_jvm_test.cc STANDINS jp_android_standins)
jp_add_jvm_test(barrier_lockfree_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/barrier_lockfree_test.cc
                STANDINS jp_android_standins_lockfree)

# Android 16's MessageQueue says which implementation a queue uses in `final boolean mUseConcurrent`. Two
# variants of the stand-in carry that flag over the ordinary list, so that only the flag can decide: true
# must be refused (with its reason) although mMessages would read fine, false must be watched as a list.
if(COMMAND jp_standin_variant)
  string(REPLACE "/*@VARIANT_FIELDS@*/" "private final boolean mUseConcurrent = true;  // the flag alone says concurrent"
         jp_flag_concurrent "${jp_message_queue}")
  jp_standin_variant(flag_concurrent "${jp_flag_concurrent}")
  string(REPLACE "/*@VARIANT_FIELDS@*/" "private final boolean mUseConcurrent = false;  // Android 16's legacy list"
         jp_flag_legacy "${jp_message_queue}")
  jp_standin_variant(flag_legacy "${jp_flag_legacy}")
  jp_add_jvm_test(barrier_queue_flag_concurrent_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/barrier_queue_flag_test.cc
                  STANDINS jp_android_standins_flag_concurrent)
  target_compile_definitions(barrier_queue_flag_concurrent_test PRIVATE JP_QUEUE_FLAG_CONCURRENT=1)
  jp_add_jvm_test(barrier_queue_flag_legacy_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/barrier_queue_flag_test.cc
                  STANDINS jp_android_standins_flag_legacy)
  target_compile_definitions(barrier_queue_flag_legacy_test PRIVATE JP_QUEUE_FLAG_CONCURRENT=0)
endif()
