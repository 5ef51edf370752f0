# CMake package for building a TVM backend runtime DSO against this core.
#
#   find_package(Python COMPONENTS Interpreter REQUIRED)
#   execute_process(COMMAND "${Python_EXECUTABLE}" -c
#     "import importlib.util, os; s = importlib.util.find_spec('tvm'); print(os.path.join(list(s.submodule_search_locations)[0], 'share', 'cmake', 'tvm'))"
#     OUTPUT_VARIABLE tvm_DIR OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
#   find_package(tvm CONFIG REQUIRED)
#   tvm_add_backend_runtime(tvm_runtime_mybackend PACKAGE tvm_backend_mybackend SOURCES src/a.cc ...)
#
# Provides the INTERFACE target tvm::backend (core headers, tvm-ffi headers and library, libdl)
# and tvm_add_backend_runtime(), which builds the shared library the way every backend must:
# C++17, hidden visibility, libtvm_runtime not linked (`import tvm` loads it globally), libtvm_ffi
# found next to the tvm_ffi package at run time, installed into <PACKAGE>/lib/.
# Find the tvm wheel without importing it (the finder snippet above), build without isolation.

if(TARGET tvm::backend)
  return()
endif()

# What a library's rpath calls its own folder: $ORIGIN on Linux, @loader_path on macOS.
if(APPLE)
  set(TVM_LOADER_ORIGIN "@loader_path")
else()
  set(TVM_LOADER_ORIGIN "$ORIGIN")
endif()

# In the wheel this file is tvm/share/cmake/tvm/; in the source tree it is tvm-core/cmake/.
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../../../include/tvm/runtime/base.h")
  get_filename_component(TVM_CORE_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/../../../include" ABSOLUTE)
else()
  get_filename_component(TVM_CORE_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
endif()
if(NOT EXISTS "${TVM_CORE_INCLUDE}/tvm/runtime/device_api.h")
  message(FATAL_ERROR "tvm: core headers not found next to ${CMAKE_CURRENT_LIST_FILE}")
endif()

if(NOT TARGET tvm_ffi::shared)
  find_package(Python COMPONENTS Interpreter REQUIRED)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m tvm_ffi.config --cmakedir
                  OUTPUT_VARIABLE tvm_ffi_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  find_package(tvm_ffi CONFIG REQUIRED)
endif()

add_library(tvm::backend INTERFACE IMPORTED)
target_include_directories(tvm::backend INTERFACE "${TVM_CORE_INCLUDE}")
target_link_libraries(tvm::backend INTERFACE tvm_ffi::header tvm_ffi::shared ${CMAKE_DL_LIBS})
target_compile_features(tvm::backend INTERFACE cxx_std_17)

function(tvm_add_backend_runtime target)
  cmake_parse_arguments(ARG "" "PACKAGE" "SOURCES" ${ARGN})
  if(NOT ARG_PACKAGE OR NOT ARG_SOURCES)
    message(FATAL_ERROR "tvm_add_backend_runtime(${target} PACKAGE <import package> SOURCES ...)")
  endif()
  add_library(${target} SHARED ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE tvm::backend)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "${TVM_LOADER_ORIGIN}/../../tvm_ffi/lib" BUILD_WITH_INSTALL_RPATH ON)
  install(TARGETS ${target} LIBRARY DESTINATION ${ARG_PACKAGE}/lib)
endfunction()
