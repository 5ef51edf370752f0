/*!
 * \file webgpu_runtime.cc
 * \brief wgpu-native loading, the device, its memory, copies and dispatch batches.
 */
#include "webgpu_runtime.h"

#include <tvm/ffi/error.h>
#include <tvm/runtime/lazy_discovery.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace tvm_backend_webgpu {

DriverAPI api;

namespace {

/*! \brief The wgpu-native release the headers of this build come from (wgpuGetVersion's top byte).
 */
constexpr uint32_t kWgpuNativeMajor = 29;
constexpr const char* kFix =
    "pip install 'wgpu==0.32.0' (its wgpu-native runs on Vulkan: apt-get install libvulkan1 "
    "mesa-vulkan-drivers for the CPU)";

tvm::runtime::LazyDiscovery<WebGPUDevice>& Discovery() {
  static auto* discovery = new tvm::runtime::LazyDiscovery<WebGPUDevice>("WebGPU", kFix);
  return *discovery;
}

uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

void OnUncapturedError(WGPUDevice const*, WGPUErrorType, WGPUStringView message, void* self,
                       void*) {
  auto* dev = static_cast<WebGPUDevice*>(self);
  if (dev->uncaptured.empty()) dev->uncaptured = Str(message);
}

void OnDeviceLost(WGPUDevice const*, WGPUDeviceLostReason reason, WGPUStringView message,
                  void* self, void*) {
  if (reason == WGPUDeviceLostReason_Destroyed ||
      reason == WGPUDeviceLostReason_CallbackCancelled) {
    return;
  }
  auto* dev = static_cast<WebGPUDevice*>(self);
  dev->uncaptured = "the WebGPU device was lost: " + Str(message);
}

const char* BackendName(WGPUBackendType type) {
  switch (type) {
    case WGPUBackendType_Vulkan:
      return "vulkan";
    case WGPUBackendType_Metal:
      return "metal";
    case WGPUBackendType_D3D12:
      return "d3d12";
    case WGPUBackendType_OpenGL:
    case WGPUBackendType_OpenGLES:
      return "opengl";
    default:
      return "other";
  }
}

/*! \brief What a wgpuInstanceRequestAdapter / wgpuAdapterRequestDevice callback delivered. */
struct Request {
  bool done = false;
  std::string message;
  void* result = nullptr;
};

/*! \brief The callback of both requests: `Status` is their status enum, `kSuccess` its success. */
template <typename Status, Status kSuccess, typename Handle>
void OnRequest(Status status, Handle got, WGPUStringView message, void* request, void*) {
  auto* r = static_cast<Request*>(request);
  r->done = true;
  if (status == kSuccess) r->result = got;
  r->message = Str(message);
}

}  // namespace

std::string WebGPUDevice::Load() {
  std::string why = tvm::runtime::LoadDriver(
      &api, {{"libwgpu_native.so"},
             "TVM_WEBGPU_LIBRARY",
             "the pip package wgpu is not installed (its libwgpu_native is loaded by path)",
             "it is not a wgpu-native release this backend knows"});
  if (!why.empty()) return why;
  uint32_t version = api.GetVersion();
  if ((version >> 24) != kWgpuNativeMajor) {
    return "libwgpu_native is version " + std::to_string(version >> 24) + "." +
           std::to_string((version >> 16) & 0xff) + ", but this backend was built for " +
           std::to_string(kWgpuNativeMajor) + ".x (the one in wgpu==0.32.0)";
  }
  return "";
}

WebGPUDevice* WebGPUDevice::Get(const std::string& what) { return Discovery().Get(what); }

WebGPUDevice* WebGPUDevice::TryGet(std::string* why) { return Discovery().TryGet(why); }

bool WebGPUDevice::Forked() { return Discovery().forked(); }

void WebGPUDevice::WaitFor(const bool* done) {
  api.InstanceProcessEvents(instance);  // most callbacks (error scopes) are due at once
  while (!*done) {                      // the rest (buffer maps) wait for the queue
    if (device != nullptr) api.DevicePoll(device, true, nullptr);
    api.InstanceProcessEvents(instance);
  }
}

