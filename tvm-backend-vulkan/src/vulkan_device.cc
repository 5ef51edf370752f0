/*!
 * \file vulkan_device.cc
 * \brief Instance creation and device discovery, logical devices, batched submission, buffers.
 */
#include "vulkan_device.h"

#include <tvm/ffi/error.h>
#include <tvm/runtime/env_setting.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
#include <utility>

namespace tvm_backend_vulkan {

const char* const kInstallFix =
    "apt-get install libvulkan1 mesa-vulkan-drivers (or your GPU vendor's Vulkan driver)";

namespace {
/*! \brief Appends `next` to the pNext chain ending at `*tail`, which then points at `next`. */
template <typename T>
void Chain(void*** tail, T* next) {
  **tail = next;
  *tail = &next->pNext;
}

std::set<std::string> DeviceExtensions(VkPhysicalDevice phys) {
  uint32_t n = 0;
  std::set<std::string> out;
  if (Vk().vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, nullptr) != VK_SUCCESS)
    return out;
  std::vector<VkExtensionProperties> exts(n);
  if (Vk().vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, exts.data()) != VK_SUCCESS)
    return out;
  for (const auto& e : exts) out.insert(e.extensionName);
  return out;
}

/*! \brief The optional features of `phys` that a logical device can enable, and their
 *  extensions. */
void QueryFeatures(const std::set<std::string>& exts, PhysicalDeviceInfo* info) {
  bool has_f16i8 = exts.count(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME) > 0;
  bool has_8bit = exts.count(VK_KHR_8BIT_STORAGE_EXTENSION_NAME) > 0;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDevice16BitStorageFeatures s16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeaturesKHR s8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR};
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  void** tail = &f2.pNext;
  Chain(&tail, &s16);
  if (has_8bit) Chain(&tail, &s8);
  if (has_f16i8) Chain(&tail, &f16);
  Vk().vkGetPhysicalDeviceFeatures2(info->handle, &f2);
  DeviceFeatures& f = info->features;
  f.int64 = f2.features.shaderInt64;
  f.float64 = f2.features.shaderFloat64;
  f.int16 = f2.features.shaderInt16;
  f.storage_buffer_16bit = s16.storageBuffer16BitAccess;
  f.storage_buffer_8bit = has_8bit && s8.storageBuffer8BitAccess;
  f.float16 = has_f16i8 && f16.shaderFloat16;
  f.int8 = has_f16i8 && f16.shaderInt8;
  f.push_descriptor = exts.count(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) > 0;
  f.float_controls = exts.count(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME) > 0;
  if (f.float_controls) info->extensions.push_back(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
  if (f.storage_buffer_8bit) info->extensions.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  if (f.float16 || f.int8) info->extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  if (f.push_descriptor) info->extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
}

