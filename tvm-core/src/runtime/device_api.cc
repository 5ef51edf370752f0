/*!
 * \file device_api.cc
 * \brief DeviceAPI registry, the CPU DeviceAPI, and the device/tensor functions the Python
 *        package calls (attributes, empty, copies, stream sync).
 */
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/fork_guard.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>
#include <algorithm>
#include <limits>
#include <mutex>
#include <map>
#include <thread>

extern "C" TVM_RUNTIME_DLL int TVMRuntimeABIVersion() { return TVM_RUNTIME_ABI_VERSION; }

namespace tvm {
namespace runtime {

namespace {
constexpr int kMaxDeviceType = 64;

struct Registry {
  std::mutex mu;
  std::array<DeviceAPI*, kMaxDeviceType> apis{};
  std::array<std::string, kMaxDeviceType> names{};  // registered by backends' activation
  static Registry* Global() {
    static Registry* inst = [] {
      auto* reg = new Registry();
      HoldAcrossFork(&reg->mu);  // a child forked while a thread looks up a device would hang
      return reg;
    }();
    return inst;
  }
};

void CheckDeviceType(int device_type) {
  if (device_type < 0 || device_type >= kMaxDeviceType) {
    TVM_FFI_THROW(ValueError) << "invalid device type " << device_type;
  }
}
}  // namespace

int DeviceTypeOf(const std::string& name) {
  Registry* reg = Registry::Global();
  std::lock_guard<std::mutex> lock(reg->mu);
  for (int type = 0; type < kMaxDeviceType; ++type) {
    if (reg->names[type] == name) return type;
  }
  return -1;
}

std::string DeviceTypeName(int device_type) {
  if (device_type >= 0 && device_type < kMaxDeviceType) {
    Registry* reg = Registry::Global();
    std::lock_guard<std::mutex> lock(reg->mu);
    if (!reg->names[device_type].empty()) return reg->names[device_type];
  }
  switch (device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    case kDLCUDAHost:
      return "cuda_host";
    case kDLOpenCL:
      return "opencl";
    case kDLVulkan:
      return "vulkan";
    case kDLMetal:
      return "metal";
    case kDLVPI:
      return "vpi";
    case kDLROCM:
      return "rocm";
    case kDLExtDev:
      return "ext_dev";
    case kDLHexagon:
      return "hexagon";
    case kDLWebGPU:
      return "webgpu";
    default:
      return "device_type_" + std::to_string(device_type);
  }
}

DeviceAPI* DeviceAPI::Get(int device_type, bool allow_missing) {
  CheckDeviceType(device_type);
  Registry* reg = Registry::Global();
  DeviceAPI* api;
  {
    std::lock_guard<std::mutex> lock(reg->mu);
    api = reg->apis[device_type];
  }
  if (api == nullptr && !allow_missing) {
    TVM_FFI_THROW(RuntimeError) << "no runtime is registered for device type '"
                                << DeviceTypeName(device_type)
                                << "': install and load its backend (tvm.backend.list_backends() "
                                   "shows what is installed and why a backend did not load)";
  }
  return api;
}

void DeviceAPI::Register(int device_type, DeviceAPI* api) {
  CheckDeviceType(device_type);
  Registry* reg = Registry::Global();
  std::lock_guard<std::mutex> lock(reg->mu);
  reg->apis[device_type] = api;
}

HostMemoryDeviceAPI::HostMemoryDeviceAPI(std::string name, int num_devices, AttributeList attrs)
    : name_(std::move(name)), num_devices_(num_devices), attrs_(std::move(attrs)) {}

ffi::Any HostMemoryDeviceAPI::GetAttr(DLDevice dev, const std::string& key) {
  bool exist = dev.device_id >= 0 && dev.device_id < num_devices_;
  if (key == "exist") return exist;
  return exist ? FindAttribute(attrs_, key) : ffi::Any();
}

void HostMemoryDeviceAPI::CheckDevice(DLDevice dev) const {
  if (dev.device_id < 0 || dev.device_id >= num_devices_) {
    TVM_FFI_THROW(ValueError) << name_ << " device " << dev.device_id << " does not exist (have "
                              << num_devices_ << ")";
  }
}

namespace {
/*! \brief The allocations of every host-memory device still live, by address, with the bytes
 *  asked for (freeing anything else would abort the process or corrupt the heap; a copy or a
 *  kernel past the bytes would too). */
struct LiveHostAllocations {
  std::mutex mu;
  std::map<uintptr_t, size_t> live;
};
LiveHostAllocations& HostAllocations() {
  static auto* table = [] {
    auto* t = new LiveHostAllocations();  // used until the process ends
    HoldAcrossFork(&t->mu);
    return t;
  }();
  return *table;
}
}  // namespace

void* HostMemoryDeviceAPI::AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) {
  CheckDevice(dev);
  if (alignment < 64) alignment = 64;
  size_t rounded = (nbytes + alignment - 1) / alignment * alignment;
  void* ptr = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (ptr == nullptr) {
    TVM_FFI_THROW(RuntimeError) << name_ << ": out of host memory allocating " << nbytes
                                << " bytes";
  }
  std::lock_guard<std::mutex> lock(HostAllocations().mu);
  HostAllocations().live[reinterpret_cast<uintptr_t>(ptr)] = nbytes;
  return ptr;
}

size_t HostMemoryDeviceAPI::LiveBytesFrom(const void* ptr) const {
  auto at = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(HostAllocations().mu);
  auto& live = HostAllocations().live;
  auto it = live.upper_bound(at);
  if (it == live.begin()) return 0;
  --it;
  size_t into = at - it->first;
  return into < it->second ? it->second - into : 0;
}

void HostMemoryDeviceAPI::CheckCopyRange(const void* ptr, size_t offset, size_t nbytes,
                                         const char* role) const {
  size_t live = LiveBytesFrom(ptr);
  if (live == 0) {
    TVM_FFI_THROW(ValueError) << "copy " << role << " " << ptr << " is not live " << name_
                              << " device memory allocated by TVM";
  }
  if (offset > live || nbytes > live - offset) {
    TVM_FFI_THROW(ValueError) << "copy " << role << " range [" << offset << ", " << offset + nbytes
                              << ") is outside the " << live << " bytes of live " << name_
                              << " memory from " << ptr;
  }
}

void HostMemoryDeviceAPI::FreeDataSpace(DLDevice, void* ptr) {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(HostAllocations().mu);
    if (HostAllocations().live.erase(reinterpret_cast<uintptr_t>(ptr)) == 0) {
      std::fprintf(stderr,
                   "[tvm %s] warning: freeing %p, which is no live allocation of this device "
                   "(freed already, or never allocated here); ignored\n",
                   name_.c_str(), ptr);
      return;
    }
  }
  std::free(ptr);
}

