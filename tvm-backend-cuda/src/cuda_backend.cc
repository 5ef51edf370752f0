/*!
 * \file cuda_backend.cc
 * \brief TVMBackendInit of libtvm_runtime_cuda: loads the driver, registers the DeviceAPI and the
 *        module factories. Nothing is registered at dlopen time, so a machine without the NVIDIA
 *        driver gets the generic fallback loader from the core instead.
 */
#include <tvm/ffi/error.h>
#include <tvm/runtime/base.h>

#include <cstring>
#include <string>

#include "cuda_driver.h"

namespace tvm_cuda {
void RegisterDeviceAPI();
void RegisterModuleFactories();

namespace {
int CUDABackendInit(char* err, int err_len) {
  auto fail = [&](const std::string& why) {
    if (err != nullptr && err_len > 0) {
      std::strncpy(err, why.c_str(), static_cast<size_t>(err_len) - 1);
      err[err_len - 1] = '\0';
    }
    return 1;
  };
  try {
    std::string why = LoadDriver();
    if (!why.empty()) return fail(why);
    RegisterDeviceAPI();
    RegisterModuleFactories();
    return 0;
  } catch (const std::exception& e) {
    return fail(std::string("CUDA runtime initialisation failed: ") + e.what());
  }
}
}  // namespace
}  // namespace tvm_cuda

TVM_BACKEND_DEFINE_ENTRY(tvm_cuda::CUDABackendInit)
