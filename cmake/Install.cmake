# Installation and the CMake package: `cmake --install` puts the libraries, the public headers, the CLI and
# autotuneConfig.cmake under the prefix, so that an external project does
#     find_package(autotune REQUIRED)              # or: find_package(autotune REQUIRED COMPONENTS lookup)
#     target_link_libraries(app PRIVATE autotune::runtime)   # or autotune::lookup (no CUDA needed)
# The libraries are static; their dependencies (nlohmann_json, SQLite3, Threads and, for the runtime,
# CUDAToolkit's NVRTC) are found again by the package config. See docs/lookup.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(autotune_core PROPERTIES EXPORT_NAME core)
set_target_properties(autotune_db PROPERTIES EXPORT_NAME db)
set_target_properties(autotune_embedded PROPERTIES EXPORT_NAME embedded)
set_target_properties(autotune_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(autotune_specs PROPERTIES EXPORT_NAME specs)
set_target_properties(autotune_cuda PROPERTIES EXPORT_NAME cuda)
set_target_properties(autotune_search PROPERTIES EXPORT_NAME search)
set_target_properties(autotune_session PROPERTIES EXPORT_NAME session)
# autotune_online names itself online (its CMakeLists.txt); the runtime links it, and it links search and session.
# autotune_lookup and autotune_runtime name themselves lookup and runtime (their CMakeLists.txt).

install(TARGETS autotune_core autotune_db autotune_embedded autotune_specs autotune_kernels autotune_lookup autotune_cuda
                autotune_runtime autotune_online autotune_search autotune_session
        EXPORT autotuneTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Public headers keep their source paths (#include "tuner/lookup/lookup.hpp"). None of them includes a
# CUDA, NVRTC, SQLite or search header (tests/cpu/test_lookup.cpp checks the lookup header's closure).
file(GLOB AUTOTUNE_CORE_HEADERS ${PROJECT_SOURCE_DIR}/tuner/core/*.hpp)
install(FILES ${AUTOTUNE_CORE_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuner/core)
file(GLOB AUTOTUNE_EXPR_HEADERS ${PROJECT_SOURCE_DIR}/tuner/core/expr/*.hpp)
# The Python expressions' internal headers are shared by their sources only; no public header includes them.
list(FILTER AUTOTUNE_EXPR_HEADERS EXCLUDE REGEX "/pyexpr_(lex|ops|tree)\\.hpp$")
install(FILES ${AUTOTUNE_EXPR_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuner/core/expr)
install(FILES ${PROJECT_SOURCE_DIR}/db/database.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/db)
install(FILES ${PROJECT_SOURCE_DIR}/tuner/kernels/registry.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuner/kernels)
install(FILES ${PROJECT_SOURCE_DIR}/tuner/specs/specs.hpp ${PROJECT_SOURCE_DIR}/tuner/specs/embedded.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuner/specs)
install(FILES ${PROJECT_SOURCE_DIR}/tuner/lookup/lookup.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuner/lookup)
install(FILES ${PROJECT_SOURCE_DIR}/tuner/runtime/launch.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tuner/runtime)

set(AUTOTUNE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/autotune)
install(EXPORT autotuneTargets NAMESPACE autotune:: DESTINATION ${AUTOTUNE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/autotuneConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/autotuneConfig.cmake
                              INSTALL_DESTINATION ${AUTOTUNE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/autotuneConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/autotuneConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/autotuneConfigVersion.cmake
        DESTINATION ${AUTOTUNE_CMAKE_DIR})
