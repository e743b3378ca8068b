# hook::JsonOut, the library's one JSON writer: byte-for-byte the text rapidjson::Writer writes, Embed's
# all-or-nothing copy of a monitor's JSON, the file mode's flushing.
jp_add_gtest(json_out_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/json_out_test.cc LIBS jp_hook)
