/*!
 * \file opencl_init.cc
 * \brief TVMBackendInit of the OpenCL backend: load libOpenCL and register; no device discovery.
 */
#include <tvm/runtime/base.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/handle_driver.h>

#include <string>

#include "opencl_driver.h"
#include "opencl_module.h"

namespace tvm_backend_opencl {
namespace {

/*!
 * \brief Runs at every `import tvm`, so it stays cheap: it only dlopens the ICD loader and resolves
 *        the entry points, then registers the DeviceAPI and the module factory/loader. Without
 *        libOpenCL it reports the reason and registers nothing, so the core's fallback module takes
 *        over. Platforms and devices are discovered on first use; when none is found, devices do
 *        not exist and every operation raises the reason and the fix.
 */
int OpenCLBackendInit(char* err, int err_len) {
  std::string why = cl::Load();
  if (!why.empty()) return BackendInitFailed(err, err_len, why);
  static auto* api = new HandleDeviceAPI(OpenCLDriver::Global());  // must outlive the process
  DeviceAPI::Register(kDLOpenCL, api);
  RegisterModuleFunctions();
  return 0;
}

}  // namespace
}  // namespace tvm_backend_opencl

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_opencl::OpenCLBackendInit)