std::string WebGPUDevice::Discover() {
  instance = api.CreateInstance(nullptr);
  if (instance == nullptr) return "wgpuCreateInstance failed";
  Request req;
  WGPURequestAdapterOptions options = WGPU_REQUEST_ADAPTER_OPTIONS_INIT;
  options.powerPreference = WGPUPowerPreference_HighPerformance;
  WGPURequestAdapterCallbackInfo on_adapter = WGPU_REQUEST_ADAPTER_CALLBACK_INFO_INIT;
  on_adapter.mode = WGPUCallbackMode_AllowProcessEvents;
  on_adapter.userdata1 = &req;
  on_adapter.callback =
      OnRequest<WGPURequestAdapterStatus, WGPURequestAdapterStatus_Success, WGPUAdapter>;
  api.InstanceRequestAdapter(instance, &options, on_adapter);
  WaitFor(&req.done);
  adapter = static_cast<WGPUAdapter>(req.result);
  if (adapter == nullptr) {
    return "no WebGPU adapter (" + (req.message.empty() ? "no Vulkan driver?" : req.message) + ")";
  }
  WGPUAdapterInfo info = WGPU_ADAPTER_INFO_INIT;
  if (api.AdapterGetInfo(adapter, &info) == WGPUStatus_Success) {
    name = Str(info.device).empty() ? Str(info.description) : Str(info.device);
    vendor = Str(info.vendor);
    architecture = Str(info.architecture);
    backend = BackendName(info.backendType);
    // wgpu-native reports 0: then the bounds WebGPU itself sets
    subgroup_min_size = info.subgroupMinSize != 0 ? info.subgroupMinSize : 4;
    subgroup_max_size = info.subgroupMaxSize != 0 ? info.subgroupMaxSize : 128;
    api.AdapterInfoFreeMembers(info);
  }
  api.AdapterGetLimits(adapter, &limits);
  has_f16 = api.AdapterHasFeature(adapter, WGPUFeatureName_ShaderF16);
  // subgroups: the standard feature, or wgpu-native's own name for it
  WGPUFeatureName subgroups = WGPUFeatureName_Subgroups;
  if (!api.AdapterHasFeature(adapter, subgroups)) {
    subgroups = static_cast<WGPUFeatureName>(WGPUNativeFeature_Subgroup);
  }
  has_subgroups = api.AdapterHasFeature(adapter, subgroups);
  std::vector<WGPUFeatureName> features;
  if (has_f16) features.push_back(WGPUFeatureName_ShaderF16);
  if (has_subgroups) features.push_back(subgroups);
  WGPUDeviceDescriptor desc = WGPU_DEVICE_DESCRIPTOR_INIT;
  desc.requiredFeatureCount = features.size();
  desc.requiredFeatures = features.data();
  desc.requiredLimits = &limits;  // all the adapter offers; kernels keep to the portable ones
  desc.uncapturedErrorCallbackInfo.callback = OnUncapturedError;
  desc.uncapturedErrorCallbackInfo.userdata1 = this;
  desc.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowProcessEvents;
  desc.deviceLostCallbackInfo.callback = OnDeviceLost;
  desc.deviceLostCallbackInfo.userdata1 = this;
  req = Request();
  WGPURequestDeviceCallbackInfo on_device = WGPU_REQUEST_DEVICE_CALLBACK_INFO_INIT;
  on_device.mode = WGPUCallbackMode_AllowProcessEvents;
  on_device.userdata1 = &req;
  on_device.callback =
      OnRequest<WGPURequestDeviceStatus, WGPURequestDeviceStatus_Success, WGPUDevice>;
  api.AdapterRequestDevice(adapter, &desc, on_device);
  WaitFor(&req.done);
  device = static_cast<WGPUDevice>(req.result);
  if (device == nullptr) return "the WebGPU adapter refused a device: " + req.message;
  queue = api.DeviceGetQueue(device);
  WGPUBufferDescriptor arena = WGPU_BUFFER_DESCRIPTOR_INIT;
  arena.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
  arena.size = kUniformArenaBytes;
  uniform_arena = api.DeviceCreateBuffer(device, &arena);
  arena_host_.resize(kUniformArenaBytes);
  return uniform_arena == nullptr ? "cannot create a uniform buffer" : "";
}

void WebGPUDevice::ThrowIfScopeFailed(const char* what, const std::string& name) {
  struct Scope {
    bool done = false;
    WGPUErrorType type = WGPUErrorType_NoError;
    std::string message;
  } scope;
  WGPUPopErrorScopeCallbackInfo info = WGPU_POP_ERROR_SCOPE_CALLBACK_INFO_INIT;
  info.mode = WGPUCallbackMode_AllowProcessEvents;
  info.userdata1 = &scope;
  info.callback = [](WGPUPopErrorScopeStatus, WGPUErrorType type, WGPUStringView msg, void* s,
                     void*) {
    auto* out = static_cast<Scope*>(s);
    out->done = true;
    out->type = type;
    out->message = Str(msg);
  };
  api.DevicePopErrorScope(device, info);
  WaitFor(&scope.done);
  if (scope.type != WGPUErrorType_NoError) {
    TVM_FFI_THROW(RuntimeError) << what << name << ": " << scope.message;
  }
}

