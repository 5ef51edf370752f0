/*!
 * \file cl_api.cc
 * \brief Resolves the OpenCL entry points from the ICD loader at run time; status names.
 */
#include "cl_api.h"

#include <string>

namespace tvm_backend_opencl {
namespace cl {

namespace {
// TVM_OPENCL_LIBRARY points at one library (a vendor library that is not registered as an ICD):
// when set, it is the only one tried, so a wrong path is reported, not silently replaced.
tvm::runtime::LoadedDriver<Api>& Driver() {
  static auto* driver = new tvm::runtime::LoadedDriver<Api>({{"libOpenCL.so.1", "libOpenCL.so"},
                                                             "TVM_OPENCL_LIBRARY",
                                                             "",
                                                             "OpenCL 1.2 or newer is required"});
  return *driver;
}
}  // namespace

std::string Load() { return Driver().Load(); }

const Api& Get() { return Driver().Get(); }

std::string ErrorString(cl_int code) {
  const char* name = "unknown OpenCL error";
#define TVM_OPENCL_STATUS_NAME(status, value) \
  if (code == value) name = #status;
  TVM_OPENCL_STATUS_CODES(TVM_OPENCL_STATUS_NAME)
#undef TVM_OPENCL_STATUS_NAME
  return std::string(name) + " (" + std::to_string(code) + ")";
}

}  // namespace cl
}  // namespace tvm_backend_opencl
