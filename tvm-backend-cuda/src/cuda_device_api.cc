/*!
 * \file cuda_device_api.cc
 * \brief DeviceAPI for kDLCUDA on the driver API: attributes, memory, copies, streams.
 *
 * Every call first makes the device's primary context current, so memory and streams are
 * shared with the CUDA runtime users in the same process (PyTorch, CuPy).
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_attributes.h>
#include <tvm/runtime/owned_streams.h>

#include "cuda_driver.h"

namespace tvm_backend_cuda {

namespace {
using tvm::ffi::Any;
using tvm::runtime::DeviceAPI;

class CUDADeviceAPI final : public DeviceAPI {
 public:
  Any GetAttr(DLDevice dev, const std::string& key) final {
    if (key == "exist") return dev.device_id >= 0 && dev.device_id < DeviceCount();
    if (dev.device_id < 0 || dev.device_id >= DeviceCount()) return Any();
    CUdevice d;
    TVM_CUDA_CALL(Driver().cuDeviceGet(&d, dev.device_id));
    if (key == "name") {
      char name[256] = {0};
      TVM_CUDA_CALL(Driver().cuDeviceGetName(name, sizeof(name) - 1, d));
      return tvm::ffi::String(name);
    }
    static const tvm::runtime::IntegerAttributeCodes kCodes = [] {
      tvm::runtime::IntegerAttributeCodes c;
      c.max_threads_per_block = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
      c.warp_size = CU_DEVICE_ATTRIBUTE_WARP_SIZE;
      c.max_shared_memory_per_block = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK;
      c.max_shared_memory_per_block_optin = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;
      c.multi_processor_count = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
      c.max_clock_rate = CU_DEVICE_ATTRIBUTE_CLOCK_RATE;
      c.compute_capability_major = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
      c.compute_capability_minor = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
      c.max_block_dim[0] = CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X;
      c.max_block_dim[1] = CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y;
      c.max_block_dim[2] = CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z;
      return c;
    }();
    auto value = tvm::runtime::IntegerDeviceAttribute(
        key, kCodes, [d](int code) { return DeviceAttribute(d, code); });
    if (value) return *value;
    if (key == "total_global_memory") {
      size_t bytes = 0;
      TVM_CUDA_CALL(Driver().cuDeviceTotalMem(&bytes, d));
      return static_cast<int64_t>(bytes);
    }
    if (key == "driver_version" || key == "api_version") {
      int v = 0;
      TVM_CUDA_CALL(Driver().cuDriverGetVersion(&v));
      return v;
    }
    return Any();
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) final {
    // cuMemAlloc aligns to at least 256 bytes.
    if (alignment > 256) {
      TVM_FFI_THROW(ValueError) << "CUDA allocations are 256-byte aligned; " << alignment
                                << " was requested";
    }
    SetDevice(dev.device_id);
    CUdeviceptr ptr = 0;
    CUresult r = Driver().cuMemAlloc(&ptr, nbytes == 0 ? 1 : nbytes);
    if (r != CUDA_SUCCESS) {
      TVM_FFI_THROW(RuntimeError) << "CUDA: allocating " << nbytes << " bytes on cuda("
                                  << dev.device_id << ") failed: " << ErrorString(r);
    }
    return reinterpret_cast<void*>(ptr);
  }

  void FreeDataSpace(DLDevice dev, void* ptr) final {
    if (ptr == nullptr) return;
    SetDevice(dev.device_id);
    CUresult r = Driver().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
    // At interpreter exit the driver may already be torn down: nothing left to free.
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_DEINITIALIZED) Check(r, "cuMemFree");
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final {
    if (nbytes == 0) return;
    CUstream s = static_cast<CUstream>(stream);
    const char* src = static_cast<const char*>(from) + from_offset;
    char* dst = static_cast<char*>(to) + to_offset;
    bool src_gpu = dev_from.device_type == kDLCUDA;
    bool dst_gpu = dev_to.device_type == kDLCUDA;
    auto dptr = [](const void* p) { return reinterpret_cast<CUdeviceptr>(p); };
    if (src_gpu && dst_gpu) {
      if (dev_from.device_id == dev_to.device_id) {
        SetDevice(dev_from.device_id);
        TVM_CUDA_CALL(Driver().cuMemcpyDtoDAsync(dptr(dst), dptr(src), nbytes, s));
      } else {
        CUcontext cfrom = SetDevice(dev_from.device_id);
        CUcontext cto = SetDevice(dev_to.device_id);
        TVM_CUDA_CALL(Driver().cuMemcpyPeerAsync(dptr(dst), cto, dptr(src), cfrom, nbytes, s));
      }
    } else if (src_gpu) {
      SetDevice(dev_from.device_id);
      TVM_CUDA_CALL(Driver().cuMemcpyDtoHAsync(dst, dptr(src), nbytes, s));
    } else if (dst_gpu) {
      SetDevice(dev_to.device_id);
      TVM_CUDA_CALL(Driver().cuMemcpyHtoDAsync(dptr(dst), src, nbytes, s));
    } else {
      TVM_FFI_THROW(ValueError) << "CUDA copy called for two host buffers";
    }
  }

  TVMFFIStreamHandle CreateStream(DLDevice dev) final {
    SetDevice(dev.device_id);
    CUstream s = nullptr;
    TVM_CUDA_CALL(Driver().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    streams_.Add(dev, s);
    return s;
  }

  void FreeStream(DLDevice dev, TVMFFIStreamHandle stream) final {
    if (stream == nullptr) return;  // the default stream is never destroyed
    SetDevice(dev.device_id);
    streams_.Remove(dev, stream);
    TVM_CUDA_CALL(Driver().cuStreamDestroy(static_cast<CUstream>(stream)));
  }

  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) final {
    SetDevice(dev.device_id);
    streams_.CheckSyncable(dev, stream);
    TVM_CUDA_CALL(Driver().cuStreamSynchronize(static_cast<CUstream>(stream)));
  }

 private:
  tvm::runtime::OwnedStreams streams_;
};
}  // namespace

void RegisterDeviceAPI() {
  static CUDADeviceAPI* api = new CUDADeviceAPI();
  DeviceAPI::Register(kDLCUDA, api);
}

}  // namespace tvm_backend_cuda
