/*!
 * \file cuda_init.cc
 * \brief TVMBackendInit of libtvm_runtime_cuda: loads libcuda and registers its calls behind the
 *        kit's GPUDriver verbs (GPUDeviceAPI, the "cuda" module kind). Nothing is registered at
 *        dlopen time, so a machine without the NVIDIA driver gets the core's fallback loader.
 *        Every device is used through its primary context: the one the CUDA runtime (and so
 *        PyTorch, CuPy) uses, so pointers and streams are shared with them.
 */
#include <tvm/runtime/base.h>

#include "cuda_driver.h"

#include <array>
#include <mutex>

namespace tvm_backend_cuda {
void RegisterModuleFactories();

namespace {
using tvm::runtime::KernelArgPack;
using tvm::runtime::LaunchConfig;

DriverAPI g_api{};
int g_count = 0;
constexpr CUresult kInvalidDevice = 101;  // CUDA_ERROR_INVALID_DEVICE

CUdeviceptr Address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

class CUDADriver final : public tvm::runtime::GPUDriver {
 public:
  CUDADriver() : GPUDriver(kDLCUDA, "cuda", "CUDA") {
    codes_.max_threads_per_block = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
    codes_.warp_size = CU_DEVICE_ATTRIBUTE_WARP_SIZE;
    codes_.max_shared_memory_per_block = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK;
    codes_.max_shared_memory_per_block_optin =
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;
    codes_.multi_processor_count = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
    codes_.max_clock_rate = CU_DEVICE_ATTRIBUTE_CLOCK_RATE;
    codes_.compute_capability_major = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
    codes_.compute_capability_minor = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
    codes_.SetDimensions(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  }

  int DeviceCount() final { return g_count; }

  std::string ErrorString(int r) final {
    const char* name = nullptr;
    const char* desc = nullptr;
    if (g_api.cuGetErrorName) g_api.cuGetErrorName(r, &name);
    if (g_api.cuGetErrorString) g_api.cuGetErrorString(r, &desc);
    std::string out = name ? name : "CUresult " + std::to_string(r);
    return desc ? out + " (" + desc + ")" : out;
  }

  bool IsDeinitialized(int r) final { return r == CUDA_ERROR_DEINITIALIZED; }

  int MakeCurrent(int dev_id) final {
    CUcontext ctx = nullptr, cur = nullptr;
    CUresult r = Context(dev_id, &ctx);
    if (r == CUDA_SUCCESS) r = g_api.cuCtxGetCurrent(&cur);
    return r != CUDA_SUCCESS || cur == ctx ? r : g_api.cuCtxSetCurrent(ctx);
  }

  int DeviceName(int dev_id, std::string* name) final {
    char buf[256] = {0};
    CUresult r = g_api.cuDeviceGetName(buf, sizeof(buf) - 1, dev_id);
    *name = buf;
    return r;
  }

  int Attribute(int dev_id, int code, int* value) final {
    return g_api.cuDeviceGetAttribute(value, code, dev_id);
  }
  int TotalMemory(int dev_id, size_t* bytes) final { return g_api.cuDeviceTotalMem(bytes, dev_id); }
  int DriverVersion(int* version) final { return g_api.cuDriverGetVersion(version); }

  int Allocate(size_t nbytes, void** ptr) final {
    CUdeviceptr p = 0;
    CUresult r = g_api.cuMemAlloc(&p, nbytes);
    *ptr = reinterpret_cast<void*>(p);
    return r;
  }
  int Free(void* ptr) final { return g_api.cuMemFree(Address(ptr)); }

  int CopyAsync(void* dst, const void* src, size_t n, DLDevice from, DLDevice to,
                void* stream) final {
    CUstream s = static_cast<CUstream>(stream);
    bool src_gpu = from.device_type == kDLCUDA, dst_gpu = to.device_type == kDLCUDA;
    if (src_gpu && dst_gpu && from.device_id != to.device_id) {
      CUcontext cfrom = nullptr, cto = nullptr;
      CUresult r = Context(from.device_id, &cfrom);
      if (r == CUDA_SUCCESS) r = Context(to.device_id, &cto);
      return r != CUDA_SUCCESS
                 ? r
                 : g_api.cuMemcpyPeerAsync(Address(dst), cto, Address(src), cfrom, n, s);
    }
    if (src_gpu && dst_gpu) return g_api.cuMemcpyDtoDAsync(Address(dst), Address(src), n, s);
    if (src_gpu) return g_api.cuMemcpyDtoHAsync(dst, Address(src), n, s);
    return g_api.cuMemcpyHtoDAsync(Address(dst), src, n, s);
  }

  // A blocking stream: work on the default stream waits for it and it waits for the default
  // stream's, so a copy sees what every stream wrote (a non-blocking one raced with copies).
  int CreateStream(void** stream) final {
    return g_api.cuStreamCreate(reinterpret_cast<CUstream*>(stream), CU_STREAM_DEFAULT);
  }
  int DestroyStream(void* s) final { return g_api.cuStreamDestroy(static_cast<CUstream>(s)); }
  int SyncStream(void* s) final { return g_api.cuStreamSynchronize(static_cast<CUstream>(s)); }

  int UnloadModule(void* m) final { return g_api.cuModuleUnload(static_cast<CUmodule>(m)); }
  int GetFunction(void* m, const char* name, void** f) final {
    return g_api.cuModuleGetFunction(reinterpret_cast<CUfunction*>(f), static_cast<CUmodule>(m),
                                     name);
  }

  int Launch(void* f, const LaunchConfig& cfg, void* stream, KernelArgPack* args) final {
    auto u = [](int64_t v) { return static_cast<unsigned>(v); };
    return g_api.cuLaunchKernel(static_cast<CUfunction>(f), u(cfg.grid[0]), u(cfg.grid[1]),
                                u(cfg.grid[2]), u(cfg.block[0]), u(cfg.block[1]), u(cfg.block[2]),
                                u(cfg.dyn_shmem_bytes), static_cast<CUstream>(stream),
                                args->Params(), nullptr);
  }

  int64_t DefaultSharedMemoryLimit() final { return 48 * 1024; }
  int RaiseSharedMemoryLimit(void* f, int64_t bytes) final {
    return g_api.cuFuncSetAttribute(static_cast<CUfunction>(f),
                                    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(bytes));
  }

  int DeviceOfPointer(const void* ptr) final {
    int ordinal = -1;
    CUresult r =
        g_api.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, Address(ptr));
    return r == CUDA_SUCCESS ? ordinal : -1;
  }

