# What the start path pays for giving its text back (hook/text_release.h): the checks (/proc/self/maps,
# /proc/self/pagemap) and the madvise, and what a later configure pays to fault the pages back.
add_executable(text_release_bench ${CMAKE_CURRENT_LIST_DIR}/text_release_bench.cc)
target_link_libraries(text_release_bench PRIVATE jp_hook benchmark::benchmark)
target_include_directories(text_release_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
set_target_properties(text_release_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
jp_strict_warnings(text_release_bench)
