/*!
 * \file vulkan_device.h
 * \brief Process-wide Vulkan state: the instance, the physical devices (discovered once, on first
 *        use), one logical device per device id (created on its first use), its queue and the
 *        batches of recorded work, and the registry of buffers this backend allocated.
 *
 * Device ids: every physical device with a compute-capable queue family, in the loader's order.
 *
 * Work submission: work is recorded per stream (VulkanStream): the default stream (the null
 * handle) and those CreateStream makes. The logical device opens as many queues of its compute
 * family as the family offers (at most kMaxQueues); the default stream submits to queue 0, the
 * k-th created stream of a device to queue k % count (streams share a queue when the family has
 * fewer; vkQueueSubmit is serialized per queue). Each stream has its own command pool, batches and
 * fences. Kernel launches are recorded into the current stream's command buffer (a Batch) and
 * submitted when something needs the results (StreamSync, a copy, a module release) or after
 * kFlushDispatches launches, so a launch costs a few vkCmd* calls and no submission. Submitted
 * batches are recycled once their fence signals. Launches on one stream run in order; streams are
 * unordered with respect to each other. Copies, module releases and a stream's release wait for
 * every stream of the device (copies must see all earlier work on their buffers); a buffer freed
 * while work is pending on some streams is destroyed when the newest batch of each of them
 * completes. Stream handles are process-unique numbers, never reused: a freed or unknown handle is
 * a ValueError.
 *
 * Buffers: a VulkanBuffer record (VkBuffer, its memory, persistently mapped host pointer) is what
 * DLTensor::data points to. Memory is always host-visible and coherent (device-local too where the
 * device offers it), so copies are memcpy after the pending work finished.
 */
#ifndef TVM_BACKEND_VULKAN_VULKAN_DEVICE_H_
#define TVM_BACKEND_VULKAN_VULKAN_DEVICE_H_

#include <tvm/runtime/buffer_registry.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/lazy_discovery.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "vulkan_driver.h"

namespace tvm_backend_vulkan {

/*! \brief What to install when discovery finds no usable device (shown in every error). */
extern const char* const kInstallFix;

/*! \brief Optional features of a device, each enabled on its logical device when supported. */
struct DeviceFeatures {
  bool int64 = false;                 // shaderInt64
  bool float64 = false;               // shaderFloat64
  bool int16 = false;                 // shaderInt16
  bool float16 = false;               // shaderFloat16 (VK_KHR_shader_float16_int8)
  bool int8 = false;                  // shaderInt8 (VK_KHR_shader_float16_int8)
  bool storage_buffer_16bit = false;  // storageBuffer16BitAccess (core 1.1)
  bool storage_buffer_8bit = false;   // storageBuffer8BitAccess (VK_KHR_8bit_storage)
  bool push_descriptor = false;       // VK_KHR_push_descriptor
  bool float_controls = false;        // VK_KHR_shader_float_controls
  /*! \brief Float widths whose infinities, NaNs and signed zeros shaders may ask to keep
   *  (shaderSignedZeroInfNanPreserveFloat16/32/64 as bits 0, 1, 2). */
  uint32_t inf_nan_preserved = 0;
  /*! \brief VkSubgroupFeatureFlags usable in compute shaders (0 when compute has none). */
  uint32_t subgroup_operations = 0;
};

/*! \brief One physical device and what discovery learned about it (immutable afterwards). */
struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  /*! \brief The compute queue family whose queues run this device's work. */
  uint32_t queue_family = 0;
  /*! \brief Queues that family offers. */
  uint32_t queue_count = 1;
  uint32_t subgroup_size = 1;
  uint32_t max_push_descriptors = 0;
  VkDeviceSize max_allocation_size = 0;
  /*! \brief Size of the largest device-local memory heap. */
  VkDeviceSize device_local_bytes = 0;
  /*! \brief The features the logical device enables (supported, with their extension present). */
  DeviceFeatures features;
  /*! \brief Device extensions the logical device enables. */
  std::vector<const char*> extensions;
  /*! \brief Every attribute GetAttr answers, by key (AttributesOf, when the device is found). */
  tvm::runtime::AttributeList attributes;
};

/*! \brief The attributes of a described device, by key. */
tvm::runtime::AttributeList AttributesOf(const PhysicalDeviceInfo& d);

/*! \brief What a buffer handle (DLTensor::data) points to. */
struct VulkanBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  /*! \brief Persistently mapped host address of the buffer's first byte. */
  char* host = nullptr;
  /*! \brief Bytes requested by the caller. */
  size_t nbytes = 0;
  /*! \brief Bytes of the VkBuffer (at least 16, so that empty buffers can be bound). */
  VkDeviceSize capacity = 0;
  int device_id = 0;
};

