/*!
 * \file webgpu_init.cc
 * \brief TVMBackendInit of the WebGPU backend: load wgpu-native and register; no adapter yet.
 */
#include <tvm/runtime/base.h>

#include <string>

#include "webgpu_runtime.h"

namespace tvm_backend_webgpu {
namespace {

/*!
 * \brief Runs at every `import tvm`, so it stays cheap: it dlopens wgpu-native (the path the
 *        Python package found in the `wgpu` package, TVM_WEBGPU_LIBRARY), checks its version and
 *        registers the DeviceAPI and the module factory/loader. The adapter and device are
 *        requested on first use. Without the library it reports why and registers nothing, so
 *        the core's fallback module takes over.
 */
int WebGPUBackendInit(char* err, int err_len) {
  std::string why = WebGPUDevice::Load();
  if (!why.empty()) return tvm::runtime::BackendInitFailed(err, err_len, why);
  RegisterDeviceAPI();
  RegisterModuleFunctions();
  return 0;
}

}  // namespace
}  // namespace tvm_backend_webgpu

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_webgpu::WebGPUBackendInit)
