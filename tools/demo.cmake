# `./run demo`: the engine hooks a live library no one here wrote (zlib), then the plugin core exports
# what it saw as a Chrome trace. Replaced by the JVM host app once the monitors land.
add_executable(jankprobe-demo ${CMAKE_CURRENT_LIST_DIR}/demo/plt_demo.cc)
target_link_libraries(jankprobe-demo PRIVATE jankprobe jp_plt ${CMAKE_DL_LIBS})
target_include_directories(jankprobe-demo PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
set_target_properties(jankprobe-demo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
jp_strict_warnings(jankprobe-demo)