/*! \brief Subgroup, push-descriptor and allocation limits (Vulkan 1.1 property structs). */
void QueryProperties(PhysicalDeviceInfo* info) {
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties m3{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDevicePushDescriptorPropertiesKHR push{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
  VkPhysicalDeviceFloatControlsPropertiesKHR controls{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES_KHR};
  void** tail = &p2.pNext;
  Chain(&tail, &sub);
  Chain(&tail, &m3);
  if (info->features.push_descriptor) Chain(&tail, &push);
  if (info->features.float_controls) Chain(&tail, &controls);
  Vk().vkGetPhysicalDeviceProperties2(info->handle, &p2);
  if (info->features.float_controls) {
    info->features.inf_nan_preserved = (controls.shaderSignedZeroInfNanPreserveFloat16 ? 1u : 0u) |
                                       (controls.shaderSignedZeroInfNanPreserveFloat32 ? 2u : 0u) |
                                       (controls.shaderSignedZeroInfNanPreserveFloat64 ? 4u : 0u);
  }
  info->subgroup_size = std::max<uint32_t>(sub.subgroupSize, 1);
  if (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) {
    info->features.subgroup_operations = sub.supportedOperations;
  }
  info->max_allocation_size = m3.maxMemoryAllocationSize;
  info->max_push_descriptors = info->features.push_descriptor ? push.maxPushDescriptors : 0;
  for (uint32_t i = 0; i < info->memory.memoryHeapCount; ++i) {
    const VkMemoryHeap& heap = info->memory.memoryHeaps[i];
    if (heap.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      info->device_local_bytes = std::max(info->device_local_bytes, heap.size);
    }
  }
}

/*!
 * \brief Fill `info` for `phys`; false (with `problem` set) when the device cannot run compute
 *  work here (no compute queue family, or only Vulkan 1.0).
 */
bool DescribeDevice(VkPhysicalDevice phys, PhysicalDeviceInfo* info, std::string* problem) {
  const DriverTable& vk = Vk();
  info->handle = phys;
  vk.vkGetPhysicalDeviceProperties(phys, &info->props);
  info->name = info->props.deviceName;
  if (VK_API_VERSION_MAJOR(info->props.apiVersion) == 1 &&
      VK_API_VERSION_MINOR(info->props.apiVersion) < 1) {
    *problem = "'" + info->name + "' supports only Vulkan 1.0 (1.1 is required)";
    return false;
  }
  uint32_t nfam = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, nullptr);
  std::vector<VkQueueFamilyProperties> fams(nfam);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nfam, fams.data());
  auto it = std::find_if(fams.begin(), fams.end(), [](const VkQueueFamilyProperties& f) {
    return (f.queueFlags & VK_QUEUE_COMPUTE_BIT) && f.queueCount > 0;
  });
  if (it == fams.end()) {
    *problem = "'" + info->name + "' has no compute queue family";
    return false;
  }
  info->queue_family = static_cast<uint32_t>(it - fams.begin());
  info->queue_count = it->queueCount;
  vk.vkGetPhysicalDeviceMemoryProperties(phys, &info->memory);
  QueryFeatures(DeviceExtensions(phys), info);
  QueryProperties(info);
  return true;
}

/*! \brief Memory properties tried in order for buffers: always host-mappable. */
constexpr VkMemoryPropertyFlags kMemoryPreference[] = {
    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
};
}  // namespace

// ---- discovery ---------------------------------------------------------------------------------

std::string VulkanRuntime::Load() { return LoadDriver(); }

tvm::runtime::LazyDiscovery<VulkanRuntime>& VulkanRuntime::Discovery() {
  static tvm::runtime::LazyDiscovery<VulkanRuntime> discovery("Vulkan", kInstallFix);
  return discovery;
}

VulkanRuntime* VulkanRuntime::TryGlobal(std::string* why) { return Discovery().TryGet(why); }

VulkanRuntime* VulkanRuntime::Global(const std::string& what) { return Discovery().Get(what); }

void VulkanRuntime::ThrowUnavailable(const std::string& what) {
  Discovery().ThrowUnavailable(what);
}

bool VulkanRuntime::Discovered() { return Discovery().discovered(); }

bool VulkanRuntime::Forked() { return Discovery().forked(); }

