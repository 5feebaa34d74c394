# `cmake --install <build> --component cpp [--prefix P]`: what a C++ project needs for
# find_package(Tessera CONFIG) and Tessera::tessera: the public include tree (cmake/PublicHeaders.cmake),
# libtessera.so (every Tessera library in one; it loads Debian's libLLVM), the tools, and
# <libdir>/cmake/Tessera/. tests/cmake_consumer builds a project against such an installation.
# (The Python package is the `python` component, python/CMakeLists.txt.)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

foreach(header ${TESSERA_PUBLIC_HEADERS})
  tessera_public_header_path(${header} path)
  get_filename_component(dir ${path} DIRECTORY)
  install(FILES ${header} DESTINATION ${TESSERA_INSTALL_INCLUDE_DIR}/${dir} COMPONENT cpp)
endforeach()

install(TARGETS tessera EXPORT TesseraTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cpp)
install(TARGETS tessera-opt tessera-translate tessera-gpu-check tessera-aot RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT cpp)

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${config_dir} COMPONENT cpp)
configure_package_config_file(cmake/TesseraConfig.cmake.in ${CMAKE_BINARY_DIR}/TesseraConfig.cmake
                              INSTALL_DESTINATION ${config_dir})
# 0.x: a new minor version may change the API, so a request for 0.3 accepts 0.3.y only.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/TesseraConfig.cmake ${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake
        DESTINATION ${config_dir} COMPONENT cpp)
