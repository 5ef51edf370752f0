/*!
 * \file cuda_init.cc
 * \brief TVMBackendInit of libtvm_runtime_cuda: loads the driver, registers the DeviceAPI and the
 *        module factories. Nothing is registered at dlopen time, so a machine without the NVIDIA
 *        driver gets the generic fallback loader from the core instead.
 */
#include <tvm/ffi/error.h>
#include <tvm/runtime/base.h>

#include <string>

#include "cuda_driver.h"

namespace tvm_backend_cuda {
void RegisterDeviceAPI();
void RegisterModuleFactories();

namespace {
int CUDABackendInit(char* err, int err_len) {
  std::string why = LoadDriver();
  if (!why.empty()) return tvm::runtime::BackendInitFailed(err, err_len, why);
  RegisterDeviceAPI();
  RegisterModuleFactories();
  return 0;
}
}  // namespace
}  // namespace tvm_backend_cuda

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_cuda::CUDABackendInit)