/*! \brief One command buffer of recorded launches and what must live until it completes. */
struct Batch {
  /*! \brief A freed buffer waiting for pending work (defined in vulkan_device.cc). */
  struct DeferredFree;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  /*! \brief Descriptor pools of the sets this batch allocated (no push descriptors); the first
   *  `pools_used` are full or in use. Reset when the batch is recycled. */
  std::vector<VkDescriptorPool> pools;
  size_t pools_used = 0;
  uint32_t dispatches = 0;
  /*! \brief Pipeline bound last in `cmd`, to skip redundant binds. */
  VkPipeline bound = VK_NULL_HANDLE;
  /*! \brief Buffers freed while this batch was its stream's newest work (shared with the other
   *  streams' newest batches): each is destroyed when the last of those batches completes. */
  std::vector<std::shared_ptr<DeferredFree>> frees;
  /*! \brief The batch's uniform arena: host-visible uniform buffers holding the scalar blocks of
   *  its launches (kernels with more than 128 bytes of scalars), filled in order: the first
   *  `uniforms_used` are full, the next one is used up to `uniform_offset`. Rewound (the buffers
   *  kept) when the batch is recycled, after its fence signalled. */
  std::vector<VulkanBuffer*> uniforms;
  size_t uniforms_used = 0;
  VkDeviceSize uniform_offset = 0;
};

class VulkanDevice;

/*!
 * \brief A stream: its command pool, batches and fences, submitted to one queue of its device.
 *        Callers take mutex() around Recording()/AllocateDescriptorSet()/AllocateUniform()/
 *        FinishDispatch(); the other methods lock themselves. Destroying it waits for its work.
 */
class VulkanStream {
 public:
  VulkanStream(VulkanDevice* device, uint32_t queue_index);
  ~VulkanStream();
  VulkanStream(const VulkanStream&) = delete;
  VulkanStream& operator=(const VulkanStream&) = delete;

  /*! \brief Guards the recording state. */
  std::mutex& mutex() { return mu_; }
  /*! \brief The batch being recorded, begun on demand. Caller holds mutex(). */
  Batch& Recording();
  /*! \brief A descriptor set of `layout` from `batch`'s pools. Caller holds mutex(). */
  VkDescriptorSet AllocateDescriptorSet(Batch* batch, VkDescriptorSetLayout layout);
  /*!
   * \brief Copies `size` bytes (a kernel's scalar block) into `batch`'s uniform arena, where they
   *  stay until the batch completes, and returns the uniform-buffer range holding them (its offset
   *  a multiple of minUniformBufferOffsetAlignment). Caller holds mutex().
   */
  VkDescriptorBufferInfo AllocateUniform(Batch* batch, const void* data, VkDeviceSize size);
  /*! \brief Count a recorded dispatch; submits the batch every kFlushDispatches. Caller holds
   *  mutex(). */
  void FinishDispatch(Batch* batch);
  /*! \brief Submit the recorded work and wait until everything submitted has completed. */
  void Sync();
  /*! \brief Attach `pending` to this stream's newest work, if any (ReleaseBuffer). */
  void DeferFree(const std::shared_ptr<Batch::DeferredFree>& pending);
  uint32_t queue_index() const { return queue_index_; }

  /*! \brief Submitted batches in flight before a new batch waits for the oldest. */
  static constexpr size_t kMaxInFlight = 4;

 private:
  void FlushLocked();
  void WaitAllLocked();
  /*! \brief Recycle completed batches; with `wait_oldest`, first wait for the oldest one. */
  void ReclaimLocked(bool wait_oldest);
  void Recycle(Batch* batch);
  Batch* NewBatch();

  VulkanDevice* device_;
  uint32_t queue_index_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::mutex mu_;
  Batch* recording_ = nullptr;
  std::deque<Batch*> in_flight_;
  std::vector<Batch*> free_;
  std::vector<std::unique_ptr<Batch>> batches_;
};

/*!
 * \brief A logical device: its queues, streams and buffers. Thread-safe. Never destroyed (Vulkan
 *        objects must not be released from static destructors, after the driver may be gone).
 */
class VulkanDevice {
 public:
  /*! \brief Creates the logical device with every feature of `info.features` enabled. */
  VulkanDevice(const PhysicalDeviceInfo& info, int id);

  const PhysicalDeviceInfo& info() const { return info_; }
  int id() const { return id_; }
  VkDevice handle() const { return device_; }
  /*! \brief vkCmdPushDescriptorSetKHR, or null when descriptor sets come from pools. */
  PFN_vkCmdPushDescriptorSetKHR push_descriptor_fn() const { return push_descriptor_; }
  /*! \brief "vulkan(0) ('llvmpipe ...')" for messages. */
  std::string Describe() const;

  /*! \brief Queues opened on the logical device. */
  uint32_t num_queues() const { return static_cast<uint32_t>(queues_.size()); }
  /*! \brief Submit to queue `index`, serialized with the other submissions to that queue. */
  VkResult Submit(uint32_t index, const VkSubmitInfo& si, VkFence fence);

  /*! \brief The stream of `handle` (null: the default stream); ValueError when unknown. */
  std::shared_ptr<VulkanStream> Stream(TVMFFIStreamHandle handle);
  /*! \brief A new stream on the next queue (round robin); its handle. */
  TVMFFIStreamHandle CreateStream();
  /*! \brief Wait for `handle`'s work and release it; ValueError when unknown (null: no-op). */
  void FreeStream(TVMFFIStreamHandle handle);
  /*! \brief Submit the recorded work of every stream and wait until all of it has completed. */
  void Sync();