std::string VulkanRuntime::Discover() {
  const DriverTable& vk = Vk();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tvm";
  app.pEngineName = "tvm";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;  // layers: only what the loader's environment asks for
  VkResult rc = vk.vkCreateInstance(&ci, nullptr, &instance_);
  if (rc != VK_SUCCESS) {
    std::string why = "vkCreateInstance failed with " + ResultString(rc);
    if (rc == VK_ERROR_INCOMPATIBLE_DRIVER) why += " (no Vulkan 1.1 driver (ICD) is installed)";
    return why;
  }
  uint32_t n = 0;
  rc = vk.vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  if (rc != VK_SUCCESS) return "vkEnumeratePhysicalDevices failed with " + ResultString(rc);
  std::vector<VkPhysicalDevice> phys(n);
  rc = vk.vkEnumeratePhysicalDevices(instance_, &n, phys.data());
  if (rc != VK_SUCCESS && rc != VK_INCOMPLETE) {
    return "vkEnumeratePhysicalDevices failed with " + ResultString(rc);
  }
  if (n == 0) {
    return "the Vulkan loader found no device (no driver (ICD) is installed under "
           "/usr/share/vulkan/icd.d, or VK_ICD_FILENAMES / VK_DRIVER_FILES point elsewhere)";
  }
  std::string problems;
  for (uint32_t i = 0; i < n; ++i) {
    PhysicalDeviceInfo info;
    std::string problem;
    if (DescribeDevice(phys[i], &info, &problem)) {
      info.attributes = AttributesOf(info);
      infos_.push_back(std::move(info));
    } else {
      problems += (problems.empty() ? "" : "; ") + problem;
    }
  }
  if (infos_.empty()) return "no Vulkan device can run compute shaders: " + problems;
  devices_.reset(new std::atomic<VulkanDevice*>[infos_.size()]);
  for (size_t i = 0; i < infos_.size(); ++i) devices_[i].store(nullptr);
  return "";
}

const PhysicalDeviceInfo& VulkanRuntime::Info(int id) const {
  if (id < 0 || id >= num_devices()) {
    TVM_FFI_THROW(ValueError) << "vulkan(" << id << ") does not exist: this machine has "
                              << num_devices() << " Vulkan device(s), ids 0.." << num_devices() - 1;
  }
  return infos_[id];
}

VulkanDevice& VulkanRuntime::Device(int id) {
  const PhysicalDeviceInfo& info = Info(id);
  VulkanDevice* dev = devices_[id].load(std::memory_order_acquire);
  if (dev != nullptr) return *dev;
  std::lock_guard<std::mutex> lock(devices_mu_);
  dev = devices_[id].load(std::memory_order_acquire);
  if (dev == nullptr) {
    dev = new VulkanDevice(info, id);  // throws on failure; the next use tries again
    devices_[id].store(dev, std::memory_order_release);
  }
  return *dev;
}

// ---- buffers -----------------------------------------------------------------------------------

VulkanBuffer* VulkanRuntime::Alloc(int id, size_t nbytes) {
  VulkanBuffer* buf = Device(id).CreateBuffer(nbytes);
  buffers_.Add(buf, id, nbytes);
  return buf;
}

void VulkanRuntime::Free(void* ptr) {
  if (ptr == nullptr || !buffers_.Remove(ptr)) return;
  auto* buf = static_cast<VulkanBuffer*>(ptr);
  try {
    Device(buf->device_id).ReleaseBuffer(buf);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[tvm vulkan] warning: freeing buffer %p failed: %s\n", ptr, e.what());
  }
}

// ---- logical device ----------------------------------------------------------------------------

