/*!
 * \file rocm_init.cc
 * \brief Loading the HIP runtime, its calls behind the kit's GPUDriver verbs, and TVMBackendInit.
 */
#include <tvm/ffi/error.h>
#include <tvm/runtime/base.h>

#include "rocm_hip.h"

namespace tvm_backend_rocm {
void RegisterModuleFactories();

namespace {
using tvm::runtime::KernelArgPack;
using tvm::runtime::LaunchConfig;

HIPAPI g_api{};
int g_count = 0;

class ROCmDriver final : public tvm::runtime::GPUDriver {
 public:
  ROCmDriver() : GPUDriver(kDLROCM, "rocm", "ROCm") {
    codes_.max_threads_per_block = hipDeviceAttributeMaxThreadsPerBlock;
    codes_.warp_size = hipDeviceAttributeWarpSize;
    codes_.max_shared_memory_per_block = hipDeviceAttributeMaxSharedMemoryPerBlock;
    codes_.multi_processor_count = hipDeviceAttributeMultiprocessorCount;
    codes_.max_clock_rate = hipDeviceAttributeClockRate;
    codes_.compute_capability_major = hipDeviceAttributeComputeCapabilityMajor;
    codes_.compute_capability_minor = hipDeviceAttributeComputeCapabilityMinor;
    codes_.SetDimensions(hipDeviceAttributeMaxBlockDimX, hipDeviceAttributeMaxGridDimX);
  }

  int DeviceCount() final { return g_count; }

  std::string ErrorString(int r) final {
    const char* name = g_api.hipGetErrorName ? g_api.hipGetErrorName(r) : nullptr;
    const char* desc = g_api.hipGetErrorString ? g_api.hipGetErrorString(r) : nullptr;
    std::string out = name ? name : "hipError_t " + std::to_string(r);
    return desc ? out + " (" + desc + ")" : out;
  }

  bool IsDeinitialized(int r) final { return r == hipErrorDeinitialized; }
  int MakeCurrent(int dev_id) final { return g_api.hipSetDevice(dev_id); }

  int DeviceName(int dev_id, std::string* name) final {
    char buf[256] = {0};
    hipError_t r = g_api.hipDeviceGetName(buf, sizeof(buf) - 1, dev_id);
    *name = buf;
    return r;
  }

  int Attribute(int dev_id, int code, int* value) final {
    return g_api.hipDeviceGetAttribute(value, code, dev_id);
  }
  int TotalMemory(int dev_id, size_t* bytes) final {
    return g_api.hipDeviceTotalMem(bytes, dev_id);
  }
  int DriverVersion(int* version) final { return g_api.hipDriverGetVersion(version); }
  int Allocate(size_t nbytes, void** ptr) final { return g_api.hipMalloc(ptr, nbytes); }
  int Free(void* ptr) final { return g_api.hipFree(ptr); }

  int CopyAsync(void* dst, const void* src, size_t n, DLDevice, DLDevice, void* stream) final {
    return g_api.hipMemcpyAsync(dst, src, n, hipMemcpyDefault, static_cast<hipStream_t>(stream));
  }

  // A blocking stream, as on CUDA: the default stream and it wait for each other's work, so a
  // copy sees what every stream wrote.
  int CreateStream(void** stream) final {
    return g_api.hipStreamCreateWithFlags(reinterpret_cast<hipStream_t*>(stream), hipStreamDefault);
  }
  int DestroyStream(void* s) final { return g_api.hipStreamDestroy(static_cast<hipStream_t>(s)); }
  int SyncStream(void* s) final { return g_api.hipStreamSynchronize(static_cast<hipStream_t>(s)); }

  int UnloadModule(void* m) final {
    return g_api.hipModuleUnload ? g_api.hipModuleUnload(static_cast<hipModule_t>(m)) : 0;
  }
  int GetFunction(void* m, const char* name, void** f) final {
    return g_api.hipModuleGetFunction(reinterpret_cast<hipFunction_t*>(f),
                                      static_cast<hipModule_t>(m), name);
  }

  /*! \brief The arguments go in one buffer laid out as the code object's kernarg segment. */
  int Launch(void* f, const LaunchConfig& cfg, void* stream, KernelArgPack* args) final {
    std::vector<char> buffer = args->Packed();
    size_t size = buffer.size();
    void* extra[] = {kLaunchParamBufferPointer, buffer.data(), kLaunchParamBufferSize, &size,
                     kLaunchParamEnd};
    auto u = [](int64_t v) { return static_cast<unsigned>(v); };
    return g_api.hipModuleLaunchKernel(static_cast<hipFunction_t>(f), u(cfg.grid[0]),
                                       u(cfg.grid[1]), u(cfg.grid[2]), u(cfg.block[0]),
                                       u(cfg.block[1]), u(cfg.block[2]), u(cfg.dyn_shmem_bytes),
                                       static_cast<hipStream_t>(stream), nullptr, extra);
  }
};

int ROCmBackendInit(char* err, int err_len) {
  std::string why = LoadHIP();
  if (!why.empty()) return tvm::runtime::BackendInitFailed(err, err_len, why);
  static auto* api = new tvm::runtime::GPUDeviceAPI(&ROCm());
  tvm::runtime::DeviceAPI::Register(kDLROCM, api);
  RegisterModuleFactories();
  return 0;
}
}  // namespace

std::string LoadHIP() {
  HIPAPI api{};
  std::string why = tvm::runtime::LoadDriver(
      &api, {{"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", "libamdhip64.so.7"},
             "TVM_ROCM_LIBRARY",
             "no ROCm installation on this machine",
             "it is not a HIP runtime this backend can use"});
  if (!why.empty()) return why;
  g_api = api;  // error strings work even when hipInit fails
  hipError_t r = api.hipInit(0);
  if (r != hipSuccess) {
    return "hipInit failed: " + ROCm().ErrorString(r) + " (ROCm is installed but no usable GPU)";
  }
  int count = 0;
  r = api.hipGetDeviceCount(&count);
  if (r != hipSuccess || count == 0) return "the HIP runtime reports no AMD GPU";
  g_count = count;
  return "";
}

const HIPAPI& HIP() { return g_api; }

tvm::runtime::GPUDriver& ROCm() {
  static ROCmDriver* driver = new ROCmDriver();  // never destroyed: modules may outlive exit
  return *driver;
}

}  // namespace tvm_backend_rocm

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_rocm::ROCmBackendInit)