void WebGPUDevice::ThrowIfUncaptured(const std::string& what) {
  if (uncaptured.empty()) return;
  std::string message;
  std::swap(message, uncaptured);
  TVM_FFI_THROW(RuntimeError) << what << ": WebGPU reported an error: " << message;
}

WebGPUBuffer* WebGPUDevice::Alloc(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mu);
  uint64_t size = std::max<uint64_t>(4, RoundUp(nbytes, 4));
  uint64_t limit = std::min<uint64_t>(limits.maxBufferSize, limits.maxStorageBufferBindingSize);
  if (size > limit) {
    TVM_FFI_THROW(ValueError) << "cannot allocate " << nbytes << " bytes on WebGPU device '" << name
                              << "': its largest storage buffer is " << limit
                              << " bytes (maxStorageBufferBindingSize)";
  }
  WGPUBufferDescriptor desc = WGPU_BUFFER_DESCRIPTOR_INIT;
  desc.usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
  desc.size = size;
  api.DevicePushErrorScope(device, WGPUErrorFilter_OutOfMemory);
  std::string bytes = std::to_string(nbytes) + " bytes";
  WGPUBuffer handle =
      Checked([&] { return api.DeviceCreateBuffer(device, &desc); }, "allocating ", bytes);
  ThrowIfScopeFailed("out of memory allocating ", bytes);
  auto* buffer = new WebGPUBuffer{handle, size};
  buffers_.Add(buffer, 0, nbytes);
  return buffer;
}

void WebGPUDevice::Free(WebGPUBuffer* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(mu);
  if (!buffers_.Remove(buffer)) return;
  Flush();  // recorded dispatches may use it; wgpu frees it once submitted work is done
  api.BufferRelease(buffer->handle);
  delete buffer;
}

WGPUComputePassEncoder WebGPUDevice::Pass() {
  if (encoder_ == nullptr) encoder_ = api.DeviceCreateCommandEncoder(device, nullptr);
  if (pass_ == nullptr) pass_ = api.CommandEncoderBeginComputePass(encoder_, nullptr);
  return pass_;
}

uint64_t WebGPUDevice::PushUniform(const void* data, uint32_t nbytes) {
  uint64_t slot = RoundUp(std::max<uint32_t>(nbytes, 16), 256);
  if (slot > kUniformArenaBytes) {  // the module refuses such kernels; never write past the arena
    TVM_FFI_THROW(ValueError) << "webgpu: " << nbytes << " bytes of scalar arguments exceed the "
                              << kUniformArenaBytes << "-byte uniform block of one launch";
  }
  if (arena_used_ + slot > kUniformArenaBytes) Flush();
  uint64_t offset = arena_used_;
  std::memcpy(arena_host_.data() + offset, data, nbytes);
  arena_used_ += slot;
  return offset;
}

void WebGPUDevice::Dispatched() {
  if (++dispatches_ >= kMaxBatch) Flush();
}

void WebGPUDevice::EndPass() {
  if (pass_ == nullptr) return;
  api.ComputePassEnd(pass_);
  api.ComputePassRelease(pass_);
  pass_ = nullptr;
}

void WebGPUDevice::Flush() {
  EndPass();
  if (arena_used_ > 0) {  // queue writes precede the submission below
    api.QueueWriteBuffer(queue, uniform_arena, 0, arena_host_.data(), arena_used_);
    arena_used_ = 0;
  }
  if (encoder_ != nullptr) {
    WGPUCommandBuffer commands = api.CommandEncoderFinish(encoder_, nullptr);
    api.CommandEncoderRelease(encoder_);
    encoder_ = nullptr;
    api.QueueSubmit(queue, 1, &commands);
    api.CommandBufferRelease(commands);
  }
  dispatches_ = 0;
}

void WebGPUDevice::Sync() {
  std::lock_guard<std::mutex> lock(mu);
  Flush();
  api.DevicePoll(device, true, nullptr);
  ThrowIfUncaptured("synchronizing the WebGPU device");
}

