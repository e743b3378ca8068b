include(${CMAKE_CURRENT_LIST_DIR}/jvm_harness.cmake)
# jankprobe.jar without com.jankprobe.LooperPrinter (an app whose shrinker dropped it): the printer source
# must say so, the poll source must not need it.
if(TARGET jp_test_app)
  file(GLOB jp_jankprobe_no_printer_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/java/src/com/jankprobe/*.java)
  list(FILTER jp_jankprobe_no_printer_sources EXCLUDE REGEX "/LooperPrinter\\.java$")
  add_jar(jp_jankprobe_no_printer SOURCES ${jp_jankprobe_no_printer_sources} INCLUDE_JARS jp_android_standins
          OUTPUT_NAME jankprobe-no-printer OUTPUT_DIR ${CMAKE_BINARY_DIR}/tests/jvm)
  jp_add_jvm_test(jvm_missing_printer_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/missing_printer_test.cc
                  STANDINS jp_android_standins JANKPROBE_JAR jp_jankprobe_no_printer)
endif()