VulkanDevice::VulkanDevice(const PhysicalDeviceInfo& info, int id) : info_(info), id_(id) {
  const DeviceFeatures& f = info.features;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.features.shaderInt64 = f.int64;
  f2.features.shaderFloat64 = f.float64;
  f2.features.shaderInt16 = f.int16;
  VkPhysicalDevice16BitStorageFeatures s16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  s16.storageBuffer16BitAccess = f.storage_buffer_16bit;
  VkPhysicalDevice8BitStorageFeaturesKHR s8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR};
  s8.storageBuffer8BitAccess = f.storage_buffer_8bit;
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  f16.shaderFloat16 = f.float16;
  f16.shaderInt8 = f.int8;
  void** tail = &f2.pNext;
  Chain(&tail, &s16);
  if (f.storage_buffer_8bit) Chain(&tail, &s8);
  if (f.float16 || f.int8) Chain(&tail, &f16);

  // Every queue of the compute family (up to kMaxQueues): streams spread over them.
  uint32_t nqueue = std::max<uint32_t>(1, std::min(info.queue_count, kMaxQueues));
  std::vector<float> priorities(nqueue, 1.0f);
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = info.queue_family;
  qci.queueCount = nqueue;
  qci.pQueuePriorities = priorities.data();
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &f2;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &qci;
  ci.enabledExtensionCount = static_cast<uint32_t>(info.extensions.size());
  ci.ppEnabledExtensionNames = info.extensions.data();
  VkResult rc = Vk().vkCreateDevice(info.handle, &ci, nullptr, &device_);
  if (rc != VK_SUCCESS) {
    TVM_FFI_THROW(RuntimeError) << "cannot open " << Describe() << ": vkCreateDevice failed with "
                                << ResultString(rc);
  }
  queues_.resize(nqueue);
  for (uint32_t q = 0; q < nqueue; ++q) {
    Vk().vkGetDeviceQueue(device_, info.queue_family, q, &queues_[q]);
  }
  queue_mu_.reset(new std::mutex[nqueue]);
  // TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR=1 forces descriptor pools (to test that path).
  if (f.push_descriptor &&
      !tvm::runtime::BooleanSetting("TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR", false)) {
    push_descriptor_ = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
        Vk().vkGetDeviceProcAddr(device_, "vkCmdPushDescriptorSetKHR"));
  }
  default_stream_ = std::make_shared<VulkanStream>(this, 0);
}

std::string VulkanDevice::Describe() const {
  return "vulkan(" + std::to_string(id_) + ") ('" + info_.name + "')";
}

/*! \brief A freed buffer waiting for the pending work of every stream that may use it. */
struct Batch::DeferredFree {
  DeferredFree(VulkanDevice* device, VulkanBuffer* buf) : device(device), buf(buf) {}
  ~DeferredFree() { device->DestroyBuffer(buf); }
  VulkanDevice* device;
  VulkanBuffer* buf;
};

// ---- batches -----------------------------------------------------------------------------------

Batch* VulkanStream::NewBatch() {
  auto batch = std::make_unique<Batch>();
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  TVM_VULKAN_CALL(vkAllocateCommandBuffers, device_->handle(), &ai, &batch->cmd);
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  TVM_VULKAN_CALL(vkCreateFence, device_->handle(), &fci, nullptr, &batch->fence);
  batches_.push_back(std::move(batch));
  return batches_.back().get();
}

