# `cmake --install build --prefix <p>` puts LMS under <p>:
#   bin/      lms-opt, lms-plan
#   include/  LMS/ (with the generated .inc files), LMS-c/
#   lib/      the static libraries, libLMS.so, libLMS-C.so, liblms_runtime.so,
#             LMSDialectPlugin.so, LMSPassPlugin.so
#   lib/cmake/lms/  LMSConfig.cmake: find_package(LMS CONFIG) gives LMS::*
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LMS_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lms)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/LMS
                  ${PROJECT_SOURCE_DIR}/include/LMS-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT lms-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/LMS
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT lms-headers
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

# The libraries a host compiler links, with their usage requirements.
set(LMS_EXPORTED_LIBRARIES
  LMSGraph LMSDialect LMSAnalysis LMSTransforms LMSTransformOps LMSConversion
  LMSPipelines
  lms_runtime)
if(LMS_LINK_MLIR_DYLIB)
  list(APPEND LMS_EXPORTED_LIBRARIES LMS LMS-C)
endif()
install(TARGETS ${LMS_EXPORTED_LIBRARIES}
  EXPORT LMSTargets
  COMPONENT lms-libraries
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(LMS_LINK_MLIR_DYLIB)
  install(TARGETS LMSDialectPlugin LMSPassPlugin
    COMPONENT lms-plugins
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# The tools find libMLIR.so and libLLVM.so in LLVM's library directory from
# any prefix.
set_target_properties(lms-opt lms-plan PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
install(TARGETS lms-opt lms-plan
  COMPONENT lms-tools
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT LMSTargets
  NAMESPACE LMS::
  DESTINATION ${LMS_INSTALL_CMAKE_DIR}
  COMPONENT lms-cmake)

if(LMS_CBC_FOUND)
  set(LMS_CONFIG_HAVE_CBC ON)
else()
  set(LMS_CONFIG_HAVE_CBC OFF)
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/LMSConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/LMSConfig.cmake
  INSTALL_DESTINATION ${LMS_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR
            CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/LMSConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/LMSConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/LMSConfigVersion.cmake
  DESTINATION ${LMS_INSTALL_CMAKE_DIR}
  COMPONENT lms-cmake)