void WebGPUDevice::CopyAligned(WGPUBuffer src, uint64_t so, WGPUBuffer dst, uint64_t dof,
                               uint64_t n) {
  EndPass();  // copies are recorded on the encoder, after the dispatches so far
  if (encoder_ == nullptr) encoder_ = api.DeviceCreateCommandEncoder(device, nullptr);
  api.CommandEncoderCopyBufferToBuffer(encoder_, src, so, dst, dof, n);
}

void WebGPUDevice::ReadAligned(WGPUBuffer src, uint64_t offset, void* dst, uint64_t nbytes) {
  if (staging_size_ < nbytes) {
    if (staging_ != nullptr) api.BufferRelease(staging_);
    WGPUBufferDescriptor desc = WGPU_BUFFER_DESCRIPTOR_INIT;
    desc.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    desc.size = std::max<uint64_t>(RoundUp(nbytes, 4096), 1 << 16);
    staging_ =
        Checked([&] { return api.DeviceCreateBuffer(device, &desc); }, "creating a staging buffer");
    staging_size_ = desc.size;
  }
  CopyAligned(src, offset, staging_, 0, nbytes);
  Flush();
  struct Map {
    bool done = false;
    WGPUMapAsyncStatus status = WGPUMapAsyncStatus_Error;
    std::string message;
  } map;
  WGPUBufferMapCallbackInfo info = WGPU_BUFFER_MAP_CALLBACK_INFO_INIT;
  info.mode = WGPUCallbackMode_AllowProcessEvents;
  info.userdata1 = &map;
  info.callback = [](WGPUMapAsyncStatus status, WGPUStringView msg, void* m, void*) {
    auto* out = static_cast<Map*>(m);
    out->done = true;
    out->status = status;
    out->message = Str(msg);
  };
  api.BufferMapAsync(staging_, WGPUMapMode_Read, 0, nbytes, info);
  WaitFor(&map.done);
  ThrowIfUncaptured("reading a WebGPU buffer");
  if (map.status != WGPUMapAsyncStatus_Success) {
    TVM_FFI_THROW(RuntimeError) << "reading a WebGPU buffer failed: " << map.message;
  }
  std::memcpy(dst, api.BufferGetConstMappedRange(staging_, 0, nbytes), nbytes);
  api.BufferUnmap(staging_);
}

void WebGPUDevice::Read(WebGPUBuffer* src, uint64_t offset, void* dst, uint64_t nbytes) {
  if (nbytes == 0) return;
  std::lock_guard<std::mutex> lock(mu);
  uint64_t lo = offset / 4 * 4, hi = RoundUp(offset + nbytes, 4);
  if (lo == offset && hi == offset + nbytes) return ReadAligned(src->handle, offset, dst, nbytes);
  std::vector<uint8_t> words(hi - lo);
  ReadAligned(src->handle, lo, words.data(), hi - lo);
  std::memcpy(dst, words.data() + (offset - lo), nbytes);
}

void WebGPUDevice::Write(WebGPUBuffer* dst, uint64_t offset, const void* src, uint64_t nbytes) {
  if (nbytes == 0) return;
  std::lock_guard<std::mutex> lock(mu);
  Flush();  // a queue write runs before anything submitted later: pending dispatches go first
  uint64_t lo = offset / 4 * 4, hi = RoundUp(offset + nbytes, 4);
  if (lo == offset && hi == offset + nbytes) {
    api.QueueWriteBuffer(queue, dst->handle, offset, src, nbytes);
    return;
  }
  std::vector<uint8_t> words(hi - lo);  // keep the neighbours of an unaligned range
  ReadAligned(dst->handle, lo, words.data(), hi - lo);
  std::memcpy(words.data() + (offset - lo), src, nbytes);
  api.QueueWriteBuffer(queue, dst->handle, lo, words.data(), hi - lo);
}

void WebGPUDevice::Copy(WebGPUBuffer* src, uint64_t src_offset, WebGPUBuffer* dst,
                        uint64_t dst_offset, uint64_t nbytes) {
  if (nbytes == 0 || (src == dst && src_offset == dst_offset)) return;
  // WebGPU refuses a copy within one buffer: those go through the host
  if (src != dst && src_offset % 4 == 0 && dst_offset % 4 == 0 && nbytes % 4 == 0) {
    std::lock_guard<std::mutex> lock(mu);
    CopyAligned(src->handle, src_offset, dst->handle, dst_offset, nbytes);
    return;
  }
  std::vector<uint8_t> host(nbytes);
  Read(src, src_offset, host.data(), nbytes);
  Write(dst, dst_offset, host.data(), nbytes);
}

}  // namespace tvm_backend_webgpu
