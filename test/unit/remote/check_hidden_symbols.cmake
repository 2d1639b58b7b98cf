# Fails when the shared object LIB exports any AWS CRT or s2n symbol: the extension must link the CRT
# statically and privately, so a host process (Python with its own copies) is never interposed.
# Usage: cmake -DLIB=<path> -P check_hidden_symbols.cmake
execute_process(COMMAND nm -D --defined-only ${LIB} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}")
endif()
string(REGEX MATCHALL "[ \t](aws_|s2n_)[A-Za-z0-9_]*" leaked "${symbols}")
list(LENGTH leaked count)
if(count GREATER 0)
  list(SUBLIST leaked 0 10 sample)
  message(FATAL_ERROR "${count} CRT symbols are exported by ${LIB}, e.g. ${sample}")
endif()
message(STATUS "0 CRT symbols exported by ${LIB}")
