/*!
 * \file webgpu_runtime.h
 * \brief The WebGPU runtime on wgpu-native: the driver table, the one device (adapter, device,
 *        queue), its buffers, copies and the batch of pending dispatches.
 *
 * wgpu-native (libwgpu_native from the pip package `wgpu`, whose headers this builds against) is
 * dlopen'ed by path at backend init; the adapter and device are requested on first use
 * (LazyDiscovery). A tensor's data pointer is a WebGPUBuffer*: WebGPU buffers are handles, so
 * kernels index them from binding offsets, never by pointer arithmetic.
 *
 * Every call into wgpu-native happens under the device's mutex. Dispatches are recorded into one
 * open compute pass and submitted together (at a copy, a sync, or every kMaxBatch dispatches);
 * validation errors are caught by error scopes or the uncaptured-error callback and raised as
 * Python exceptions, never left to wgpu-native's default handler (which aborts).
 */
#ifndef TVM_BACKEND_WEBGPU_WEBGPU_RUNTIME_H_
#define TVM_BACKEND_WEBGPU_WEBGPU_RUNTIME_H_

#include <tvm/runtime/buffer_registry.h>
#include <tvm/runtime/driver_loader.h>
#include <tvm/runtime/lazy_discovery.h>
#include <webgpu.h>
#include <wgpu.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tvm_backend_webgpu {

// clang-format off
#define WEBGPU_SYMBOLS(X)                                                                         \
  X(GetVersion, "wgpuGetVersion", uint32_t())                                                     \
  X(CreateInstance, "wgpuCreateInstance", WGPUInstance(const WGPUInstanceDescriptor*))            \
  X(InstanceRequestAdapter, "wgpuInstanceRequestAdapter",                                         \
    WGPUFuture(WGPUInstance, const WGPURequestAdapterOptions*, WGPURequestAdapterCallbackInfo))   \
  X(InstanceProcessEvents, "wgpuInstanceProcessEvents", void(WGPUInstance))                       \
  X(AdapterRequestDevice, "wgpuAdapterRequestDevice",                                             \
    WGPUFuture(WGPUAdapter, const WGPUDeviceDescriptor*, WGPURequestDeviceCallbackInfo))          \
  X(AdapterGetLimits, "wgpuAdapterGetLimits", WGPUStatus(WGPUAdapter, WGPULimits*))               \
  X(AdapterGetInfo, "wgpuAdapterGetInfo", WGPUStatus(WGPUAdapter, WGPUAdapterInfo*))              \
  X(AdapterInfoFreeMembers, "wgpuAdapterInfoFreeMembers", void(WGPUAdapterInfo))                  \
  X(AdapterHasFeature, "wgpuAdapterHasFeature", WGPUBool(WGPUAdapter, WGPUFeatureName))           \
  X(DeviceGetQueue, "wgpuDeviceGetQueue", WGPUQueue(WGPUDevice))                                  \
  X(DevicePoll, "wgpuDevicePoll", WGPUBool(WGPUDevice, WGPUBool, const WGPUSubmissionIndex*))     \
  X(DevicePushErrorScope, "wgpuDevicePushErrorScope", void(WGPUDevice, WGPUErrorFilter))          \
  X(DevicePopErrorScope, "wgpuDevicePopErrorScope",                                               \
    WGPUFuture(WGPUDevice, WGPUPopErrorScopeCallbackInfo))                                        \
  X(DeviceCreateBuffer, "wgpuDeviceCreateBuffer",                                                 \
    WGPUBuffer(WGPUDevice, const WGPUBufferDescriptor*))                                          \
  X(BufferRelease, "wgpuBufferRelease", void(WGPUBuffer))                                         \
  X(BufferMapAsync, "wgpuBufferMapAsync",                                                         \
    WGPUFuture(WGPUBuffer, WGPUMapMode, size_t, size_t, WGPUBufferMapCallbackInfo))               \
  X(BufferGetConstMappedRange, "wgpuBufferGetConstMappedRange",                                   \
    const void*(WGPUBuffer, size_t, size_t))                                                      \
  X(BufferUnmap, "wgpuBufferUnmap", void(WGPUBuffer))                                             \
  X(QueueWriteBuffer, "wgpuQueueWriteBuffer",                                                     \
    void(WGPUQueue, WGPUBuffer, uint64_t, const void*, size_t))                                   \
  X(QueueSubmit, "wgpuQueueSubmit", void(WGPUQueue, size_t, const WGPUCommandBuffer*))            \
  X(DeviceCreateCommandEncoder, "wgpuDeviceCreateCommandEncoder",                                 \
    WGPUCommandEncoder(WGPUDevice, const WGPUCommandEncoderDescriptor*))                          \
  X(CommandEncoderCopyBufferToBuffer, "wgpuCommandEncoderCopyBufferToBuffer",                     \
    void(WGPUCommandEncoder, WGPUBuffer, uint64_t, WGPUBuffer, uint64_t, uint64_t))               \
  X(CommandEncoderBeginComputePass, "wgpuCommandEncoderBeginComputePass",                         \
    WGPUComputePassEncoder(WGPUCommandEncoder, const WGPUComputePassDescriptor*))                 \
  X(CommandEncoderFinish, "wgpuCommandEncoderFinish",                                             \
    WGPUCommandBuffer(WGPUCommandEncoder, const WGPUCommandBufferDescriptor*))                    \
  X(CommandEncoderRelease, "wgpuCommandEncoderRelease", void(WGPUCommandEncoder))                 \
  X(CommandBufferRelease, "wgpuCommandBufferRelease", void(WGPUCommandBuffer))                    \
  X(ComputePassSetPipeline, "wgpuComputePassEncoderSetPipeline",                                  \
    void(WGPUComputePassEncoder, WGPUComputePipeline))                                            \
  X(ComputePassSetBindGroup, "wgpuComputePassEncoderSetBindGroup",                                \
    void(WGPUComputePassEncoder, uint32_t, WGPUBindGroup, size_t, const uint32_t*))               \
  X(ComputePassDispatch, "wgpuComputePassEncoderDispatchWorkgroups",                              \
    void(WGPUComputePassEncoder, uint32_t, uint32_t, uint32_t))                                   \
  X(ComputePassEnd, "wgpuComputePassEncoderEnd", void(WGPUComputePassEncoder))                    \
  X(ComputePassRelease, "wgpuComputePassEncoderRelease", void(WGPUComputePassEncoder))            \
  X(DeviceCreateShaderModule, "wgpuDeviceCreateShaderModule",                                     \
    WGPUShaderModule(WGPUDevice, const WGPUShaderModuleDescriptor*))                              \
  X(DeviceCreateBindGroupLayout, "wgpuDeviceCreateBindGroupLayout",                               \
    WGPUBindGroupLayout(WGPUDevice, const WGPUBindGroupLayoutDescriptor*))                        \
  X(DeviceCreatePipelineLayout, "wgpuDeviceCreatePipelineLayout",                                 \
    WGPUPipelineLayout(WGPUDevice, const WGPUPipelineLayoutDescriptor*))                          \
  X(DeviceCreateComputePipeline, "wgpuDeviceCreateComputePipeline",                               \
    WGPUComputePipeline(WGPUDevice, const WGPUComputePipelineDescriptor*))                        \
  X(DeviceCreateBindGroup, "wgpuDeviceCreateBindGroup",                                           \
    WGPUBindGroup(WGPUDevice, const WGPUBindGroupDescriptor*))                                    \
  X(BindGroupRelease, "wgpuBindGroupRelease", void(WGPUBindGroup))
