# `./run demo`: the main job end to end (issue 7). jankprobe-demo is the process around a small "app" on
# OpenJDK (tools/demo/java) that loads libjankprobe.so at start; the launcher (tools/demo/launcher) feeds it
# touches through the libinput.so fixture and uses the JVM harness of tests/jvm. Both of those are test
# targets (defined later, under tests/), so the demo needs the tests enabled and a JDK.
# jankprobe-engine-demo is the earlier PLT-engine demo (zlib's imports hooked live), kept as a second demo.
add_executable(jankprobe-engine-demo ${CMAKE_CURRENT_LIST_DIR}/demo/plt_demo.cc)
target_link_libraries(jankprobe-engine-demo PRIVATE jankprobe jp_plt ${CMAKE_DL_LIBS})
target_include_directories(jankprobe-engine-demo PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
set_target_properties(jankprobe-engine-demo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
jp_strict_warnings(jankprobe-engine-demo)

find_package(Java 17 COMPONENTS Development)
find_package(JNI)
if(NOT JP_BUILD_TESTS OR NOT Java_FOUND OR NOT JNI_FOUND OR NOT TARGET jankprobe_java)
  message(STATUS "demo: needs JP_BUILD_TESTS=ON and a JDK; jankprobe-demo is not built")
  return()
endif()
include(UseJava)
find_package(RapidJSON QUIET)
find_path(JP_DEMO_RAPIDJSON_DIR rapidjson/document.h)

# The app's jar holds jankprobe's Java classes too, as an Android app's dex does (the build merges a
# library's classes into the app's own dex): one classpath entry, one class loader, one archive opened and
# indexed, instead of a second jar the JVM opens for the library alone. The classes still load through the
# app's class loader, found by name from JNI_OnLoad as on a phone. They are jankprobe-hotspot.jar's
# (java/CMakeLists.txt): the demo runs on HotSpot, so it takes the host's GapWord, as a HotSpot app would.
file(GLOB jp_demo_app_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/demo/java/com/example/demo/*.java)
get_property(jp_demo_jankprobe_sources GLOBAL PROPERTY JP_JANKPROBE_HOTSPOT_JAVA_SOURCES)
add_jar(jp_demo_app SOURCES ${jp_demo_app_sources} ${jp_demo_jankprobe_sources} INCLUDE_JARS jp_android_standins
        OUTPUT_NAME demo-app-with-jankprobe OUTPUT_DIR ${CMAKE_BINARY_DIR}/tools)

file(GLOB jp_demo_launcher_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/demo/launcher/*.cc)
add_executable(jankprobe-demo ${jp_demo_launcher_sources})
# jp_jvm_harness and jp_libinput are defined by tests/jvm/jvm_harness.cmake and tests/fixtures/libinput.cmake.
target_link_libraries(jankprobe-demo PRIVATE jp_jvm_harness jp_libinput Threads::Threads)
target_include_directories(jankprobe-demo PRIVATE ${PROJECT_SOURCE_DIR})
target_include_directories(jankprobe-demo SYSTEM PRIVATE ${JP_DEMO_RAPIDJSON_DIR} ${JNI_INCLUDE_DIRS})
target_compile_definitions(jankprobe-demo PRIVATE
    JP_DEMO_STANDINS_JAR="$<TARGET_PROPERTY:jp_android_standins,JAR_FILE>"
    JP_DEMO_APP_JAR="$<TARGET_PROPERTY:jp_demo_app,JAR_FILE>"
    JP_DEMO_LIBJANKPROBE="$<TARGET_FILE:jankprobe>"
    JP_DEMO_CONFIG_DIR="${CMAKE_CURRENT_LIST_DIR}/demo/config")
add_dependencies(jankprobe-demo jp_demo_app jp_android_standins jankprobe)
# The stand-in MessageQueue waits in a host libutils.so (epoll_wait through its PLT, as android::Looper
# does), which is what the looper monitor's default poll source hooks; without it the app would wait in
# Java and the looper monitor would fall back to its Printer source. Built even without the tests.
include(${PROJECT_SOURCE_DIR}/tests/fixtures/libutils.cmake)
if(TARGET jp_libutils)
  add_dependencies(jankprobe-demo jp_libutils)
endif()
set_target_properties(jankprobe-demo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
jp_strict_warnings(jankprobe-demo)
