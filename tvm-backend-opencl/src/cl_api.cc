/*!
 * \file cl_api.cc
 * \brief Resolves the OpenCL entry points from the ICD loader at run time.
 */
#include "cl_api.h"

#include <tvm/ffi/error.h>

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
  const char* name = nullptr;
  switch (code) {
    case 0:
      name = "CL_SUCCESS";
      break;
    case -1:
      name = "CL_DEVICE_NOT_FOUND";
      break;
    case -2:
      name = "CL_DEVICE_NOT_AVAILABLE";
      break;
    case -3:
      name = "CL_COMPILER_NOT_AVAILABLE";
      break;
    case -4:
      name = "CL_MEM_OBJECT_ALLOCATION_FAILURE";
      break;
    case -5:
      name = "CL_OUT_OF_RESOURCES";
      break;
    case -6:
      name = "CL_OUT_OF_HOST_MEMORY";
      break;
    case -7:
      name = "CL_PROFILING_INFO_NOT_AVAILABLE";
      break;
    case -8:
      name = "CL_MEM_COPY_OVERLAP";
      break;
    case -11:
      name = "CL_BUILD_PROGRAM_FAILURE";
      break;
    case -12:
      name = "CL_MAP_FAILURE";
      break;
    case -13:
      name = "CL_MISALIGNED_SUB_BUFFER_OFFSET";
      break;
    case -14:
      name = "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
      break;
    case -15:
      name = "CL_COMPILE_PROGRAM_FAILURE";
      break;
    case -16:
      name = "CL_LINKER_NOT_AVAILABLE";
      break;
    case -17:
      name = "CL_LINK_PROGRAM_FAILURE";
      break;
    case -30:
      name = "CL_INVALID_VALUE";
      break;
    case -31:
      name = "CL_INVALID_DEVICE_TYPE";
      break;
    case -32:
      name = "CL_INVALID_PLATFORM";
      break;
    case -33:
      name = "CL_INVALID_DEVICE";
      break;
    case -34:
      name = "CL_INVALID_CONTEXT";
      break;
    case -35:
      name = "CL_INVALID_QUEUE_PROPERTIES";
      break;
    case -36:
      name = "CL_INVALID_COMMAND_QUEUE";
      break;
    case -37:
      name = "CL_INVALID_HOST_PTR";
      break;
    case -38:
      name = "CL_INVALID_MEM_OBJECT";
      break;
    case -42:
      name = "CL_INVALID_BINARY";
      break;
    case -43:
      name = "CL_INVALID_BUILD_OPTIONS";
      break;
    case -44:
      name = "CL_INVALID_PROGRAM";
      break;
    case -45:
      name = "CL_INVALID_PROGRAM_EXECUTABLE";
      break;
    case -46:
      name = "CL_INVALID_KERNEL_NAME";
      break;
    case -47:
      name = "CL_INVALID_KERNEL_DEFINITION";
      break;
    case -48:
      name = "CL_INVALID_KERNEL";
      break;
    case -49:
      name = "CL_INVALID_ARG_INDEX";
      break;
    case -50:
      name = "CL_INVALID_ARG_VALUE";
      break;
    case -51:
      name = "CL_INVALID_ARG_SIZE";
      break;
    case -52:
      name = "CL_INVALID_KERNEL_ARGS";
      break;
    case -53:
      name = "CL_INVALID_WORK_DIMENSION";
      break;
    case -54:
      name = "CL_INVALID_WORK_GROUP_SIZE";
      break;
    case -55:
      name = "CL_INVALID_WORK_ITEM_SIZE";
      break;
    case -56:
      name = "CL_INVALID_GLOBAL_OFFSET";
      break;
    case -57:
      name = "CL_INVALID_EVENT_WAIT_LIST";
      break;
    case -58:
      name = "CL_INVALID_EVENT";
      break;
    case -59:
      name = "CL_INVALID_OPERATION";
      break;
    case -61:
      name = "CL_INVALID_BUFFER_SIZE";
      break;
    case -63:
      name = "CL_INVALID_GLOBAL_WORK_SIZE";
      break;
    case -64:
      name = "CL_INVALID_PROPERTY";
      break;
    case -1001:
      name = "CL_PLATFORM_NOT_FOUND_KHR";
      break;
    default:
      break;
  }
  std::string out = name != nullptr ? name : "unknown OpenCL error";
  return out + " (" + std::to_string(code) + ")";
}

}  // namespace cl
}  // namespace tvm_backend_opencl
