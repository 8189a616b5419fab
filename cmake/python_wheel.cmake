# The Python wheel (pyproject.toml, scikit-build-core): the library and the CLI, with the hipRTC
# helper beside both (each looks for it next to itself), into i8gemm/_bin/ in the wheel, as the
# install component "python". The library goes in once, under its soname (a wheel keeps no
# symlinks). I8GEMM_PREBUILT=DIR installs DIR's already-built copies instead of compiling
# (scripts/test_python.sh reuses build/ that way); nothing else of the project is configured then.
set(I8G_WHEEL_BIN i8gemm/_bin)
set(I8G_SONAME libi8gemm.so.${PROJECT_VERSION_MAJOR})
if(I8GEMM_PREBUILT)
  set(lib ${I8GEMM_PREBUILT}/runtime/libi8gemm.so.${PROJECT_VERSION})
  set(cli ${I8GEMM_PREBUILT}/tools/i8gemm)
  set(worker ${I8GEMM_PREBUILT}/tools/i8gemm_hiprtc_worker)
  foreach(f ${lib} ${cli})
    if(NOT EXISTS ${f})
      message(FATAL_ERROR "I8GEMM_PREBUILT=${I8GEMM_PREBUILT}: ${f} is missing (build it first)")
    endif()
  endforeach()
  install(PROGRAMS ${lib} DESTINATION ${I8G_WHEEL_BIN} RENAME ${I8G_SONAME} COMPONENT python)
  install(PROGRAMS ${cli} DESTINATION ${I8G_WHEEL_BIN} COMPONENT python)
  if(EXISTS ${worker})
    install(PROGRAMS ${worker} DESTINATION ${I8G_WHEEL_BIN} COMPONENT python)
  endif()
  # pyproject.toml names these build targets; here there is nothing to build.
  add_custom_target(i8gemm_shared)
  add_custom_target(i8gemm)
else()
  install(PROGRAMS $<TARGET_FILE:i8gemm_shared> DESTINATION ${I8G_WHEEL_BIN} RENAME ${I8G_SONAME}
          COMPONENT python)
  install(TARGETS i8gemm i8gemm_hiprtc_worker RUNTIME DESTINATION ${I8G_WHEEL_BIN} COMPONENT python)
endif()
