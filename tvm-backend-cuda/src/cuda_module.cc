/*!
 * \file cuda_module.cc
 * \brief Device module of kind "cuda": lazily loads its cubin/PTX per device and launches kernels.
 *
 * Payload formats: "cubin", "ptx", "fatbin" (loaded by cuModuleLoadDataEx as they are, a cubin or
 * fatbin once code_image::Check found it whole) and "cu"
 * (CUDA C source, written where NVRTC was unavailable at build time). A "cu" payload is compiled
 * once per architecture on first use by the Python function "tvm_backend_cuda.nvrtc_compile"
 * (registered by tvm_backend_cuda.activate; it caches the result on disk).
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/code_image.h>
#include <tvm/runtime/gpu_driver.h>

#include <string>

#include "cuda_driver.h"

namespace tvm_backend_cuda {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceModuleSpec;

namespace {

class CUDAModuleObj final : public tvm::runtime::GPUKernelModule {
 public:
  explicit CUDAModuleObj(DeviceModuleSpec spec)
      : GPUKernelModule(&CUDA(), std::move(spec), {"cubin", "ptx", "fatbin", "cu"}) {}

 protected:
  void* LoadImage(int dev_id) final {
    int cc = CUDA().ComputeCapability(dev_id);
    std::string arch = cc < 0 ? "sm_unknown" : "sm_" + std::to_string(cc);
    const std::string& image =
        spec_.fmt != "cu" ? spec_.payload
                          : CompiledForArchitecture(arch, "tvm_backend_cuda.nvrtc_compile",
                                                    "import tvm_backend_cuda (tvm.backend.load("
                                                    "'cuda')) and pip install nvidia-cuda-nvrtc");
    if (spec_.fmt == "cubin" || spec_.fmt == "fatbin") {
      tvm::runtime::code_image::Check(image, "the " + spec_.fmt + " of this cuda module");
    }
    char log[8192] = {0};
    int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log) - 1))};
    CUmodule mod = nullptr;
    CUresult r = Driver().cuModuleLoadDataEx(&mod, image.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS) {
      TVM_FFI_THROW(RuntimeError)
          << "CUDA: loading the cuda module (" << spec_.fmt << ", " << image.size()
          << " bytes) on cuda(" << dev_id << ", " << arch << ") failed: " << CUDA().ErrorString(r)
          << (log[0] ? std::string("\nJIT log:\n") + log : std::string())
          << "\nHint: a cubin runs only on the architecture it was compiled for; compile with "
             "target tvm.target.detect_target_from_device(tvm.cuda("
          << dev_id << ")), or ship PTX (PTX needs a driver at least as new as the NVRTC that "
          << "produced it)";
    }
    return mod;
  }
};
}  // namespace

void RegisterModuleFactories() { tvm::runtime::RegisterDeviceModuleClass<CUDAModuleObj>("cuda"); }

}  // namespace tvm_backend_cuda
