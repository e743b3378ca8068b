# portable_jar_test: jankprobe.jar, the jar (and java/src the sources) an Android app takes, names no sun.*
# class, while jankprobe-hotspot.jar differs from it only in java/hotspot's classes (java/CMakeLists.txt):
# - no class of jankprobe.jar holds "sun/" in its bytes (the constant pool names every class a class
#   refers to); jankprobe-hotspot.jar's GapWord does (the check sees such a reference);
# - both jars hold the same classes; the ones java/hotspot does not replace are byte for byte the same,
#   and GapWord's non-private members (javap -package) are the same in both, as TimingIdleHandlerList,
#   compiled once per jar, relies on;
# - java/src compiles the way an app's build sees it: javac with java.base alone (no jdk.unsupported, so
#   no sun.misc: android.jar has none either); the same sources with java/hotspot's GapWord do not.
# This file is both the test's fragment (included by tests/CMakeLists.txt) and its script (cmake -P).
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.18)  # IN_LIST, file(ARCHIVE_EXTRACT)
  function(fail text)
    message(FATAL_ERROR "portable_jar_test: ${text}")
  endfunction()
  foreach(jar portable hotspot)
    file(REMOVE_RECURSE ${WORK}/${jar})
    file(ARCHIVE_EXTRACT INPUT ${${jar}_JAR} DESTINATION ${WORK}/${jar})
    file(GLOB_RECURSE ${jar}_classes RELATIVE ${WORK}/${jar} ${WORK}/${jar}/*.class)
    list(SORT ${jar}_classes)
  endforeach()
  if(NOT portable_classes STREQUAL hotspot_classes)
    fail("the jars hold different classes:\n  ${portable_JAR}: ${portable_classes}\n  ${hotspot_JAR}: ${hotspot_classes}")
  endif()
  if(NOT "com/jankprobe/GapWord.class" IN_LIST portable_classes)
    fail("no com/jankprobe/GapWord.class in ${portable_JAR}")
  endif()
  foreach(class IN LISTS portable_classes)
    file(STRINGS ${WORK}/portable/${class} names REGEX "sun/")
    if(names)
      fail("${portable_JAR}: ${class} refers to ${names}")
    endif()
  endforeach()
  file(STRINGS ${WORK}/hotspot/com/jankprobe/GapWord.class names REGEX "sun/misc/Unsafe")
  if(NOT names)
    fail("${hotspot_JAR}: GapWord does not refer to sun/misc/Unsafe (is it the host's GapWord?)")
  endif()

  file(GLOB_RECURSE replaced RELATIVE ${HOTSPOT_SOURCES} ${HOTSPOT_SOURCES}/*.java)
  foreach(class IN LISTS portable_classes)
    string(REGEX REPLACE "\\$.*|\\.class$" "" outer ${class})
    file(SHA256 ${WORK}/portable/${class} a)
    file(SHA256 ${WORK}/hotspot/${class} b)
    if("${outer}.java" IN_LIST replaced)
      foreach(jar portable hotspot)
        execute_process(COMMAND ${JAVAP} -package ${WORK}/${jar}/${class}
                        OUTPUT_VARIABLE ${jar}_members RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
          fail("javap ${class} (${jar}): ${rc}")
        endif()
        string(REGEX REPLACE "Compiled from[^\n]*\n" "" ${jar}_members "${${jar}_members}")
      endforeach()
      if(NOT portable_members STREQUAL hotspot_members)
        fail("${class}: the non-private members differ\nportable:\n${portable_members}\nhotspot:\n${hotspot_members}")
      endif()
      if(a STREQUAL b)
        fail("${class} is the same in both jars, but java/hotspot replaces it")
      endif()
    elseif(NOT a STREQUAL b)
      fail("${class} differs between the jars, but java/hotspot does not replace it")
    endif()
  endforeach()

  # As an app's build compiles the sources: java.base alone (android.jar's role for the JDK's part).
  file(GLOB_RECURSE portable_sources ${PORTABLE_SOURCES}/*.java)
  set(hotspot_sources)
  foreach(source IN LISTS portable_sources)
    file(RELATIVE_PATH relative ${PORTABLE_SOURCES} ${source})
    if(relative IN_LIST replaced)
      list(APPEND hotspot_sources ${HOTSPOT_SOURCES}/${relative})
    else()
      list(APPEND hotspot_sources ${source})
    endif()
  endforeach()
  foreach(jar portable hotspot)
    file(REMOVE_RECURSE ${WORK}/${jar}-javac)
    execute_process(COMMAND ${JAVAC} --limit-modules java.base -nowarn -cp ${STANDINS} -d ${WORK}/${jar}-javac
                            ${${jar}_sources}
                    OUTPUT_VARIABLE ${jar}_out ERROR_VARIABLE ${jar}_out RESULT_VARIABLE ${jar}_rc)
  endforeach()
  if(NOT portable_rc EQUAL 0)
    fail("java/src does not compile with java.base alone (as against android.jar):\n${portable_out}")
  endif()
  if(hotspot_rc EQUAL 0 OR NOT hotspot_out MATCHES "sun\\.misc")
    fail("java/src with java/hotspot's classes compiled with java.base alone, or failed for another reason "
         "(rc ${hotspot_rc}): the check would not see a sun.misc reference\n${hotspot_out}")
  endif()
  message(STATUS "portable_jar_test: ${portable_JAR} names no sun.* class (${hotspot_JAR}'s GapWord does); "
                 "same classes and GapWord members in both")
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/jvm_harness.cmake)
if(TARGET jankprobe_java AND TARGET jankprobe_hotspot_java)
  get_filename_component(jp_jdk_bin ${Java_JAVAC_EXECUTABLE} DIRECTORY)
  add_test(NAME portable_jar_test
           COMMAND ${CMAKE_COMMAND}
                   -Dportable_JAR=$<TARGET_PROPERTY:jankprobe_java,JAR_FILE>
                   -Dhotspot_JAR=$<TARGET_PROPERTY:jankprobe_hotspot_java,JAR_FILE>
                   -DSTANDINS=$<TARGET_PROPERTY:jp_android_standins,JAR_FILE>
                   -DPORTABLE_SOURCES=${PROJECT_SOURCE_DIR}/java/src
                   -DHOTSPOT_SOURCES=${PROJECT_SOURCE_DIR}/java/hotspot
                   -DJAVAC=${Java_JAVAC_EXECUTABLE} -DJAVAP=${jp_jdk_bin}/javap
                   -DWORK=${CMAKE_BINARY_DIR}/tests/jvm/portable_jar
                   -P ${CMAKE_CURRENT_LIST_FILE})
endif()