void DeviceAPI::FreeStream(DLDevice dev, TVMFFIStreamHandle stream) {
  if (stream != nullptr) {
    TVM_FFI_THROW(ValueError) << DeviceTypeName(dev.device_type) << ": stream " << stream
                              << " is no stream of this device (it has none; use null)";
  }
}

void HostMemoryDeviceAPI::FreeStream(DLDevice dev, TVMFFIStreamHandle stream) {
  CheckDevice(dev);
  DeviceAPI::FreeStream(dev, stream);
}

void HostMemoryDeviceAPI::StreamSync(DLDevice dev, TVMFFIStreamHandle) {
  // Work on a host-memory device is done when its call returns, whatever stream a caller made
  // current (tvm_ffi.use_raw_stream): there is nothing to wait for.
  CheckDevice(dev);
}

void HostMemoryDeviceAPI::CopyDataFromTo(const void* from, size_t from_offset, void* to,
                                         size_t to_offset, size_t nbytes, DLDevice dev_from,
                                         DLDevice dev_to, TVMFFIStreamHandle) {
  auto on_device = [](DLDevice dev) {
    return dev.device_type != kDLCPU && dev.device_type != kDLCUDAHost;
  };
  if (nbytes == 0) return;
  if (on_device(dev_from)) CheckCopyRange(from, from_offset, nbytes, "source");
  if (on_device(dev_to)) CheckCopyRange(to, to_offset, nbytes, "destination");
  // memmove: the two sides may be views of one allocation that overlap
  std::memmove(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset,
               nbytes);
}