// clang-format on
TVM_DRIVER_TABLE(DriverAPI, WEBGPU_SYMBOLS);

/*! \brief The wgpu-native entry points (valid once Load() returned ""). */
extern DriverAPI api;

/*! \brief The data pointer of a WebGPU tensor. */
struct WebGPUBuffer {
  WGPUBuffer handle = nullptr;
  /*! \brief Bytes allocated (the requested size rounded up to 4). */
  uint64_t size = 0;
};

/*! \brief A WGPUStringView of `s` (not owned). */
inline WGPUStringView View(const std::string& s) { return WGPUStringView{s.data(), s.size()}; }

/*! \brief A std::string of `v`. */
inline std::string Str(WGPUStringView v) {
  if (v.data == nullptr) return "";
  return v.length == WGPU_STRLEN ? std::string(v.data) : std::string(v.data, v.length);
}

/*! \brief The process's WebGPU device: discovered once, never destroyed. */
class WebGPUDevice {
 public:
  /*! \brief Loads wgpu-native (path from TVM_WEBGPU_LIBRARY); "" on success, else why not. */
  static std::string Load();
  /*! \brief The device, requesting it on first use; RuntimeError naming why none exists. */
  static WebGPUDevice* Get(const std::string& what);
  /*! \brief The device, or null (and `*why`) when none is usable. */
  static WebGPUDevice* TryGet(std::string* why);
  /*! \brief Whether the device is the parent's (this is a child forked after discovery). */
  static bool Forked();

