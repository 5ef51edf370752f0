/*!
 * \file cl_api.cc
 * \brief Resolves the OpenCL entry points from the ICD loader at run time.
 */
#include "cl_api.h"

#include <tvm/ffi/error.h>

#include <string>
#include <utility>

namespace tvm_backend_opencl {
namespace cl {

namespace {
Api g_api{};
bool g_loaded = false;

}  // namespace

const Api* Load(std::string* err) {
  if (g_loaded) return &g_api;
  // TVM_OPENCL_LIBRARY points at one library (a vendor library that is not registered as an
  // ICD): when set, it is the only one tried, so a wrong path is reported, not silently replaced.
  Api api{};
  *err = tvm::runtime::LoadDriver(&api, {{"libOpenCL.so.1", "libOpenCL.so"},
                                         "TVM_OPENCL_LIBRARY",
                                         "",
                                         "OpenCL 1.2 or newer is required"});
  if (!err->empty()) return nullptr;
  g_api = api;
  g_loaded = true;
  return &g_api;
}

const Api& Get() {
  if (!g_loaded) {
    TVM_FFI_THROW(RuntimeError)
        << "the OpenCL runtime is not initialised (libOpenCL.so.1 not loaded)";
  }
  return g_api;
}

std::string ErrorString(cl_int code) {
  static const std::pair<cl_int, const char*> kNames[] = {
      {0, "CL_SUCCESS"},
      {-1, "CL_DEVICE_NOT_FOUND"},
      {-2, "CL_DEVICE_NOT_AVAILABLE"},
      {-3, "CL_COMPILER_NOT_AVAILABLE"},
      {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
      {-5, "CL_OUT_OF_RESOURCES"},
      {-6, "CL_OUT_OF_HOST_MEMORY"},
      {-7, "CL_PROFILING_INFO_NOT_AVAILABLE"},
      {-8, "CL_MEM_COPY_OVERLAP"},
      {-11, "CL_BUILD_PROGRAM_FAILURE"},
      {-12, "CL_MAP_FAILURE"},
      {-13, "CL_MISALIGNED_SUB_BUFFER_OFFSET"},
      {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"},
      {-15, "CL_COMPILE_PROGRAM_FAILURE"},
      {-16, "CL_LINKER_NOT_AVAILABLE"},
      {-17, "CL_LINK_PROGRAM_FAILURE"},
      {-30, "CL_INVALID_VALUE"},
      {-31, "CL_INVALID_DEVICE_TYPE"},
      {-32, "CL_INVALID_PLATFORM"},
      {-33, "CL_INVALID_DEVICE"},
      {-34, "CL_INVALID_CONTEXT"},
      {-35, "CL_INVALID_QUEUE_PROPERTIES"},
      {-36, "CL_INVALID_COMMAND_QUEUE"},
      {-37, "CL_INVALID_HOST_PTR"},
      {-38, "CL_INVALID_MEM_OBJECT"},
      {-42, "CL_INVALID_BINARY"},
      {-43, "CL_INVALID_BUILD_OPTIONS"},
      {-44, "CL_INVALID_PROGRAM"},
      {-45, "CL_INVALID_PROGRAM_EXECUTABLE"},
      {-46, "CL_INVALID_KERNEL_NAME"},
      {-47, "CL_INVALID_KERNEL_DEFINITION"},
      {-48, "CL_INVALID_KERNEL"},
      {-49, "CL_INVALID_ARG_INDEX"},
      {-50, "CL_INVALID_ARG_VALUE"},
      {-51, "CL_INVALID_ARG_SIZE"},
      {-52, "CL_INVALID_KERNEL_ARGS"},
      {-53, "CL_INVALID_WORK_DIMENSION"},
      {-54, "CL_INVALID_WORK_GROUP_SIZE"},
      {-55, "CL_INVALID_WORK_ITEM_SIZE"},
      {-56, "CL_INVALID_GLOBAL_OFFSET"},
      {-57, "CL_INVALID_EVENT_WAIT_LIST"},
      {-58, "CL_INVALID_EVENT"},
      {-59, "CL_INVALID_OPERATION"},
      {-61, "CL_INVALID_BUFFER_SIZE"},
      {-63, "CL_INVALID_GLOBAL_WORK_SIZE"},
      {-64, "CL_INVALID_PROPERTY"},
      {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
  };
  for (const auto& entry : kNames) {
    if (entry.first == code) return std::string(entry.second) + " (" + std::to_string(code) + ")";
  }
  return "unknown OpenCL error (" + std::to_string(code) + ")";
}

}  // namespace cl
}  // namespace tvm_backend_opencl
