include(${CMAKE_CURRENT_LIST_DIR}/jvm_harness.cmake)
jp_add_jvm_test(jvm_renamed_fields_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/renamed_fields_test.cc
                STANDINS jp_android_standins_renamed)