 private:
  /*! \brief The primary context of `dev_id`, retained on first use. */
  CUresult Context(int dev_id, CUcontext* ctx) {
    if (dev_id < 0 || dev_id >= g_count || dev_id >= tvm::runtime::kMaxGPUDevices) {
      return kInvalidDevice;
    }
    std::lock_guard<std::mutex> lock(mu_);
    CUresult r = CUDA_SUCCESS;
    if (primary_[dev_id] == nullptr) {
      CUdevice dev;
      r = g_api.cuDeviceGet(&dev, dev_id);
      if (r == CUDA_SUCCESS) r = g_api.cuDevicePrimaryCtxRetain(&primary_[dev_id], dev);
    }
    *ctx = primary_[dev_id];
    return r;
  }

  std::mutex mu_;
  std::array<CUcontext, tvm::runtime::kMaxGPUDevices> primary_{};
};

int CUDABackendInit(char* err, int err_len) {
  std::string why = LoadDriver();
  if (!why.empty()) return tvm::runtime::BackendInitFailed(err, err_len, why);
  static auto* api = new tvm::runtime::GPUDeviceAPI(&CUDA());
  tvm::runtime::DeviceAPI::Register(kDLCUDA, api);
  RegisterModuleFactories();
  return 0;
}
}  // namespace

std::string LoadDriver() {
  if (g_count > 0) return "";
  DriverAPI api{};
  std::string why = tvm::runtime::LoadDriver(&api, {{"libcuda.so.1"},
                                                    "TVM_CUDA_DRIVER",
                                                    "no NVIDIA driver on this machine",
                                                    "it is too old or not NVIDIA's driver"});
  if (!why.empty()) return why;
  g_api = api;  // error strings work even when cuInit fails
  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    return "cuInit failed: " + CUDA().ErrorString(r) +
           " (the NVIDIA driver is installed but no usable GPU)";
  }
  int count = 0;
  r = api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) return "the NVIDIA driver reports no CUDA device";
  g_count = count;
  return "";
}

const DriverAPI& Driver() { return g_api; }

tvm::runtime::GPUDriver& CUDA() {
  static CUDADriver* driver = new CUDADriver();  // never destroyed: modules may outlive exit
  return *driver;
}

}  // namespace tvm_backend_cuda

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_cuda::CUDABackendInit)
