# The real-JVM harness shared by the JNI monitors' tests (idle/, barrier/, later looper/ and the demo):
# - jp_jvm_harness: a small library that starts OpenJDK with JNI_CreateJavaVM inside the test process;
# - jp_test_app: the test "app" classes (tests/java/app), compiled against the stand-ins and jankprobe.jar
#   (the portable jar, as an app is);
# - stand-in variants derived from tests/java/android/os/MessageQueue.java: "renamed" (mMessages and
#   mIdleHandlers under other names, as on a device whose fields differ) and "lockfree" (mMessages always
#   null, Android 17's queue);
# - jp_add_jvm_test(NAME SOURCES... STANDINS <jar target> [JANKPROBE_JAR <jar target>]): one test
#   executable = one JVM, which loads jankprobe-hotspot.jar (java/CMakeLists.txt: the host's HotSpot read of
#   the gap word) unless JANKPROBE_JAR names another (jankprobe_java, the portable jar apps get; a variant
#   missing a class);
# - jp_add_jvm_bench(NAME SOURCE [JANKPROBE_JAR <jar target>]): the same for a Google Benchmark.
# Every test fragment that uses it includes this file first (fragments load in path order).
include_guard(GLOBAL)
find_package(Java 17 COMPONENTS Development)
if(Java_FOUND)
  include(UseJava)
endif()
if(NOT Java_FOUND OR NOT TARGET jankprobe_java OR NOT TARGET jankprobe_hotspot_java OR NOT JAVA_JVM_LIBRARY)
  message(STATUS "jvm tests: no JDK (javac / libjvm) found, JVM tests are not built")
  function(jp_add_jvm_test)
  endfunction()
  return()
endif()

add_library(jp_jvm_harness STATIC ${CMAKE_CURRENT_LIST_DIR}/jvm_harness.cc)
target_include_directories(jp_jvm_harness PUBLIC ${PROJECT_SOURCE_DIR})
target_include_directories(jp_jvm_harness SYSTEM PUBLIC ${JAVA_INCLUDE_PATH} ${JAVA_INCLUDE_PATH2})
target_link_libraries(jp_jvm_harness PUBLIC ${JAVA_JVM_LIBRARY})
jp_strict_warnings(jp_jvm_harness)

file(GLOB_RECURSE jp_test_app_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/java/app/*.java)
add_jar(jp_test_app SOURCES ${jp_test_app_sources} INCLUDE_JARS jp_android_standins jankprobe_java
        OUTPUT_NAME test-app OUTPUT_DIR ${CMAKE_BINARY_DIR}/tests/jvm)

# Stand-in variants: every stand-in but MessageQueue as is, MessageQueue rewritten.
file(GLOB jp_standin_common CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/java/android/os/*.java
     ${PROJECT_SOURCE_DIR}/tests/java/android/util/*.java ${PROJECT_SOURCE_DIR}/tests/java/android/view/*.java)
list(FILTER jp_standin_common EXCLUDE REGEX "/MessageQueue\\.java$")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/java/android/os/MessageQueue.java)
file(READ ${PROJECT_SOURCE_DIR}/tests/java/android/os/MessageQueue.java jp_message_queue)
function(jp_standin_variant name text)
  set(dir ${CMAKE_BINARY_DIR}/tests/jvm/standins-${name})
  file(WRITE ${dir}/android/os/MessageQueue.java "${text}")
  add_jar(jp_android_standins_${name} SOURCES ${jp_standin_common} ${dir}/android/os/MessageQueue.java
          OUTPUT_NAME android-standins-${name} OUTPUT_DIR ${CMAKE_BINARY_DIR}/tests/jvm)
endfunction()
string(REPLACE "mIdleHandlers" "mIdleHandlerList" jp_renamed "${jp_message_queue}")
string(REPLACE "mMessages" "mMessageList" jp_renamed "${jp_renamed}")
jp_standin_variant(renamed "${jp_renamed}")
string(REPLACE "mMessages" "mDeliHead" jp_lockfree "${jp_message_queue}")
string(REPLACE "/*@VARIANT_FIELDS@*/" "Message mMessages;  // kept for reflection, always null (lock-free queue)"
       jp_lockfree "${jp_lockfree}")
jp_standin_variant(lockfree "${jp_lockfree}")

# Under ASan the JVM needs its own SIGSEGV handling (implicit null checks, safepoint polls) and leaks by
# design at exit; these options let it run (the test skips itself if the VM still cannot start).
set(jp_jvm_test_env "ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:abort_on_error=1")

function(jp_add_jvm_test name)
  cmake_parse_arguments(ARG "" "STANDINS;JANKPROBE_JAR" "SOURCES" ${ARGN})
  if(NOT ARG_JANKPROBE_JAR)
    set(ARG_JANKPROBE_JAR jankprobe_hotspot_java)
  endif()
  jp_add_gtest(${name} SOURCES ${ARG_SOURCES} LIBS jp_jvm_harness TIMEOUT 120 ENV "${jp_jvm_test_env}")
  target_include_directories(${name} SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIR})
  target_compile_definitions(${name} PRIVATE
      JP_JVM_SYSTEM_CP="$<TARGET_PROPERTY:${ARG_STANDINS},JAR_FILE>"
      JP_JVM_JANKPROBE_JAR="$<TARGET_PROPERTY:${ARG_JANKPROBE_JAR},JAR_FILE>"
      JP_JVM_APP_JAR="$<TARGET_PROPERTY:jp_test_app,JAR_FILE>"
      JP_LIBJANKPROBE="$<TARGET_FILE:jankprobe>"
      JP_JVM_LIBRARY_PATH="${CMAKE_BINARY_DIR}/tests/fixtures/libutils")
  # The stand-in MessageQueue waits in the libutils.so fixture (tests/fixtures/libutils.cmake).
  add_dependencies(${name} ${ARG_STANDINS} ${ARG_JANKPROBE_JAR} jp_test_app jankprobe jp_libutils)
endfunction()

# A Google Benchmark that runs the test app on a JVM in-process like a JVM test, but without -Xcheck:jni
# (JNI at its real cost), output in ${CMAKE_BINARY_DIR}/bench.
function(jp_add_jvm_bench name source)
  cmake_parse_arguments(ARG "" "JANKPROBE_JAR" "" ${ARGN})
  if(NOT ARG_JANKPROBE_JAR)
    set(ARG_JANKPROBE_JAR jankprobe_hotspot_java)
  endif()
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE jp_jvm_harness benchmark::benchmark Threads::Threads)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(${name} PRIVATE
      JP_JVM_CHECK_JNI=0
      JP_JVM_SYSTEM_CP="$<TARGET_PROPERTY:jp_android_standins,JAR_FILE>"
      JP_JVM_JANKPROBE_JAR="$<TARGET_PROPERTY:${ARG_JANKPROBE_JAR},JAR_FILE>"
      JP_JVM_APP_JAR="$<TARGET_PROPERTY:jp_test_app,JAR_FILE>"
      JP_LIBJANKPROBE="$<TARGET_FILE:jankprobe>"
      JP_JVM_LIBRARY_PATH="${CMAKE_BINARY_DIR}/tests/fixtures/libutils")
  add_dependencies(${name} jp_android_standins ${ARG_JANKPROBE_JAR} jp_test_app jankprobe)
  if(TARGET jp_libutils)  # the stand-in MessageQueue waits in it when it is there
    add_dependencies(${name} jp_libutils)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  jp_strict_warnings(${name})
endfunction()
