# The config suites: parsing of valid documents, rejection of hostile ones, targeting/sampling, diffs.
foreach(suite parser reject targeting diff)
  jp_add_gtest(config_${suite}_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/config_${suite}_test.cc LIBS jp_hook)
endforeach()
# The parser suite checks docs/config.md against the code (its example parses, its table lists every key).
target_compile_definitions(config_parser_test PRIVATE JP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