namespace {
/*! \brief The device of a registered function's (type, id) arguments, refusing ids past int32
 *  (they were truncated: 2**32 meant device 0). */
DLDevice DeviceOf(int64_t device_type, int64_t device_id) {
  if (device_id < 0 || device_id > std::numeric_limits<int32_t>::max()) {
    TVM_FFI_THROW(ValueError) << "device id " << device_id << " does not exist";
  }
  if (device_type < 0 || device_type > std::numeric_limits<int32_t>::max()) {
    TVM_FFI_THROW(ValueError) << "device type " << device_type << " does not exist";
  }
  return DLDevice{static_cast<DLDeviceType>(device_type), static_cast<int32_t>(device_id)};
}

struct RegisterCPU {
  RegisterCPU() {
    static HostMemoryDeviceAPI cpu(
        "cpu", 1,
        {{"name", ffi::String("cpu")},
         {"multi_processor_count", static_cast<int64_t>(std::thread::hardware_concurrency())}});
    DeviceAPI::Register(kDLCPU, &cpu);
    DeviceAPI::Register(kDLCUDAHost, &cpu);
  }
} register_cpu_;

/*! \brief Allocator used by ffi::Tensor::FromNDAlloc for any registered device. */
struct DeviceNDAlloc {
  DeviceAPI* api;
  void AllocData(DLTensor* t) {
    t->data = api->AllocDataSpace(t->device, ffi::GetDataSize(*t), 64);
  }
  void FreeData(DLTensor* t) {
    if (t->data == nullptr) return;
    // Called while a tensor is destroyed, where an exception would end the process: a driver
    // that cannot free (a device lost, a context broken by a faulting kernel) is reported.
    try {
      api->FreeDataSpace(t->device, t->data);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[tvm] warning: freeing device memory of %s failed: %s\n",
                   DeviceTypeName(t->device.device_type).c_str(), e.what());
    }
  }
};

