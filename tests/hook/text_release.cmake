# hook/text_release: start-only text given back with madvise, only when every page is a clean file page of
# a private r-xp mapping holding the caller's code (test files mapped as stand-ins for our text).
jp_add_gtest(text_release_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/text_release_test.cc LIBS jp_hook)
