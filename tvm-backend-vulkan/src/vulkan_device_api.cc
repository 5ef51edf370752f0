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

}  // namespace

tvm::runtime::AttributeList AttributesOf(const PhysicalDeviceInfo& d) {
  const VkPhysicalDeviceLimits& lim = d.props.limits;
  const DeviceFeatures& f = d.features;
  return {
      {"name", ffi::String(d.name)},
      {"max_threads_per_block", int64_t{lim.maxComputeWorkGroupInvocations}},
      {"warp_size", int64_t{d.subgroup_size}},
      {"max_shared_memory_per_block", int64_t{lim.maxComputeSharedMemorySize}},
      {"compute_version", ffi::String(MajorMinor(d.props.apiVersion))},
      {"api_version", ffi::String(MajorMinor(d.props.apiVersion))},
      {"driver_version", ffi::String(DriverVersion(d.props))},
      {"max_thread_dimensions", Triple(lim.maxComputeWorkGroupSize)},
      {"total_global_memory", static_cast<int64_t>(d.device_local_bytes)},
      // Vulkan-specific.
      {"max_storage_buffer_range", int64_t{lim.maxStorageBufferRange}},
      {"max_push_constants_size", int64_t{lim.maxPushConstantsSize}},
      {"max_uniform_buffer_range", int64_t{lim.maxUniformBufferRange}},
      {"max_work_group_count", Triple(lim.maxComputeWorkGroupCount)},
      {"min_storage_buffer_offset_alignment",
       static_cast<int64_t>(lim.minStorageBufferOffsetAlignment)},
      {"max_memory_allocation_size", static_cast<int64_t>(d.max_allocation_size)},
      {"supports_float16", f.float16},
      {"supports_float64", f.float64},
      {"supports_int64", f.int64},
      {"supports_int8", f.int8},
      {"supports_int16", f.int16},
      {"supports_storage_buffer_8bit", f.storage_buffer_8bit},
      {"supports_storage_buffer_16bit", f.storage_buffer_16bit},
      {"supports_push_descriptor", f.push_descriptor},
      {"subgroup_operations", int64_t{f.subgroup_operations}},
      {"device_kind", ffi::String(DeviceKind(d.props.deviceType))},
  };
}

namespace {

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
    return tvm::runtime::FindAttribute(rt->Info(dev.device_id).attributes, key);
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t /*alignment*/) final {
    // Buffers start at the device's allocation granularity (far above any dtype's alignment).
    return Require("allocate memory on", dev.device_id)->Alloc(dev.device_id, nbytes);
  }

  void FreeDataSpace(DLDevice /*dev*/, void* ptr) final {
    // Never throws (called from tensor destructors); without a runtime nothing was allocated,
    // and in a forked child what the parent allocated is the parent's.
    if (VulkanRuntime* rt = VulkanRuntime::TryGlobal()) {
      rt->Free(ptr);
    } else if (ptr != nullptr && !VulkanRuntime::Forked()) {
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
