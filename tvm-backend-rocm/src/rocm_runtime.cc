/*!
 * \file rocm_runtime.cc
 * \brief Loading the HIP runtime, the DeviceAPI for kDLROCM, and TVMBackendInit.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/runtime/base.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_attributes.h>
#include <tvm/runtime/owned_streams.h>

#include "rocm_hip.h"

namespace tvm_backend_rocm {
void RegisterModuleFactories();

namespace {
HIPAPI g_api{};
int g_count = 0;
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
  if (r != hipSuccess)
    return "hipInit failed: " + ErrorString(r) + " (ROCm is installed but no usable GPU)";
  int count = 0;
  r = api.hipGetDeviceCount(&count);
  if (r != hipSuccess || count == 0) return "the HIP runtime reports no AMD GPU";
  g_count = count;
  return "";
}

const HIPAPI& HIP() { return g_api; }

std::string ErrorString(hipError_t r) {
  const char* name = g_api.hipGetErrorName ? g_api.hipGetErrorName(r) : nullptr;
  const char* desc = g_api.hipGetErrorString ? g_api.hipGetErrorString(r) : nullptr;
  std::string out = name ? name : "hipError_t " + std::to_string(r);
  if (desc) out += std::string(" (") + desc + ")";
  return out;
}

void Check(hipError_t r, const char* what) {
  if (r != hipSuccess)
    TVM_FFI_THROW(RuntimeError) << "ROCm: " << what << " failed: " << ErrorString(r);
}

int DeviceCount() { return g_count; }

void SetDevice(int dev_id) {
  if (dev_id < 0 || dev_id >= kMaxDevices || dev_id >= g_count) {
    TVM_FFI_THROW(ValueError) << "rocm(" << dev_id << ") does not exist: this machine has "
                              << g_count << " AMD GPU(s)";
  }
  TVM_HIP_CALL(HIP().hipSetDevice(dev_id));
}

namespace {
using tvm::ffi::Any;
using tvm::runtime::DeviceAPI;

int Attribute(int dev, int attr) {
  int v = 0;
  TVM_HIP_CALL(HIP().hipDeviceGetAttribute(&v, attr, dev));
  return v;
}

/*! \brief kDLROCM devices: attributes from hipDeviceGetAttribute, memory, copies, streams. */
class ROCmDeviceAPI final : public DeviceAPI {
 public:
  Any GetAttr(DLDevice dev, const std::string& key) final {
    int d = dev.device_id;
    if (key == "exist") return d >= 0 && d < DeviceCount();
    if (d < 0 || d >= DeviceCount()) return Any();
    if (key == "name") {
      char name[256] = {0};
      TVM_HIP_CALL(HIP().hipDeviceGetName(name, sizeof(name) - 1, d));
      return tvm::ffi::String(name);
    }
    static const tvm::runtime::IntegerAttributeCodes kCodes = [] {
      tvm::runtime::IntegerAttributeCodes c;
      c.max_threads_per_block = hipDeviceAttributeMaxThreadsPerBlock;
      c.warp_size = hipDeviceAttributeWarpSize;
      c.max_shared_memory_per_block = hipDeviceAttributeMaxSharedMemoryPerBlock;
      c.multi_processor_count = hipDeviceAttributeMultiprocessorCount;
      c.max_clock_rate = hipDeviceAttributeClockRate;
      c.compute_capability_major = hipDeviceAttributeComputeCapabilityMajor;
      c.compute_capability_minor = hipDeviceAttributeComputeCapabilityMinor;
      c.max_block_dim[0] = hipDeviceAttributeMaxBlockDimX;
      c.max_block_dim[1] = hipDeviceAttributeMaxBlockDimY;
      c.max_block_dim[2] = hipDeviceAttributeMaxBlockDimZ;
      return c;
    }();
    auto value = tvm::runtime::IntegerDeviceAttribute(key, kCodes,
                                                      [d](int code) { return Attribute(d, code); });
    if (value) return *value;
    if (key == "total_global_memory") {
      size_t bytes = 0;
      TVM_HIP_CALL(HIP().hipDeviceTotalMem(&bytes, d));
      return static_cast<int64_t>(bytes);
    }
    if (key == "driver_version" || key == "api_version") {
      int v = 0;
      TVM_HIP_CALL(HIP().hipDriverGetVersion(&v));
      return v;
    }
    if (key == "unavailable_reason") return tvm::ffi::String("");
    return Any();
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) final {
    if (alignment > 256) {
      TVM_FFI_THROW(ValueError) << "ROCm allocations are 256-byte aligned; " << alignment
                                << " was requested";
    }
    SetDevice(dev.device_id);
    void* ptr = nullptr;
    hipError_t r = HIP().hipMalloc(&ptr, nbytes == 0 ? 1 : nbytes);
    if (r != hipSuccess) {
      TVM_FFI_THROW(RuntimeError) << "ROCm: allocating " << nbytes << " bytes on rocm("
                                  << dev.device_id << ") failed: " << ErrorString(r);
    }
    return ptr;
  }

  void FreeDataSpace(DLDevice dev, void* ptr) final {
    if (ptr == nullptr) return;
    SetDevice(dev.device_id);
    hipError_t r = HIP().hipFree(ptr);
    if (r != hipSuccess && r != hipErrorDeinitialized) Check(r, "hipFree");
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final {
    if (nbytes == 0) return;
    bool src_gpu = dev_from.device_type == kDLROCM, dst_gpu = dev_to.device_type == kDLROCM;
    if (!src_gpu && !dst_gpu) TVM_FFI_THROW(ValueError) << "ROCm copy called for two host buffers";
    SetDevice(src_gpu ? dev_from.device_id : dev_to.device_id);
    TVM_HIP_CALL(HIP().hipMemcpyAsync(static_cast<char*>(to) + to_offset,
                                      static_cast<const char*>(from) + from_offset, nbytes,
                                      hipMemcpyDefault, static_cast<hipStream_t>(stream)));
  }

  TVMFFIStreamHandle CreateStream(DLDevice dev) final {
    SetDevice(dev.device_id);
    hipStream_t s = nullptr;
    TVM_HIP_CALL(HIP().hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    streams_.Add(dev, s);
    return s;
  }

  void FreeStream(DLDevice dev, TVMFFIStreamHandle stream) final {
    if (stream == nullptr) return;
    SetDevice(dev.device_id);
    streams_.Remove(dev, stream);
    TVM_HIP_CALL(HIP().hipStreamDestroy(static_cast<hipStream_t>(stream)));
  }

  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) final {
    SetDevice(dev.device_id);
    streams_.CheckSyncable(dev, stream);
    TVM_HIP_CALL(HIP().hipStreamSynchronize(static_cast<hipStream_t>(stream)));
  }

 private:
  tvm::runtime::OwnedStreams streams_;
};

int ROCmBackendInit(char* err, int err_len) {
  std::string why = LoadHIP();
  if (!why.empty()) return tvm::runtime::BackendInitFailed(err, err_len, why);
  static ROCmDeviceAPI* api = new ROCmDeviceAPI();
  DeviceAPI::Register(kDLROCM, api);
  RegisterModuleFactories();
  return 0;
}

}  // namespace
}  // namespace tvm_backend_rocm

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_rocm::ROCmBackendInit)
