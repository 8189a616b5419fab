# Writes OUT (i8gemm_build_info.h) with the commit SRC is at, "unknown" outside git. Run at every
# build (target i8g_build_info), not only at configure time, so that `i8gemm --version` names the
# commit the binary was built from; the file is rewritten only when the commit changed, so an
# unchanged tree rebuilds nothing.
execute_process(COMMAND git -C ${SRC} rev-parse --short=12 HEAD OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit unknown)
endif()
file(CONFIGURE OUTPUT ${OUT} CONTENT "#define I8G_GIT_COMMIT \"${commit}\"\n")