Batch& VulkanStream::Recording() {
  if (recording_ != nullptr) return *recording_;
  ReclaimLocked(/*wait_oldest=*/in_flight_.size() >= kMaxInFlight);
  Batch* batch = nullptr;
  if (free_.empty()) {
    batch = NewBatch();
  } else {
    batch = free_.back();
    free_.pop_back();
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult rc = Vk().vkBeginCommandBuffer(batch->cmd, &bi);
  if (rc != VK_SUCCESS) {
    free_.push_back(batch);
    CheckResult(rc, "vkBeginCommandBuffer");
  }
  recording_ = batch;
  return *batch;
}

VkDescriptorSet VulkanStream::AllocateDescriptorSet(Batch* batch, VkDescriptorSetLayout layout) {
  constexpr uint32_t kSetsPerPool = 256;
  constexpr uint32_t kBuffersPerSet = 16;
  while (true) {
    bool fresh = batch->pools_used == batch->pools.size();
    if (fresh) {
      // Each set: storage buffers, and one uniform buffer for a kernel with many scalars.
      const VkDescriptorPoolSize sizes[] = {
          {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kBuffersPerSet},
          {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kSetsPerPool}};
      VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pci.maxSets = kSetsPerPool;
      pci.poolSizeCount = 2;
      pci.pPoolSizes = sizes;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      TVM_VULKAN_CALL(vkCreateDescriptorPool, device_->handle(), &pci, nullptr, &pool);
      batch->pools.push_back(pool);
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = batch->pools[batch->pools_used];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    VkResult rc = Vk().vkAllocateDescriptorSets(device_->handle(), &ai, &set);
    if (rc == VK_SUCCESS) return set;
    bool exhausted = rc == VK_ERROR_OUT_OF_POOL_MEMORY || rc == VK_ERROR_FRAGMENTED_POOL;
    if (!exhausted || fresh) CheckResult(rc, "vkAllocateDescriptorSets");
    ++batch->pools_used;  // full: continue in the next pool
  }
}

VkDescriptorBufferInfo VulkanStream::AllocateUniform(Batch* batch, const void* data,
                                                     VkDeviceSize size) {
  VkDeviceSize align =
      std::max<VkDeviceSize>(device_->info().props.limits.minUniformBufferOffsetAlignment, 1);
  while (true) {
    if (batch->uniforms_used == batch->uniforms.size()) {  // all full: chain one more buffer
      batch->uniforms.push_back(
          device_->CreateBuffer(static_cast<size_t>(std::max(VulkanDevice::kUniformChunk, size)),
                                VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT));
      batch->uniform_offset = 0;
    }
    VulkanBuffer* chunk = batch->uniforms[batch->uniforms_used];
    VkDeviceSize offset = (batch->uniform_offset + align - 1) / align * align;
    if (offset <= chunk->capacity && size <= chunk->capacity - offset) {
      std::memcpy(chunk->host + offset, data, static_cast<size_t>(size));
      batch->uniform_offset = offset + size;
      return VkDescriptorBufferInfo{chunk->buffer, offset, size};
    }
    ++batch->uniforms_used;  // full: continue in the next buffer
    batch->uniform_offset = 0;
  }
}

void VulkanStream::FinishDispatch(Batch* batch) {
  if (++batch->dispatches >= VulkanDevice::kFlushDispatches) FlushLocked();
}

void VulkanStream::FlushLocked() {
  if (recording_ == nullptr) return;
  Batch* batch = recording_;
  recording_ = nullptr;
  // Make the shaders' writes visible to the host, which reads mapped memory after the fence.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  Vk().vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  VkResult rc = Vk().vkEndCommandBuffer(batch->cmd);
  if (rc == VK_SUCCESS) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &batch->cmd;
    rc = device_->Submit(queue_index_, si, batch->fence);
  }
  if (rc != VK_SUCCESS) {
    uint32_t count = batch->dispatches;
    Recycle(batch);  // its work never runs; buffers freed meanwhile are released now
    TVM_FFI_THROW(RuntimeError) << "submitting " << count << " kernel launches to "
                                << device_->Describe() << " failed with " << ResultString(rc);
  }
  in_flight_.push_back(batch);
}

void VulkanStream::ReclaimLocked(bool wait_oldest) {
  while (!in_flight_.empty()) {
    Batch* batch = in_flight_.front();
    VkResult rc =
        wait_oldest ? Vk().vkWaitForFences(device_->handle(), 1, &batch->fence, VK_TRUE, UINT64_MAX)
                    : Vk().vkGetFenceStatus(device_->handle(), batch->fence);
    wait_oldest = false;
    if (rc == VK_NOT_READY || rc == VK_TIMEOUT) return;
    if (rc != VK_SUCCESS) {
      TVM_FFI_THROW(RuntimeError) << "waiting for the kernels on " << device_->Describe()
                                  << " failed with " << ResultString(rc);
    }
    in_flight_.pop_front();
    Recycle(batch);
  }
}

void VulkanStream::WaitAllLocked() {
  while (!in_flight_.empty()) ReclaimLocked(/*wait_oldest=*/true);
}

void VulkanStream::Recycle(Batch* batch) {
  Vk().vkResetFences(device_->handle(), 1, &batch->fence);
  for (VkDescriptorPool pool : batch->pools) Vk().vkResetDescriptorPool(device_->handle(), pool, 0);
  batch->pools_used = 0;
  batch->frees.clear();      // the last batch holding a freed buffer destroys it
  batch->uniforms_used = 0;  // the GPU is done with the scalar blocks: rewind the arena
  batch->uniform_offset = 0;
  batch->dispatches = 0;
  batch->bound = VK_NULL_HANDLE;
  free_.push_back(batch);
}

void VulkanStream::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  FlushLocked();
  WaitAllLocked();
}