std::string ShapeStr(const DLTensor& t) {
  std::string s = "(";
  for (int i = 0; i < t.ndim; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + (t.ndim == 1 ? ",)" : ")");
}

/*!
 * \brief Copy between two contiguous tensors of equal shape and dtype on any two devices;
 * `bitcast` accepts another dtype of the same width (NumPy has no bfloat16: it lends uint16).
 */
void CopyTensor(const DLTensor* src, const DLTensor* dst, TVMFFIStreamHandle stream, bool bitcast) {
  size_t nbytes = ffi::GetDataSize(*src);
  bool same_shape =
      src->ndim == dst->ndim && std::equal(src->shape, src->shape + src->ndim, dst->shape);
  if (!same_shape) {
    TVM_FFI_THROW(ValueError) << "copy needs equal shapes: source " << ShapeStr(*src)
                              << " vs destination " << ShapeStr(*dst);
  }
  bool same_width = src->dtype.bits == dst->dtype.bits && src->dtype.lanes == dst->dtype.lanes;
  if (!same_width || (!bitcast && src->dtype.code != dst->dtype.code)) {
    TVM_FFI_THROW(TypeError) << "copy needs equal dtypes: source "
                             << ffi::DLDataTypeToString(src->dtype) << " vs destination "
                             << ffi::DLDataTypeToString(dst->dtype);
  }
  if (!ffi::IsContiguous(*src) || !ffi::IsContiguous(*dst)) {
    TVM_FFI_THROW(ValueError) << "copy needs contiguous tensors, but the "
                              << (ffi::IsContiguous(*src) ? "destination" : "source")
                              << " is a strided view; copy it into a contiguous array first "
                              << "(numpy.ascontiguousarray for NumPy data)";
  }
  if (nbytes == 0) return;
  DLDevice sdev = src->device, ddev = dst->device;
  DLDevice api_dev = sdev.device_type != kDLCPU ? sdev : ddev;
  DeviceAPI* api = DeviceAPI::Get(api_dev.device_type);
  if (sdev.device_type != kDLCPU && ddev.device_type != kDLCPU &&
      sdev.device_type != ddev.device_type) {
    // Between two different device kinds: go through the host.
    std::vector<char> tmp(nbytes);
    DLDevice cpu{kDLCPU, 0};
    DeviceAPI* dst_api = DeviceAPI::Get(ddev.device_type);  // api is the source's
    TVMFFIStreamHandle src_stream = DeviceAPI::CurrentStream(sdev),
                       dst_stream = DeviceAPI::CurrentStream(ddev);
    api->CopyDataFromTo(src->data, src->byte_offset, tmp.data(), 0, nbytes, sdev, cpu, src_stream);
    api->StreamSync(sdev, src_stream);
    dst_api->CopyDataFromTo(tmp.data(), 0, dst->data, dst->byte_offset, nbytes, cpu, ddev,
                            dst_stream);
    dst_api->StreamSync(ddev, dst_stream);
    return;
  }
  if (stream == nullptr) stream = DeviceAPI::CurrentStream(api_dev);
  api->CopyDataFromTo(src->data, src->byte_offset, dst->data, dst->byte_offset, nbytes, sdev, ddev,
                      stream);
}
}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("runtime.ABIVersion", []() -> int64_t { return TVM_RUNTIME_ABI_VERSION; })
      .def("runtime.SetDeviceName",
           [](int device_type, ffi::String name) {
             CheckDeviceType(device_type);
             Registry* reg = Registry::Global();
             std::lock_guard<std::mutex> lock(reg->mu);
             reg->names[device_type] = std::string(name);
           })
      .def("runtime.DeviceTypeOf", [](ffi::String name) { return DeviceTypeOf(std::string(name)); })
      .def("runtime.DeviceAPIRegistered",
           [](int device_type) { return DeviceAPI::Get(device_type, true) != nullptr; })
      .def("runtime.DeviceGetAttr",
           [](int device_type, int device_id, ffi::String key) -> ffi::Any {
             DeviceAPI* api = DeviceAPI::Get(device_type, true);
             if (api == nullptr) {
               if (key == "exist") return false;
               DeviceAPI::Get(device_type);  // throws the actionable error
             }
             return api->GetAttr(DLDevice{static_cast<DLDeviceType>(device_type), device_id},
                                 std::string(key));
           })
      .def("runtime.TensorEmpty",
           [](ffi::Shape shape, DLDataType dtype, DLDevice dev) {
             // Reject negative dimensions and sizes whose byte count overflows 64 bits.
             uint64_t elems = 1;
             const uint64_t limit = std::numeric_limits<int64_t>::max();
             for (int64_t d : shape) {
               if (d < 0) TVM_FFI_THROW(ValueError) << "negative dimension " << d << " in shape";
               if (d != 0 && elems > limit / static_cast<uint64_t>(d)) {
                 TVM_FFI_THROW(ValueError)
                     << "tensor shape is too large: the element count overflows";
               }
               elems *= static_cast<uint64_t>(d);
             }
             // in bits: the allocation is sized as elements * bits / 8 (bytes per element would
             // let 2**62 int8 elements through, whose size in bits wraps to 0)
             uint64_t bits_per_elem = static_cast<uint64_t>(dtype.bits) * dtype.lanes;
             if (bits_per_elem != 0 && elems > limit / bits_per_elem) {
               TVM_FFI_THROW(ValueError) << "tensor of " << elems << " elements of "
                                         << ffi::DLDataTypeToString(dtype) << " is too large: "
                                         << "its size in bytes overflows";
             }
             DeviceAPI* api = DeviceAPI::Get(dev.device_type);
             return ffi::Tensor::FromNDAlloc(DeviceNDAlloc{api}, shape, dtype, dev);
           })
      .def("runtime.TensorCopyFromTo",
           [](DLTensor* src, DLTensor* dst, bool bitcast, bool sync) {
             CopyTensor(src, dst, nullptr, bitcast);
             if (sync) {
               for (const DLTensor* t : {src, dst}) {
                 if (t->device.device_type != kDLCPU) {
                   DeviceAPI::Get(t->device.device_type)
                       ->StreamSync(t->device, DeviceAPI::CurrentStream(t->device));
                 }
               }
             }
           })
      .def("runtime.DeviceSync",
           [](DLDevice dev) {
             DeviceAPI::Get(dev.device_type)->StreamSync(dev, DeviceAPI::CurrentStream(dev));
           })
      .def("runtime.DeviceCreateStream",
           [](DLDevice dev) {
             return reinterpret_cast<int64_t>(DeviceAPI::Get(dev.device_type)->CreateStream(dev));
           })
      .def("runtime.DeviceFreeStream",
           [](DLDevice dev, int64_t stream) {
             DeviceAPI::Get(dev.device_type)
                 ->FreeStream(dev, reinterpret_cast<TVMFFIStreamHandle>(stream));
           })
      // Device memory the host code of a device function allocates for its kernels (a buffer
      // one kernel writes and the next reads), freed when the function returns.
      .def("runtime.DeviceAllocData",
           [](int64_t device_type, int64_t device_id, int64_t nbytes) -> void* {
             if (nbytes < 0) TVM_FFI_THROW(ValueError) << "cannot allocate " << nbytes << " bytes";
             DLDevice dev = DeviceOf(device_type, device_id);
             return DeviceAPI::Get(dev.device_type)
                 ->AllocDataSpace(dev, static_cast<size_t>(nbytes), 64);
           })
      .def("runtime.DeviceFreeData", [](int64_t device_type, int64_t device_id, void* ptr) {
        DLDevice dev = DeviceOf(device_type, device_id);
        DeviceAPI::Get(dev.device_type)->FreeDataSpace(dev, ptr);
      });
}

}  // namespace runtime
}  // namespace tvm
