# Executables link zlib, libyaml and fmt from archives (issue 27, docs/performance.md "Fewer shared
# objects at start").
#
# Each shared object a process maps costs its start: opening and mapping it, its relocations, and
# a place in the scope every symbol lookup walks (libstdc++ alone binds 1,700 of its own symbols
# through that scope). zlib, libyaml and fmt were three of the tool's 14; linking them from
# archives saves about 20 page faults and a few hundred microseconds of every `amanda` process.
# Debian ships libz.a and libyaml.a; it ships no libfmt.a, so fmt's compiled part (format-inl.h,
# the code libfmt.so holds) is compiled here once (cmake/fmt_static.cpp).
#
# As in StaticOnnx.cmake, only executables link the archives: `fmt::fmt`, `ZLIB::ZLIB` and
# `amanda_yaml` are defined here as interface targets that name the archives for an executable and
# the shared libraries for anything else (the Python module and the plug-ins, which are
# position-independent: Debian's archives are not). absl stays shared: ir::Graph holds absl hash
# maps, and a map made by the tool is probed by the plug-in's code, which must then hash with the
# same seed (the address of a variable in libabsl_hash.so). libstdc++ stays shared too: the
# plug-ins bring it, and two C++ runtimes in one process would not share exceptions or error
# categories. The sanitizer build keeps the shared libraries. -DAMANDA_STATIC_DEPS=OFF restores
# them everywhere.
option(AMANDA_STATIC_DEPS "Link executables with zlib, libyaml and fmt from archives" ON)

# The defaults: the shared libraries for everything (the targets the rest of the build names).
function(amanda_shared_yaml)
  pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
  add_library(amanda_yaml INTERFACE)
  target_link_libraries(amanda_yaml INTERFACE PkgConfig::YAML)
endfunction()

find_package(PkgConfig REQUIRED)
if(NOT AMANDA_STATIC_DEPS OR AMANDA_SANITIZE)
  amanda_shared_yaml()
  return()
endif()

find_library(AMANDA_ZLIB_A NAMES libz.a)
find_library(AMANDA_ZLIB_SO NAMES libz.so)
find_library(AMANDA_YAML_A NAMES libyaml.a)
find_library(AMANDA_YAML_SO NAMES libyaml.so libyaml-0.so.2)
find_library(AMANDA_FMT_SO NAMES libfmt.so)
find_file(AMANDA_FMT_INL fmt/format-inl.h)
foreach(_v AMANDA_ZLIB_A AMANDA_ZLIB_SO AMANDA_YAML_A AMANDA_YAML_SO AMANDA_FMT_SO AMANDA_FMT_INL)
  if(NOT ${_v})
    message(STATUS "Static deps: ${_v} not found, the shared libraries are used")
    amanda_shared_yaml()
    return()
  endif()
endforeach()

set(_exe "$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>")

# fmt: find_package(fmt) keeps these two (its export file returns when both exist).
add_library(amanda_fmt_static STATIC ${CMAKE_CURRENT_LIST_DIR}/fmt_static.cpp)
target_compile_definitions(amanda_fmt_static PRIVATE FMT_SHARED)
set_target_properties(amanda_fmt_static PROPERTIES UNITY_BUILD OFF)
add_library(fmt::fmt INTERFACE IMPORTED)
set_target_properties(fmt::fmt PROPERTIES
  INTERFACE_COMPILE_DEFINITIONS "FMT_SHARED"
  INTERFACE_LINK_LIBRARIES "$<${_exe}:amanda_fmt_static>;$<$<NOT:${_exe}>:${AMANDA_FMT_SO}>")
add_library(fmt::fmt-header-only INTERFACE IMPORTED)
set_target_properties(fmt::fmt-header-only PROPERTIES INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1")

# zlib: FindZLIB keeps a ZLIB::ZLIB that exists.
add_library(ZLIB::ZLIB INTERFACE IMPORTED)
set_target_properties(ZLIB::ZLIB PROPERTIES
  INTERFACE_LINK_LIBRARIES "$<${_exe}:${AMANDA_ZLIB_A}>;$<$<NOT:${_exe}>:${AMANDA_ZLIB_SO}>")

# libyaml (no CMake package: pkg-config's include directories, the archive or the shared library)
pkg_check_modules(YAML REQUIRED yaml-0.1)
add_library(amanda_yaml INTERFACE)
target_include_directories(amanda_yaml INTERFACE ${YAML_INCLUDE_DIRS})
target_link_libraries(amanda_yaml INTERFACE "$<${_exe}:${AMANDA_YAML_A}>" "$<$<NOT:${_exe}>:${AMANDA_YAML_SO}>")
message(STATUS "Static deps: executables link ${AMANDA_ZLIB_A}, ${AMANDA_YAML_A} and fmt (compiled from ${AMANDA_FMT_INL})")