  /*! \brief Requests the adapter and device; "" on success (LazyDiscovery's hook). */
  std::string Discover();

  WebGPUBuffer* Alloc(size_t nbytes);
  void Free(WebGPUBuffer* buffer);
  /*! \brief The buffers allocated here and not yet freed. */
  const tvm::runtime::BufferRegistry& buffers() const { return buffers_; }
  /*! \brief Host to device; any offset and size (unaligned edges are read, patched, written). */
  void Write(WebGPUBuffer* dst, uint64_t offset, const void* src, uint64_t nbytes);
  /*! \brief Device to host (waits for pending work). */
  void Read(WebGPUBuffer* src, uint64_t offset, void* dst, uint64_t nbytes);
  /*! \brief Device to device, ordered after pending dispatches. */
  void Copy(WebGPUBuffer* src, uint64_t src_offset, WebGPUBuffer* dst, uint64_t dst_offset,
            uint64_t nbytes);
  /*! \brief Submits pending work and waits for the queue to drain. */
  void Sync();

  /*!
   * \brief Creates an object under a validation error scope: `make` returns it (null on failure);
   *  RuntimeError "<what><name>: <wgpu's message>" when wgpu reports an error (the message is
   *  built only then: this runs on every launch). Caller holds mu.
   */
  template <typename F>
  auto Checked(F make, const char* what, const std::string& name = "") -> decltype(make()) {
    api.DevicePushErrorScope(device, WGPUErrorFilter_Validation);
    auto made = make();
    ThrowIfScopeFailed(what, name);
    return made;
  }
  /*! \brief The compute pass dispatches are recorded into (opened on demand). Caller holds mu. */
  WGPUComputePassEncoder Pass();
  /*! \brief A slot of `nbytes` of the per-batch uniform arena filled with `data`; its offset.
   *  Caller holds mu. */
  uint64_t PushUniform(const void* data, uint32_t nbytes);
  /*! \brief Counts a recorded dispatch; submits the batch when it is full. Caller holds mu. */
  void Dispatched();
  /*! \brief Raises the error the uncaptured-error callback recorded, if any. Caller holds mu. */
  void ThrowIfUncaptured(const std::string& what);

  std::mutex mu;
  WGPUInstance instance = nullptr;
  WGPUAdapter adapter = nullptr;
  WGPUDevice device = nullptr;
  WGPUQueue queue = nullptr;
  WGPULimits limits = WGPU_LIMITS_INIT;
  bool has_f16 = false;
  bool has_subgroups = false;
  uint32_t subgroup_min_size = 0, subgroup_max_size = 0;
  std::string name, vendor, architecture, backend;
  WGPUBuffer uniform_arena = nullptr;
  /*! \brief Errors the device reported outside error scopes (set by its callback). */
  std::string uncaptured;

 private:
  friend class tvm::runtime::LazyDiscovery<WebGPUDevice>;
  WebGPUDevice() = default;
  void ThrowIfScopeFailed(const char* what, const std::string& name);
  /*! \brief Ends the open pass and submits everything recorded (and the uniform arena). */
  void Flush();
  /*! \brief Ends the open compute pass, if any. */
  void EndPass();
  void CopyAligned(WGPUBuffer src, uint64_t so, WGPUBuffer dst, uint64_t dof, uint64_t n);
  void ReadAligned(WGPUBuffer src, uint64_t offset, void* dst, uint64_t nbytes);
  /*! \brief Processes events until `*done`. */
  void WaitFor(const bool* done);

  WGPUCommandEncoder encoder_ = nullptr;
  WGPUComputePassEncoder pass_ = nullptr;
  size_t dispatches_ = 0;
  std::vector<uint8_t> arena_host_;
  uint64_t arena_used_ = 0;
  tvm::runtime::BufferRegistry buffers_{"webgpu", "WebGPU"};
  WGPUBuffer staging_ = nullptr;
  uint64_t staging_size_ = 0;
};

/*! \brief The uniform arena's size: slots are 256-byte aligned (minUniformBufferOffsetAlignment).
 */
constexpr uint64_t kUniformArenaBytes = 64 * 1024;
/*! \brief Dispatches recorded before a batch is submitted. */
constexpr size_t kMaxBatch = 1024;

/*! \brief Registers the DeviceAPI of kDLWebGPU. */
void RegisterDeviceAPI();
/*! \brief Registers ffi.Module.create.webgpu and ffi.Module.load_from_bytes.webgpu. */
void RegisterModuleFunctions();

}  // namespace tvm_backend_webgpu

#endif  // TVM_BACKEND_WEBGPU_WEBGPU_RUNTIME_H_