void VulkanStream::DeferFree(const std::shared_ptr<Batch::DeferredFree>& pending) {
  std::lock_guard<std::mutex> lock(mu_);
  ReclaimLocked(/*wait_oldest=*/false);
  Batch* newest =
      recording_ != nullptr ? recording_ : (in_flight_.empty() ? nullptr : in_flight_.back());
  if (newest != nullptr) newest->frees.push_back(pending);  // pending work may still use it
}

// ---- streams -----------------------------------------------------------------------------------

namespace {
/*! \brief Stream handles of this process: never reused, so a freed handle stays invalid. */
std::atomic<uintptr_t> next_stream_handle{1};
}  // namespace

VulkanStream::VulkanStream(VulkanDevice* device, uint32_t queue_index)
    : device_(device), queue_index_(queue_index) {
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = device->info().queue_family;
  TVM_VULKAN_CALL(vkCreateCommandPool, device->handle(), &pci, nullptr, &command_pool_);
}

VulkanStream::~VulkanStream() {
  // Never throws: wait for what was submitted, then release the stream's objects.
  try {
    Sync();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[tvm vulkan] warning: releasing a stream: %s\n", e.what());
  }
  VkDevice dev = device_->handle();
  for (auto& batch : batches_) {
    batch->frees.clear();
    for (VkDescriptorPool pool : batch->pools) Vk().vkDestroyDescriptorPool(dev, pool, nullptr);
    for (VulkanBuffer* buf : batch->uniforms) device_->DestroyBuffer(buf);
    Vk().vkDestroyFence(dev, batch->fence, nullptr);
  }
  Vk().vkDestroyCommandPool(dev, command_pool_, nullptr);  // frees the command buffers
}

VkResult VulkanDevice::Submit(uint32_t index, const VkSubmitInfo& si, VkFence fence) {
  std::lock_guard<std::mutex> lock(queue_mu_[index]);  // a VkQueue is externally synchronized
  return Vk().vkQueueSubmit(queues_[index], 1, &si, fence);
}

std::shared_ptr<VulkanStream> VulkanDevice::Stream(TVMFFIStreamHandle handle) {
  if (handle == nullptr) return default_stream_;
  std::lock_guard<std::mutex> lock(streams_mu_);
  auto it = streams_.find(reinterpret_cast<uintptr_t>(handle));
  if (it == streams_.end()) {
    TVM_FFI_THROW(ValueError) << "stream " << handle << " is not a live stream of " << Describe()
                              << " (freed, or created for another device)";
  }
  return it->second;
}

TVMFFIStreamHandle VulkanDevice::CreateStream() {
  std::lock_guard<std::mutex> lock(streams_mu_);
  uint32_t queue = (streams_created_ + 1) % num_queues();
  auto stream = std::make_shared<VulkanStream>(this, queue);
  ++streams_created_;
  uintptr_t handle = next_stream_handle.fetch_add(1);
  streams_.emplace(handle, std::move(stream));
  return reinterpret_cast<TVMFFIStreamHandle>(handle);
}

void VulkanDevice::FreeStream(TVMFFIStreamHandle handle) {
  if (handle == nullptr) return;  // the default stream lives as long as the device
  std::shared_ptr<VulkanStream> stream;
  {
    std::lock_guard<std::mutex> lock(streams_mu_);
    auto it = streams_.find(reinterpret_cast<uintptr_t>(handle));
    if (it == streams_.end()) {
      TVM_FFI_THROW(ValueError) << "cannot free stream " << handle << ": not a live stream of "
                                << Describe() << " (freed already, or created for another device)";
    }
    stream = std::move(it->second);
    streams_.erase(it);
  }
  stream->Sync();  // errors surface here; the release (last reference) waits again, quietly
}

