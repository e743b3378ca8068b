if(JP_SANITIZE)
  # UBSan is switched off inside RapidJSON only: Debian's 1.1.0 computes `null + offset` in its internal
  # stack on first use (Tencent/rapidjson#1724, fixed upstream after 1.1.0). ASan still covers it.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
                      -fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/ubsan_ignorelist.txt)
  add_link_options(-fsanitize=address,undefined)
endif()
