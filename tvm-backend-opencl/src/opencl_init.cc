/*!
 * \file opencl_init.cc
 * \brief TVMBackendInit of the OpenCL backend: load libOpenCL, discover devices, register.
 */
#include <tvm/runtime/base.h>
#include <tvm/runtime/device_api.h>

#include <cstdio>
#include <exception>
#include <string>

#include "opencl_device_api.h"
#include "opencl_module.h"
#include "opencl_workspace.h"

namespace tvm {
namespace runtime {
namespace opencl {
namespace {

int WriteReason(char* err, int err_len, const std::string& why) {
  if (err != nullptr && err_len > 0) std::snprintf(err, static_cast<size_t>(err_len), "%s", why.c_str());
  return 1;
}

/*!
 * \brief Registers the DeviceAPI and module factories only when OpenCL is usable, so that on a
 *        machine without a driver the core's fallback module takes over.
 */
int OpenCLBackendInit(char* err, int err_len) {
  try {
    std::string why = Workspace::Init();
    if (!why.empty()) return WriteReason(err, err_len, why);
    DeviceAPI::Register(kDLOpenCL, OpenCLDeviceAPI::Global());
    RegisterModuleFunctions();
    return 0;
  } catch (const std::exception& e) {
    return WriteReason(err, err_len, std::string("OpenCL backend init failed: ") + e.what());
  }
}

}  // namespace
}  // namespace opencl
}  // namespace runtime
}  // namespace tvm

TVM_BACKEND_DEFINE_ENTRY(tvm::runtime::opencl::OpenCLBackendInit)