std::vector<std::shared_ptr<VulkanStream>> VulkanDevice::AllStreams() {
  std::vector<std::shared_ptr<VulkanStream>> out{default_stream_};
  std::lock_guard<std::mutex> lock(streams_mu_);
  for (auto& entry : streams_) out.push_back(entry.second);
  return out;
}

void VulkanDevice::Sync() {
  for (auto& stream : AllStreams()) stream->Sync();
}

// ---- buffers -----------------------------------------------------------------------------------

VkResult VulkanDevice::AllocateMemory(const VkMemoryRequirements& req, VkDeviceMemory* memory) {
  VkResult last = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  const VkPhysicalDeviceMemoryProperties& mp = info_.memory;
  for (VkMemoryPropertyFlags want : kMemoryPreference) {
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
      if (!(req.memoryTypeBits & (1u << i))) continue;
      if ((mp.memoryTypes[i].propertyFlags & want) != want) continue;
      VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
      ai.allocationSize = req.size;
      ai.memoryTypeIndex = i;
      last = Vk().vkAllocateMemory(device_, &ai, nullptr, memory);
      if (last == VK_SUCCESS) return last;
    }
  }
  return last;
}

VulkanBuffer* VulkanDevice::CreateBuffer(size_t nbytes, VkBufferUsageFlags usage) {
  if (info_.max_allocation_size != 0 && nbytes > info_.max_allocation_size) {
    TVM_FFI_THROW(ValueError) << "cannot allocate " << nbytes << " bytes on " << Describe()
                              << ": a single allocation may hold at most "
                              << info_.max_allocation_size << " bytes (maxMemoryAllocationSize)";
  }
  auto buf = std::make_unique<VulkanBuffer>();
  buf->nbytes = nbytes;
  buf->capacity = std::max<VkDeviceSize>((nbytes + 15) / 16 * 16, 16);
  buf->device_id = id_;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = buf->capacity;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  const DriverTable& vk = Vk();
  VkResult rc = vk.vkCreateBuffer(device_, &bci, nullptr, &buf->buffer);
  const char* failed = "vkCreateBuffer";
  if (rc == VK_SUCCESS) {
    VkMemoryRequirements req{};
    vk.vkGetBufferMemoryRequirements(device_, buf->buffer, &req);
    failed = "vkAllocateMemory";
    rc = AllocateMemory(req, &buf->memory);
  }
  if (rc == VK_SUCCESS) {
    failed = "vkBindBufferMemory";
    rc = vk.vkBindBufferMemory(device_, buf->buffer, buf->memory, 0);
  }
  void* host = nullptr;
  if (rc == VK_SUCCESS) {
    failed = "vkMapMemory";
    rc = vk.vkMapMemory(device_, buf->memory, 0, VK_WHOLE_SIZE, 0, &host);
  }
  if (rc != VK_SUCCESS) {
    DestroyBuffer(buf.release());
    TVM_FFI_THROW(RuntimeError) << "cannot allocate " << nbytes << " bytes on " << Describe()
                                << ": " << failed << " failed with " << ResultString(rc);
  }
  buf->host = static_cast<char*>(host);
  return buf.release();
}

void VulkanDevice::DestroyBuffer(VulkanBuffer* buf) {
  if (buf->buffer != VK_NULL_HANDLE) Vk().vkDestroyBuffer(device_, buf->buffer, nullptr);
  if (buf->memory != VK_NULL_HANDLE) Vk().vkFreeMemory(device_, buf->memory, nullptr);
  delete buf;
}

void VulkanDevice::ReleaseBuffer(VulkanBuffer* buf) {
  // Every stream's newest batch shares the record; the last of them to complete destroys the
  // buffer (now, when no stream has pending work).
  auto pending = std::make_shared<Batch::DeferredFree>(this, buf);
  for (auto& stream : AllStreams()) stream->DeferFree(pending);
}

}  // namespace tvm_backend_vulkan