  /*! \brief A new buffer of `nbytes` (host-visible, persistently mapped); `usage` defaults to a
   *  storage buffer that copies may read and write. */
  VulkanBuffer* CreateBuffer(size_t nbytes, VkBufferUsageFlags usage = kStorageUsage);
  /*! \brief Destroy `buf` now, or when the pending work (of any stream) that may use it
   *  completes. */
  void ReleaseBuffer(VulkanBuffer* buf);
  /*! \brief Destroy `buf` now. */
  void DestroyBuffer(VulkanBuffer* buf);

  /*! \brief The usage of the buffers CreateBuffer makes for tensors. */
  static constexpr VkBufferUsageFlags kStorageUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  /*! \brief Bytes of each uniform-arena buffer (or the scalar block, if larger). */
  static constexpr VkDeviceSize kUniformChunk = 64 * 1024;
  /*! \brief Launches recorded into one command buffer before it is submitted without waiting. */
  static constexpr uint32_t kFlushDispatches = 1024;
  /*! \brief Most queues of the compute family a logical device opens. */
  static constexpr uint32_t kMaxQueues = 8;

 private:
  /*! \brief The default stream and the created ones (a snapshot). */
  std::vector<std::shared_ptr<VulkanStream>> AllStreams();
  VkResult AllocateMemory(const VkMemoryRequirements& req, VkDeviceMemory* memory);

  const PhysicalDeviceInfo& info_;
  int id_;
  VkDevice device_ = VK_NULL_HANDLE;
  std::vector<VkQueue> queues_;
  std::unique_ptr<std::mutex[]> queue_mu_;
  PFN_vkCmdPushDescriptorSetKHR push_descriptor_ = nullptr;
  std::shared_ptr<VulkanStream> default_stream_;
  std::mutex streams_mu_;
  std::unordered_map<uintptr_t, std::shared_ptr<VulkanStream>> streams_;
  uint32_t streams_created_ = 0;
};

/*!
 * \brief The process-wide Vulkan state, in two steps so that activation stays cheap: Load() (at
 *        backend init) only dlopens the loader; discovery (vkCreateInstance and the device
 *        queries) runs once, thread-safely, on the first use of a device or a kernel
 *        (TryGlobal / Global). Never destroyed.
 */
class VulkanRuntime {
 public:
  /*! \brief dlopen libvulkan and resolve its entry points: "" on success, else why not. */
  static std::string Load();
  /*!
   * \brief The runtime, discovering devices on the first call (std::call_once).
   * \param why Set to the reason when no usable device was found.
   * \return Null when no usable device was found.
   */
  static VulkanRuntime* TryGlobal(std::string* why = nullptr);
  /*! \brief The runtime; throws RuntimeError "<what>: <reason>; <fix>" without a device. */
  static VulkanRuntime* Global(const std::string& what);
  /*! \brief Throw the RuntimeError of Global for `what` (discovery must have failed). */
  [[noreturn]] static void ThrowUnavailable(const std::string& what);
  /*! \brief Whether discovery has run in this process (for tests of lazy activation). */
  static bool Discovered();
  /*! \brief Whether the devices are the parent's (this is a child forked after discovery). */
  static bool Forked();

  int num_devices() const { return static_cast<int>(infos_.size()); }
  /*! \brief Physical device `id`; throws ValueError naming the valid range when out of range. */
  const PhysicalDeviceInfo& Info(int id) const;
  /*! \brief The logical device `id`, created on first use. */
  VulkanDevice& Device(int id);

  /*! \brief Allocate a buffer on device `id`, recorded in the registry. */
  VulkanBuffer* Alloc(int id, size_t nbytes);
  /*! \brief Release a buffer; never throws (warns on stderr about unknown handles). */
  void Free(void* ptr);
  /*! \brief The buffers allocated here and not yet freed. */
  const tvm::runtime::BufferRegistry& buffers() const { return buffers_; }

 private:
  friend class tvm::runtime::LazyDiscovery<VulkanRuntime>;
  VulkanRuntime() = default;
  /*! \brief The one discovery of this process (never destroyed; see lazy_discovery.h). */
  static tvm::runtime::LazyDiscovery<VulkanRuntime>& Discovery();
  /*! \brief Create the instance and enumerate devices: "" on success, else why none is usable. */
  std::string Discover();

  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<PhysicalDeviceInfo> infos_;
  std::mutex devices_mu_;
  std::unique_ptr<std::atomic<VulkanDevice*>[]> devices_;
  tvm::runtime::BufferRegistry buffers_{"vulkan", "Vulkan"};
};

/*! \brief The DeviceAPI of kDLVulkan (defined in vulkan_device_api.cc; never destroyed). */
tvm::runtime::DeviceAPI* GlobalDeviceAPI();

}  // namespace tvm_backend_vulkan

#endif  // TVM_BACKEND_VULKAN_VULKAN_DEVICE_H_
