/*!
 * \file webgpu_device_api.cc
 * \brief DeviceAPI for kDLWebGPU: attributes (a table), buffers, copies, synchronization.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_api.h>

#include <cstdio>
#include <string>
#include <utility>

#include "webgpu_runtime.h"

namespace tvm_backend_webgpu {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceAPI;

namespace {

std::string WgpuNativeVersion() {
  uint32_t v = api.GetVersion();
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xff) + "." +
         std::to_string((v >> 8) & 0xff);
}

/*! \brief Every attribute of the device, by key ("exist" and "unavailable_reason" come first). */
tvm::runtime::AttributeList AttributesOf(const WebGPUDevice& d) {
  const WGPULimits& lim = d.limits;
  return {
      {"name", ffi::String(d.name)},
      {"max_threads_per_block", int64_t{lim.maxComputeInvocationsPerWorkgroup}},
      {"warp_size", int64_t{1}},
      {"max_shared_memory_per_block", int64_t{lim.maxComputeWorkgroupStorageSize}},
      {"max_thread_dimensions", ffi::Array<int64_t>{int64_t{lim.maxComputeWorkgroupSizeX},
                                                    int64_t{lim.maxComputeWorkgroupSizeY},
                                                    int64_t{lim.maxComputeWorkgroupSizeZ}}},
      {"api_version", ffi::String("webgpu")},
      {"driver_version", ffi::String(WgpuNativeVersion())},
      {"total_global_memory", static_cast<int64_t>(lim.maxBufferSize)},
      // WebGPU-specific.
      {"vendor", ffi::String(d.vendor)},
      {"architecture", ffi::String(d.architecture)},
      {"backend", ffi::String(d.backend)},
      {"supports_float16", d.has_f16},
      {"supports_subgroups", d.has_subgroups},
      {"subgroup_min_size", int64_t{d.subgroup_min_size}},
      {"subgroup_max_size", int64_t{d.subgroup_max_size}},
      {"max_storage_buffers_per_shader_stage", int64_t{lim.maxStorageBuffersPerShaderStage}},
      {"max_storage_buffer_binding_size", static_cast<int64_t>(lim.maxStorageBufferBindingSize)},
      {"max_compute_workgroups_per_dimension", int64_t{lim.maxComputeWorkgroupsPerDimension}},
      {"min_storage_buffer_offset_alignment", int64_t{lim.minStorageBufferOffsetAlignment}},
  };
}

WebGPUDevice* Require(const char* what, int id) {
  if (id != 0) {
    TVM_FFI_THROW(ValueError)
        << "cannot " << what << " webgpu(" << id
        << "): it does not exist (the WebGPU runtime drives one device, webgpu(0))";
  }
  return WebGPUDevice::Get(std::string("cannot ") + what + " webgpu(0)");
}

/*!
 * \brief Buffers are WebGPUBuffer records (the tensor's data pointer); copies go through the
 *  queue, ordered after the dispatches recorded before them. One queue: streams are the default
 *  stream.
 */
class WebGPUDeviceAPI final : public DeviceAPI {
 public:
  ffi::Any GetAttr(DLDevice dev, const std::string& key) final {
    std::string why;
    WebGPUDevice* d = WebGPUDevice::TryGet(&why);
    if (key == "unavailable_reason") return ffi::String(why);
    bool exist = d != nullptr && dev.device_id == 0;
    if (key == "exist") return exist;
    if (!exist) return ffi::Any();
    static const tvm::runtime::AttributeList attributes = AttributesOf(*d);  // one device
    return tvm::runtime::FindAttribute(attributes, key);
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t /*alignment*/) final {
    return Require("allocate memory on", dev.device_id)->Alloc(nbytes);
  }

  void FreeDataSpace(DLDevice /*dev*/, void* ptr) final {
    // Never throws (called from tensor destructors); without a device nothing was allocated,
    // and in a forked child what the parent allocated is the parent's.
    if (WebGPUDevice* d = WebGPUDevice::TryGet(nullptr)) {
      d->Free(static_cast<WebGPUBuffer*>(ptr));
    } else if (ptr != nullptr && !WebGPUDevice::Forked()) {
      std::fprintf(stderr, "[tvm webgpu] warning: ignoring free of %p: no WebGPU device\n", ptr);
    }
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle /*stream*/) final {
    bool from_gpu = dev_from.device_type == kDLWebGPU;
    bool to_gpu = dev_to.device_type == kDLWebGPU;
    if (!from_gpu && !to_gpu) {
      TVM_FFI_THROW(ValueError) << "the WebGPU DeviceAPI was asked to copy between "
                                << tvm::runtime::DeviceTypeName(dev_from.device_type) << " and "
                                << tvm::runtime::DeviceTypeName(dev_to.device_type);
    }
    WebGPUDevice* d = Require(from_gpu ? "copy from" : "copy to",
                              from_gpu ? dev_from.device_id : dev_to.device_id);
    if (nbytes == 0) return;
    auto buffer = [d, nbytes](const void* ptr, size_t offset, const char* role) {
      return d->buffers().CopyRecord<WebGPUBuffer>(ptr, offset, nbytes, role);
    };
    if (from_gpu && to_gpu) {
      d->Copy(buffer(from, from_offset, "source"), from_offset,
              buffer(to, to_offset, "destination"), to_offset, nbytes);
    } else if (from_gpu) {
      d->Read(buffer(from, from_offset, "source"), from_offset, static_cast<char*>(to) + to_offset,
              nbytes);
    } else {
      d->Write(buffer(to, to_offset, "destination"), to_offset,
               static_cast<const char*>(from) + from_offset, nbytes);
    }
  }

  void StreamSync(DLDevice dev, TVMFFIStreamHandle /*stream*/) final {
    Require("synchronize", dev.device_id)->Sync();
  }
};

}  // namespace

void RegisterDeviceAPI() {
  static auto* inst = new WebGPUDeviceAPI();  // must outlive the process (DeviceAPI::Register)
  DeviceAPI::Register(kDLWebGPU, inst);
}

}  // namespace tvm_backend_webgpu
