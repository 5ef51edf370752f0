/*!
 * \file cuda_module.cc
 * \brief Device module of kind "cuda": lazily loads its cubin/PTX per device and launches kernels.
 *
 * Payload formats: "cubin", "ptx", "fatbin" (loaded by cuModuleLoadDataEx as they are) and "cu"
 * (CUDA C source, written where NVRTC was unavailable at build time). A "cu" payload is compiled
 * once per architecture on first use by the Python function "tvm_backend_cuda.nvrtc_compile"
 * (registered by tvm_backend_cuda.activate; it caches the result on disk).
 */
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/gpu_driver.h>

#include <map>
#include <string>

#include "cuda_driver.h"

namespace tvm_backend_cuda {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceModuleSpec;

namespace {

class CUDAModuleObj final : public tvm::runtime::GPUKernelModule {
 public:
  explicit CUDAModuleObj(DeviceModuleSpec spec) : GPUKernelModule(&CUDA(), std::move(spec)) {
    const std::string& f = spec_.fmt;
    if (f != "cubin" && f != "ptx" && f != "fatbin" && f != "cu") {
      TVM_FFI_THROW(ValueError) << "cuda module: unsupported payload format '" << f
                                << "' (expected cubin, ptx, fatbin or cu)";
    }
  }

 protected:
  void* LoadImage(int dev_id) final {
    std::string image = spec_.fmt == "cu" ? CompileSource(dev_id) : spec_.payload;
    char log[8192] = {0};
    int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log) - 1))};
    CUmodule mod = nullptr;
    CUresult r = Driver().cuModuleLoadDataEx(&mod, image.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS) {
      TVM_FFI_THROW(RuntimeError)
          << "CUDA: loading the cuda module (" << spec_.fmt << ", " << image.size()
          << " bytes) on cuda(" << dev_id << ", " << ArchOf(dev_id)
          << ") failed: " << CUDA().ErrorString(r)
          << (log[0] ? std::string("\nJIT log:\n") + log : std::string())
          << "\nHint: a cubin runs only on the architecture it was compiled for; compile with "
             "target tvm.target.detect_target_from_device(tvm.cuda("
          << dev_id << ")), or ship PTX (PTX needs a driver at least as new as the NVRTC that "
          << "produced it)";
    }
    return mod;
  }

 private:
  static std::string ArchOf(int dev_id) {
    int major = 0, minor = 0;
    if (Driver().cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                      dev_id) != CUDA_SUCCESS) {
      return "sm_unknown";
    }
    Driver().cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_id);
    return "sm_" + std::to_string(major) + std::to_string(minor);
  }

  /*! \brief The "cu" payload compiled for the device's architecture through the Python hook. */
  std::string CompileSource(int dev_id) {
    std::string arch = ArchOf(dev_id);
    auto it = compiled_.find(arch);
    if (it != compiled_.end()) return it->second;
    auto hook = ffi::Function::GetGlobal("tvm_backend_cuda.nvrtc_compile");
    if (!hook.has_value()) {
      TVM_FFI_THROW(RuntimeError)
          << "this cuda module holds CUDA C source (it was built where NVRTC was unavailable) and "
             "must be compiled on first use, but the NVRTC hook is not registered: import "
             "tvm_backend_cuda (tvm.backend.load('cuda')) and pip install nvidia-cuda-nvrtc";
    }
    ffi::Bytes out = (*hook)(ffi::String(spec_.payload), ffi::String(arch)).cast<ffi::Bytes>();
    return compiled_[arch] = std::string(out.data(), out.size());
  }

  std::map<std::string, std::string> compiled_;  // image per architecture of a "cu" payload
};
}  // namespace

void RegisterModuleFactories() {
  tvm::runtime::RegisterDeviceModuleKind("cuda", [](DeviceModuleSpec spec) {
    return ffi::Module(ffi::make_object<CUDAModuleObj>(std::move(spec)));
  });
}

}  // namespace tvm_backend_cuda
