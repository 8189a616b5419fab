# `cmake --install build --prefix P` puts into P:
#   lib/libi8gemm.so.MAJOR.MINOR.PATCH (soname libi8gemm.so.MAJOR) + libi8gemm.so, and the hipRTC
#       helper beside it (the library looks for its helpers next to itself);
#   bin/i8gemm (the CLI) and the hipRTC helper beside it;
#   include/i8gemm/i8gemm.h;
#   lib/cmake/i8gemm/: find_package(i8gemm) gives the imported target i8gemm::i8gemm;
#   lib/pkgconfig/i8gemm.pc.
# tests/install/consumer_check.sh builds a small C program against such a prefix both ways.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS i8gemm_shared EXPORT i8gemmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
install(FILES ${CMAKE_SOURCE_DIR}/include/i8gemm/i8gemm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/i8gemm)
install(TARGETS i8gemm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET i8gemm_hiprtc_worker)
  install(TARGETS i8gemm_hiprtc_worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS i8gemm_hiprtc_worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR})
  if(TARGET i8gemm_llvm_ir)  # the worker's IR reader, loaded from the worker's own folder
    install(TARGETS i8gemm_llvm_ir LIBRARY DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(TARGETS i8gemm_llvm_ir LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endif()

install(EXPORT i8gemmTargets NAMESPACE i8gemm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/i8gemm)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/i8gemmConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/i8gemmConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/i8gemm)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/i8gemmConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/i8gemmConfig.cmake ${CMAKE_BINARY_DIR}/i8gemmConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/i8gemm)

configure_file(${CMAKE_SOURCE_DIR}/cmake/i8gemm.pc.in ${CMAKE_BINARY_DIR}/i8gemm.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/i8gemm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
