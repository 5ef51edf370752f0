/*!
 * \file vulkan_device_api.cc
 * \brief DeviceAPI for kDLVulkan: attributes (a table), buffers, copies, synchronization.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_api.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "vulkan_device.h"

namespace tvm_backend_vulkan {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceAPI;

namespace {

/*! \brief "1.3" for a VK_MAKE_API_VERSION value. */
std::string MajorMinor(uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
         std::to_string(VK_API_VERSION_MINOR(version));
}

/*! \brief The driver version in its vendor's encoding (NVIDIA packs 10.8.8.6 bits). */
std::string DriverVersion(const VkPhysicalDeviceProperties& p) {
  uint32_t v = p.driverVersion;
  if (p.vendorID == 0x10DE) {
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." +
           std::to_string((v >> 6) & 0xff);
  }
  return MajorMinor(v) + "." + std::to_string(VK_API_VERSION_PATCH(v));
}

const char* DeviceKind(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

ffi::Array<int64_t> Triple(const uint32_t* v) {
  ffi::Array<int64_t> out;
  for (int i = 0; i < 3; ++i) out.push_back(int64_t{v[i]});
  return out;
}

using Attr = ffi::Any (*)(const PhysicalDeviceInfo&);
using D = const PhysicalDeviceInfo&;

/*! \brief Every attribute of an existing device, by key ("exist" and "unavailable_reason" are
 *  answered before the table). */
const std::pair<const char*, Attr> kAttributes[] = {
    {"name", [](D d) -> ffi::Any { return ffi::String(d.name); }},
    {"max_threads_per_block",
     [](D d) -> ffi::Any { return int64_t{d.props.limits.maxComputeWorkGroupInvocations}; }},
    {"warp_size", [](D d) -> ffi::Any { return int64_t{d.subgroup_size}; }},
    {"max_shared_memory_per_block",
     [](D d) -> ffi::Any { return int64_t{d.props.limits.maxComputeSharedMemorySize}; }},
    {"compute_version",
     [](D d) -> ffi::Any { return ffi::String(MajorMinor(d.props.apiVersion)); }},
    {"api_version", [](D d) -> ffi::Any { return ffi::String(MajorMinor(d.props.apiVersion)); }},
    {"driver_version", [](D d) -> ffi::Any { return ffi::String(DriverVersion(d.props)); }},
    {"max_thread_dimensions",
     [](D d) -> ffi::Any { return Triple(d.props.limits.maxComputeWorkGroupSize); }},
    {"total_global_memory",
     [](D d) -> ffi::Any { return static_cast<int64_t>(d.device_local_bytes); }},
    // Vulkan-specific.
    {"max_storage_buffer_range",
     [](D d) -> ffi::Any { return int64_t{d.props.limits.maxStorageBufferRange}; }},
    {"max_push_constants_size",
     [](D d) -> ffi::Any { return int64_t{d.props.limits.maxPushConstantsSize}; }},
    {"max_uniform_buffer_range",
     [](D d) -> ffi::Any { return int64_t{d.props.limits.maxUniformBufferRange}; }},
    {"max_work_group_count",
     [](D d) -> ffi::Any { return Triple(d.props.limits.maxComputeWorkGroupCount); }},
    {"min_storage_buffer_offset_alignment",
     [](D d) -> ffi::Any {
       return static_cast<int64_t>(d.props.limits.minStorageBufferOffsetAlignment);
     }},
    {"max_memory_allocation_size",
     [](D d) -> ffi::Any { return static_cast<int64_t>(d.max_allocation_size); }},
    {"supports_float16", [](D d) -> ffi::Any { return d.features.float16; }},
    {"supports_float64", [](D d) -> ffi::Any { return d.features.float64; }},
    {"supports_int64", [](D d) -> ffi::Any { return d.features.int64; }},
    {"supports_int8", [](D d) -> ffi::Any { return d.features.int8; }},
    {"supports_int16", [](D d) -> ffi::Any { return d.features.int16; }},
    {"supports_storage_buffer_8bit",
     [](D d) -> ffi::Any { return d.features.storage_buffer_8bit; }},
    {"supports_storage_buffer_16bit",
     [](D d) -> ffi::Any { return d.features.storage_buffer_16bit; }},
    {"supports_push_descriptor", [](D d) -> ffi::Any { return d.features.push_descriptor; }},
    {"subgroup_operations",
     [](D d) -> ffi::Any { return int64_t{d.features.subgroup_operations}; }},
    {"device_kind", [](D d) -> ffi::Any { return ffi::String(DeviceKind(d.props.deviceType)); }},
};

/*! \brief The runtime for an operation on vulkan(`id`); throws naming `what` and the fix when
 *         this machine has no usable Vulkan device. */
VulkanRuntime* Require(const char* what, int id) {
  return VulkanRuntime::Global(std::string("cannot ") + what + " vulkan(" + std::to_string(id) +
                               ")");
}

/*!
 * \brief Buffers are VulkanBuffer records (the DLTensor data pointer is the record); memory is
 *  host-visible, so every copy is a memcpy after the pending kernels of every stream of the device
 *  have completed (a copy may touch buffers any stream uses). Streams are VulkanStream objects
 *  behind process-unique handles (vulkan_device.h); null is the device's default stream.
 */
class VulkanDeviceAPI final : public DeviceAPI {
 public:
  ffi::Any GetAttr(DLDevice dev, const std::string& key) final {
    // The first device query discovers the devices; without any, no device exists and every
    // attribute is None.
    std::string why;
    VulkanRuntime* rt = VulkanRuntime::TryGlobal(&why);
    if (key == "unavailable_reason") return ffi::String(why);
    bool exist = rt != nullptr && dev.device_id >= 0 && dev.device_id < rt->num_devices();
    if (key == "exist") return exist;
    if (!exist) return ffi::Any();
    for (const auto& entry : kAttributes) {
      if (key == entry.first) return entry.second(rt->Info(dev.device_id));
    }
    return ffi::Any();
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t /*alignment*/) final {
    // Buffers start at the device's allocation granularity (far above any dtype's alignment).
    return Require("allocate memory on", dev.device_id)->Alloc(dev.device_id, nbytes);
  }

  void FreeDataSpace(DLDevice /*dev*/, void* ptr) final {
    // Never throws (called from tensor destructors); without a runtime nothing was allocated.
    if (VulkanRuntime* rt = VulkanRuntime::TryGlobal()) {
      rt->Free(ptr);
    } else if (ptr != nullptr) {
      std::fprintf(stderr, "[tvm vulkan] warning: ignoring free of %p: no Vulkan device\n", ptr);
    }
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final;

  TVMFFIStreamHandle CreateStream(DLDevice dev) final {
    return Require("create a stream on", dev.device_id)->Device(dev.device_id).CreateStream();
  }

  void FreeStream(DLDevice dev, TVMFFIStreamHandle stream) final {
    Require("free a stream of", dev.device_id)->Device(dev.device_id).FreeStream(stream);
  }

  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) final {
    Require("synchronize", dev.device_id)->Device(dev.device_id).Stream(stream)->Sync();
  }
};

void VulkanDeviceAPI::CopyDataFromTo(const void* from, size_t from_offset, void* to,
                                     size_t to_offset, size_t nbytes, DLDevice dev_from,
                                     DLDevice dev_to, TVMFFIStreamHandle stream) {
  bool from_vk = dev_from.device_type == kDLVulkan;
  bool to_vk = dev_to.device_type == kDLVulkan;
  if (!from_vk && !to_vk) {
    TVM_FFI_THROW(ValueError) << "the Vulkan DeviceAPI was asked to copy between "
                              << tvm::runtime::DeviceTypeName(dev_from.device_type) << " and "
                              << tvm::runtime::DeviceTypeName(dev_to.device_type);
  }
  if (nbytes == 0) return;
  VulkanRuntime* rt =
      Require(from_vk ? "copy from" : "copy to", from_vk ? dev_from.device_id : dev_to.device_id);
  const char* src = static_cast<const char*>(from) + from_offset;
  char* dst = static_cast<char*>(to) + to_offset;
  if (stream != nullptr) {  // a copy is synchronous on every stream, but the handle must be live
    int id = from_vk ? dev_from.device_id : dev_to.device_id;
    rt->Device(id).Stream(stream);
  }
  // Kernels queued on any stream of either device may read or write these buffers: finish them
  // all first (the next submission makes the host's writes visible to the device).
  if (from_vk) {
    VulkanBuffer* buf = rt->buffers().CopyRecord<VulkanBuffer>(from, from_offset, nbytes, "source");
    rt->Device(buf->device_id).Sync();
    src = buf->host + from_offset;
  }
  if (to_vk) {
    VulkanBuffer* buf =
        rt->buffers().CopyRecord<VulkanBuffer>(to, to_offset, nbytes, "destination");
    if (!from_vk ||
        buf->device_id != static_cast<VulkanBuffer*>(const_cast<void*>(from))->device_id) {
      rt->Device(buf->device_id).Sync();
    }
    dst = buf->host + to_offset;
  }
  std::memmove(dst, src, nbytes);
}

}  // namespace

DeviceAPI* GlobalDeviceAPI() {
  static auto* inst = new VulkanDeviceAPI();  // must outlive the process (DeviceAPI::Register)
  return inst;
}

}  // namespace tvm_backend_vulkan
