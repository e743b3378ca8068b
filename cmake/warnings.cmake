# Warnings are errors for our own code only (targets call jp_strict_warnings); third-party code is left alone.
function(jp_strict_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter)
endfunction()
