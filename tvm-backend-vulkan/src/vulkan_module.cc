/*!
 * \file vulkan_module.cc
 * \brief The "vulkan" device module: SPIR-V checks, shader modules and pipelines, launch.
 */
#include "vulkan_module.h"

#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/launch_limits.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vulkan_device.h"
#include "vulkan_spirv.h"

namespace tvm_backend_vulkan {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceModuleSpec;
using tvm::runtime::FunctionInfo;
using tvm::runtime::KernelArgKind;
using tvm::runtime::KernelModuleBase;
using tvm::runtime::LaunchConfig;

namespace {

/*! \brief A SPIR-V capability that needs an optional device feature. */
struct CapabilityNeed {
  uint32_t capability;
  const char* name;
  bool DeviceFeatures::* feature;
};

constexpr CapabilityNeed kCapabilityNeeds[] = {
    {9, "Float16", &DeviceFeatures::float16},
    {10, "Float64", &DeviceFeatures::float64},
    {11, "Int64", &DeviceFeatures::int64},
    {22, "Int16", &DeviceFeatures::int16},
    {39, "Int8", &DeviceFeatures::int8},
    {4433, "StorageBuffer16BitAccess", &DeviceFeatures::storage_buffer_16bit},
    {4448, "StorageBuffer8BitAccess", &DeviceFeatures::storage_buffer_8bit},
};

/*! \brief GroupNonUniform* capabilities 61..68; capability 61 + k needs subgroup feature bit k
 *  (VK_SUBGROUP_FEATURE_BASIC_BIT << k). */
constexpr uint32_t kGroupNonUniform = 61;
constexpr const char* kGroupNonUniformNames[] = {
    "GroupNonUniform",          "GroupNonUniformVote",    "GroupNonUniformArithmetic",
    "GroupNonUniformBallot",    "GroupNonUniformShuffle", "GroupNonUniformShuffleRelative",
    "GroupNonUniformClustered", "GroupNonUniformQuad"};

/*! \brief Bytes of push constants every Vulkan device offers (maxPushConstantsSize >= 128). */
constexpr uint32_t kPushConstantLimit = 128;

/*! \brief How one kernel's arguments map onto bindings and the scalar block. */
struct KernelLayout {
  /*! \brief Argument index of each storage-buffer binding (binding k = buffers[k]). */
  std::vector<size_t> buffers;
  struct Scalar {
    size_t arg;
    KernelArgKind kind;
    uint32_t offset;
  };
  std::vector<Scalar> scalars;
  /*! \brief Bytes of the scalar block, rounded up to 4 (0: no block). */
  uint32_t scalar_size = 0;
  /*! \brief Whether the scalar block is a uniform buffer at binding buffers.size() (else it is
   *  the push constants). */
  bool uniform = false;
  /*! \brief Descriptor-set bindings: the storage buffers, then the uniform buffer if any. */
  uint32_t num_bindings() const {
    return static_cast<uint32_t>(buffers.size()) + (uniform ? 1 : 0);
  }
};

/*!
 * \brief The layout of kernel `info`, from its arg types alone; ValueError for a scalar type the
 *  ABI does not carry. The one place of the runtime's side of the rule (the emitter's side is
 *  scalar_block in emitter.py; the two must agree): scalars are packed in parameter order, each at
 *  the previous end rounded up to its size; a block of more than kPushConstantLimit bytes is a
 *  uniform buffer at binding (number of buffers), else it is the push constants.
 */
KernelLayout MakeLayout(const FunctionInfo& info) {
  KernelLayout layout;
  uint32_t end = 0;
  for (size_t i = 0; i < info.arg_types.size(); ++i) {
    if (tvm::runtime::IsBufferArgType(info.arg_types[i])) {
      layout.buffers.push_back(i);
      continue;
    }
    KernelArgKind kind = tvm::runtime::ParseKernelArgType(info, i);
    uint32_t size = 0;
    if (kind == KernelArgKind::kI32 || kind == KernelArgKind::kU32 || kind == KernelArgKind::kF32) {
      size = 4;
    } else if (kind == KernelArgKind::kI64 || kind == KernelArgKind::kU64 ||
               kind == KernelArgKind::kF64) {
      size = 8;
    } else {
      TVM_FFI_THROW(ValueError) << "vulkan kernel " << info.name << ": scalar argument " << i
                                << " has type " << info.arg_types[i]
                                << "; Vulkan kernels take int32, uint32, float32, int64, uint64 "
                                << "or float64 scalars (narrower ones are passed widened to 32 "
                                << "bits)";
    }
    uint32_t offset = (end + size - 1) / size * size;
    layout.scalars.push_back({i, kind, offset});
    end = offset + size;
  }
  layout.scalar_size = (end + 3) / 4 * 4;
  layout.uniform = end > kPushConstantLimit;
  return layout;
}

/*!
 * \brief What a kernel's pipelines are specialized for, the key of its pipelines: the workgroup
 *  size (specialization constants 0..2) and the bytes of its launch-sized shared buffer (constant
 *  3; 0 for a kernel without one).
 */
using PipelineKey = std::array<uint32_t, 4>;

/*! \brief One kernel's Vulkan objects on one device. */
struct KernelObjects {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  /*! \brief Whether bindings are pushed (VK_KHR_push_descriptor) rather than allocated. */
  bool push = false;
  std::map<PipelineKey, VkPipeline> pipelines;
};

/*! \brief The module's Vulkan objects on one device. */
struct DeviceProgram {
  VulkanDevice* device = nullptr;
  VkShaderModule shader = VK_NULL_HANDLE;
  /*! \brief By function index; created on the kernel's first launch on this device. */
  std::vector<std::unique_ptr<KernelObjects>> kernels;
};

/*! \brief What a launch records: the pipeline and how its arguments are bound. */
struct BoundKernel {
  VkPipeline pipeline;
  VkPipelineLayout layout;
  VkDescriptorSetLayout set_layout;
  bool push;
  /*! \brief Whether the scalars travel in a uniform buffer (KernelLayout::uniform). */
  bool uniform;
};

class VulkanModuleObj final : public KernelModuleBase {
 public:
  explicit VulkanModuleObj(DeviceModuleSpec spec);
  ~VulkanModuleObj();

 private:
  void Launch(size_t index, ffi::PackedArgs args) final;
  void CheckInterface() const;
  int ResolveBuffers(size_t index, ffi::PackedArgs args, VulkanRuntime* rt, int dev_id,
                     std::vector<VkDescriptorBufferInfo>* out) const;
  void CheckLimits(size_t index, const LaunchConfig& cfg, const PhysicalDeviceInfo& dev) const;
  void CheckCapabilities(const VulkanDevice& dev) const;
  BoundKernel Prepare(VulkanDevice* dev, size_t index, const PipelineKey& block);
  DeviceProgram& Program(VulkanDevice* dev);
  KernelObjects& Kernel(DeviceProgram* prog, size_t index);
  VkPipeline CreatePipeline(DeviceProgram* prog, size_t index, const KernelObjects& k,
                            const PipelineKey& block);
  void Record(VulkanDevice* dev, VulkanStream* stream, const BoundKernel& k, size_t nbuf,
              const std::vector<VkDescriptorBufferInfo>& buffers, const void* scalars,
              uint32_t scalar_size, const LaunchConfig& cfg);

  std::vector<uint32_t> words_;
  SpirvSummary summary_;
  bool validated_ = false;  // by ValidateSpirv (guarded by mu_)
  std::vector<KernelLayout> layouts_;
  /*! \brief Per kernel, its loop-iteration bound from the SPIR-V (parsed once). */
  std::vector<tvm::runtime::LoopIterationBound> loop_bounds_;
  /*! \brief Per kernel, its constant-size shared bytes when it also sizes one at launch, else -1.
   */
  std::vector<int64_t> static_shared_;
  std::mutex mu_;
  std::unordered_map<int, std::unique_ptr<DeviceProgram>> programs_;
};

VulkanModuleObj::VulkanModuleObj(DeviceModuleSpec spec)
    : KernelModuleBase("vulkan", std::move(spec)) {
  if (spec_.fmt != "spirv") {
    TVM_FFI_THROW(ValueError) << "a vulkan module needs format 'spirv' (a SPIR-V binary), got '"
                              << spec_.fmt << "'";
  }
  words_ = SpirvWords(spec_.payload);
  summary_ = ParseSpirv(words_);
  for (const FunctionInfo& info : spec_.functions) {
    int64_t static_shared = -1;  // -1: the kernel sizes no shared buffer at launch
    for (const auto& kv : summary_.static_shared) {
      if (kv.first == info.name) static_shared = std::strtoll(kv.second.c_str(), nullptr, 10);
    }
    if (static_shared < -1 || static_shared > (int64_t{1} << 32)) {
      TVM_FFI_THROW(ValueError) << "vulkan kernel '" << info.name << "': its static_shared bytes ("
                                << static_shared << ") are no byte count of shared memory";
    }
    static_shared_.push_back(static_shared);
    bool found = false;
    for (const std::string& ep : summary_.entry_points) found |= ep == info.name;
    if (!found) {
      std::string names;
      for (const std::string& ep : summary_.entry_points) names += (names.empty() ? "" : ", ") + ep;
      TVM_FFI_THROW(ValueError) << "the vulkan module's SPIR-V has no GLCompute entry point named '"
                                << info.name << "' (it has: " << (names.empty() ? "none" : names)
                                << ")";
    }
    layouts_.push_back(MakeLayout(info));
    std::string bound;
    for (const auto& kv : summary_.loop_bounds) {
      if (kv.first == info.name) bound = kv.second;
    }
    loop_bounds_.push_back(tvm::runtime::ParseLoopIterationBound(info, bound));
  }
  CheckInterface();
}

void VulkanModuleObj::CheckInterface() const {
  // A shader resource outside the pipeline layout is undefined behaviour (drivers may crash).
  size_t max_buffers = 0;  // bindings, counting a kernel's uniform buffer of scalars
  for (const KernelLayout& layout : layouts_) {
    max_buffers = std::max<size_t>(max_buffers, layout.num_bindings());
  }
  for (uint32_t set : summary_.descriptor_sets) {
    if (set != 0) {
      TVM_FFI_THROW(ValueError) << "the vulkan module's SPIR-V declares a resource in descriptor "
                                << "set " << set << "; kernels bind their buffers in set 0";
    }
  }
  for (uint32_t binding : summary_.bindings) {
    if (binding >= max_buffers) {
      TVM_FFI_THROW(ValueError) << "the vulkan module's SPIR-V declares a resource at binding "
                                << binding << ", but its kernels take at most " << max_buffers
                                << " buffers (bindings 0.." << static_cast<int64_t>(max_buffers) - 1
                                << ")";
    }
  }
}

VulkanModuleObj::~VulkanModuleObj() {
  // Pending launches (on any stream) may use these pipelines: finish them first. Never throws.
  for (auto& entry : programs_) {
    if (!entry.second) continue;
    DeviceProgram& prog = *entry.second;
    try {
      prog.device->Sync();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[tvm vulkan] warning: releasing a module: %s\n", e.what());
    }
    VkDevice dev = prog.device->handle();
    for (auto& k : prog.kernels) {
      if (!k) continue;
      for (auto& p : k->pipelines) Vk().vkDestroyPipeline(dev, p.second, nullptr);
      Vk().vkDestroyPipelineLayout(dev, k->layout, nullptr);
      Vk().vkDestroyDescriptorSetLayout(dev, k->set_layout, nullptr);
    }
    Vk().vkDestroyShaderModule(dev, prog.shader, nullptr);
  }
}

void VulkanModuleObj::CheckCapabilities(const VulkanDevice& dev) const {
  const DeviceFeatures& f = dev.info().features;
  for (uint32_t cap : summary_.capabilities) {
    const char* missing = nullptr;
    for (const CapabilityNeed& need : kCapabilityNeeds) {
      if (cap == need.capability && !(f.*need.feature)) missing = need.name;
    }
    if (cap >= kGroupNonUniform && cap < kGroupNonUniform + 8 &&
        !(f.subgroup_operations & (1u << (cap - kGroupNonUniform)))) {
      missing = kGroupNonUniformNames[cap - kGroupNonUniform];
    }
    if (missing != nullptr) {
      TVM_FFI_THROW(ValueError) << "the vulkan module needs the SPIR-V capability " << missing
                                << ", which device '" << dev.info().name << "' (vulkan(" << dev.id()
                                << ")) does not support; use another dtype or device";
    }
  }
}

DeviceProgram& VulkanModuleObj::Program(VulkanDevice* dev) {
  auto found = programs_.find(dev->id());
  if (found != programs_.end()) return *found->second;
  // Nothing is stored until the program exists: a refused first launch (a capability the device
  // lacks, SPIR-V the validator rejects) leaves no empty entry for the destructor to meet.
  // SPIRV-Tools' full check, once, before the first driver sees the code (not at creation:
  // modules the code generator builds were validated there, and many are never launched).
  if (!validated_) {
    ValidateSpirv(words_);
    validated_ = true;
  }
  CheckCapabilities(*dev);
  // IEEE infinities, NaNs and signed zeros where the device can keep them (the code generator
  // asks for every width it uses)
  std::vector<uint32_t> words = ForFloatControls(words_, dev->info().features.inf_nan_preserved);
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = words.size() * 4;
  ci.pCode = words.data();
  VkShaderModule shader = VK_NULL_HANDLE;
  VkResult rc = Vk().vkCreateShaderModule(dev->handle(), &ci, nullptr, &shader);
  if (rc != VK_SUCCESS) {
    TVM_FFI_THROW(RuntimeError) << "loading the vulkan module's SPIR-V on " << dev->Describe()
                                << ": vkCreateShaderModule failed with " << ResultString(rc);
  }
  auto prog = std::make_unique<DeviceProgram>();
  prog->device = dev;
  prog->shader = shader;
  prog->kernels.resize(spec_.functions.size());
  return *(programs_[dev->id()] = std::move(prog));
}

KernelObjects& VulkanModuleObj::Kernel(DeviceProgram* prog, size_t index) {
  if (prog->kernels[index]) return *prog->kernels[index];
  VulkanDevice* dev = prog->device;
  const KernelLayout& layout = layouts_[index];
  auto k = std::make_unique<KernelObjects>();
  uint32_t nbuf = static_cast<uint32_t>(layout.buffers.size());
  uint32_t nbind = layout.num_bindings();
  k->push = dev->push_descriptor_fn() != nullptr && nbind <= dev->info().max_push_descriptors;
  std::vector<VkDescriptorSetLayoutBinding> bindings(nbind);
  for (uint32_t b = 0; b < nbuf; ++b) {
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  if (layout.uniform) {
    bindings[nbuf] = {nbuf, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
                      nullptr};
  }
  VkDescriptorSetLayoutCreateInfo sci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sci.flags = k->push ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
  sci.bindingCount = nbind;
  sci.pBindings = bindings.data();
  TVM_VULKAN_CALL(vkCreateDescriptorSetLayout, dev->handle(), &sci, nullptr, &k->set_layout);
  // A uniform block of scalars replaces the push constants: no push range then.
  uint32_t push_size = layout.uniform ? 0 : layout.scalar_size;
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.setLayoutCount = nbind > 0 ? 1 : 0;
  lci.pSetLayouts = &k->set_layout;
  lci.pushConstantRangeCount = push_size > 0 ? 1 : 0;
  lci.pPushConstantRanges = &range;
  VkResult rc = Vk().vkCreatePipelineLayout(dev->handle(), &lci, nullptr, &k->layout);
  if (rc != VK_SUCCESS) {
    Vk().vkDestroyDescriptorSetLayout(dev->handle(), k->set_layout, nullptr);
    CheckResult(rc, "vkCreatePipelineLayout");
  }
  prog->kernels[index] = std::move(k);
  return *prog->kernels[index];
}

VkPipeline VulkanModuleObj::CreatePipeline(DeviceProgram* prog, size_t index,
                                           const KernelObjects& k, const PipelineKey& block) {
  const std::string& name = spec_.functions[index].name;
  const VkSpecializationMapEntry entries[4] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {3, 12, 4}};
  VkSpecializationInfo spec{4, entries, sizeof(PipelineKey), block.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = prog->shader;
  ci.stage.pName = name.c_str();
  ci.stage.pSpecializationInfo = &spec;
  ci.layout = k.layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult rc = Vk().vkCreateComputePipelines(prog->device->handle(), VK_NULL_HANDLE, 1, &ci,
                                              nullptr, &pipeline);
  if (rc != VK_SUCCESS) {
    TVM_FFI_THROW(RuntimeError) << "building vulkan kernel " << name << " with workgroup size ("
                                << block[0] << ", " << block[1] << ", " << block[2] << ") on "
                                << prog->device->Describe()
                                << ": vkCreateComputePipelines failed with " << ResultString(rc);
  }
  return pipeline;
}

BoundKernel VulkanModuleObj::Prepare(VulkanDevice* dev, size_t index, const PipelineKey& block) {
  std::lock_guard<std::mutex> lock(mu_);
  DeviceProgram& prog = Program(dev);
  KernelObjects& k = Kernel(&prog, index);
  auto it = k.pipelines.find(block);
  if (it == k.pipelines.end()) {
    it = k.pipelines.emplace(block, CreatePipeline(&prog, index, k, block)).first;
  }
  return BoundKernel{it->second, k.layout, k.set_layout, k.push, layouts_[index].uniform};
}

/*! \brief The byte extent a tensor argument covers (0 for an empty one). */
VkDeviceSize TensorBytes(const DLTensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return static_cast<VkDeviceSize>(n) * ((t->dtype.bits * t->dtype.lanes + 7) / 8);
}

/*!
 * \brief Fills `out` with the descriptor of every buffer argument and returns the launch device:
 *  that of the tensors (`dev_id`, from CheckLaunchTensors), else of the first raw buffer, else 0.
 */
int VulkanModuleObj::ResolveBuffers(size_t index, ffi::PackedArgs args, VulkanRuntime* rt,
                                    int dev_id, std::vector<VkDescriptorBufferInfo>* out) const {
  const std::string& kname = spec_.functions[index].name;
  for (size_t i : layouts_[index].buffers) {
    tvm::runtime::BufferArgument arg =
        tvm::runtime::BufferArgumentOf("vulkan", spec_.functions[index], args, i);
    const void* ptr = arg.data;
    const DLTensor* tensor = arg.tensor;
    auto* buf = rt->buffers().ArgumentRecord<VulkanBuffer>(ptr, kname, i);
    if (dev_id < 0) dev_id = buf->device_id;
    if (buf->device_id != dev_id) {
      TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": argument " << i
                                << " lives on vulkan(" << buf->device_id
                                << "), but the kernel runs on vulkan(" << dev_id << ")";
    }
    const VkPhysicalDeviceLimits& lim = rt->Info(dev_id).props.limits;
    VkDeviceSize offset = tensor != nullptr ? tensor->byte_offset : 0;
    VkDeviceSize range = buf->capacity - std::min<VkDeviceSize>(offset, buf->capacity);
    if (tensor != nullptr && TensorBytes(tensor) > 0) range = TensorBytes(tensor);
    if (offset % lim.minStorageBufferOffsetAlignment != 0) {
      TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": argument " << i
                                << " has byte offset " << offset << ", which is not a multiple of "
                                << "the device's storage-buffer offset alignment of "
                                << lim.minStorageBufferOffsetAlignment << " bytes";
    }
    tvm::runtime::CheckBufferBytes(spec_.functions[index], i, args,
                                   offset < buf->nbytes ? buf->nbytes - offset : 0);
    if (offset >= buf->capacity || range > buf->capacity - offset) {
      TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": argument " << i << " covers "
                                << "bytes [" << offset << ", " << offset + range << ") of a "
                                << buf->nbytes << "-byte Vulkan buffer";
    }
    if (range > lim.maxStorageBufferRange) {
      TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": argument " << i << " binds "
                                << range << " bytes, more than the device's maxStorageBufferRange"
                                << " of " << lim.maxStorageBufferRange << " bytes";
    }
    out->push_back(VkDescriptorBufferInfo{buf->buffer, offset, range});
  }
  return dev_id < 0 ? 0 : dev_id;
}

/*! \brief Workgroup size, group counts, bindings and push constants within the device's limits. */
void VulkanModuleObj::CheckLimits(size_t index, const LaunchConfig& cfg,
                                  const PhysicalDeviceInfo& dev) const {
  const std::string& kname = spec_.functions[index].name;
  const VkPhysicalDeviceLimits& lim = dev.props.limits;
  static const char* const kAxis[] = {"x", "y", "z"};
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (static_cast<uint64_t>(cfg.block[d]) > lim.maxComputeWorkGroupSize[d]) {
      TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": threadIdx." << kAxis[d]
                                << " extent " << cfg.block[d] << " exceeds the device's limit of "
                                << lim.maxComputeWorkGroupSize[d] << " (maxComputeWorkGroupSize)";
    }
    if (static_cast<uint64_t>(cfg.grid[d]) > lim.maxComputeWorkGroupCount[d]) {
      TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": blockIdx." << kAxis[d]
                                << " extent " << cfg.grid[d] << " exceeds the device's limit of "
                                << lim.maxComputeWorkGroupCount[d] << " (maxComputeWorkGroupCount)";
    }
    threads *= static_cast<uint64_t>(cfg.block[d]);  // each <= 2^32: no overflow in 3 steps
  }
  if (threads > lim.maxComputeWorkGroupInvocations) {
    TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": " << threads
                              << " threads per block exceed the device's limit of "
                              << lim.maxComputeWorkGroupInvocations
                              << " (maxComputeWorkGroupInvocations)";
  }
  int64_t shared = static_shared_[index] + cfg.dyn_shmem_bytes;
  if (static_shared_[index] >= 0 && shared > static_cast<int64_t>(lim.maxComputeSharedMemorySize)) {
    TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": " << cfg.dyn_shmem_bytes
                              << " bytes of shared memory sized at launch and "
                              << static_shared_[index] << " declared exceed the device's limit of "
                              << lim.maxComputeSharedMemorySize << " (maxComputeSharedMemorySize)";
  }
  const KernelLayout& layout = layouts_[index];
  if (layout.uniform && layout.scalar_size > lim.maxUniformBufferRange) {
    TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": its scalar arguments take "
                              << layout.scalar_size << " bytes (passed in a uniform buffer, being "
                              << "over " << kPushConstantLimit << "), more than the device's "
                              << "maxUniformBufferRange of " << lim.maxUniformBufferRange
                              << " bytes; pass fewer scalars, or put them in a buffer argument";
  }
  if (!layout.uniform && layout.scalar_size > lim.maxPushConstantsSize) {
    TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << ": its scalar arguments take "
                              << layout.scalar_size << " bytes of push constants, more than the "
                              << "device's maxPushConstantsSize of " << lim.maxPushConstantsSize;
  }
  if (layout.buffers.size() > lim.maxPerStageDescriptorStorageBuffers) {
    TVM_FFI_THROW(ValueError) << "vulkan kernel " << kname << " takes " << layout.buffers.size()
                              << " buffers, more than the device's limit of "
                              << lim.maxPerStageDescriptorStorageBuffers
                              << " (maxPerStageDescriptorStorageBuffers)";
  }
}

void VulkanModuleObj::Record(VulkanDevice* dev, VulkanStream* stream, const BoundKernel& k,
                             size_t nbuf, const std::vector<VkDescriptorBufferInfo>& buffers,
                             const void* scalars, uint32_t scalar_size, const LaunchConfig& cfg) {
  const DriverTable& vk = Vk();
  size_t nbind = nbuf + (k.uniform ? 1 : 0);
  std::array<VkWriteDescriptorSet, 16> inline_writes;
  std::vector<VkWriteDescriptorSet> heap_writes(nbind > inline_writes.size() ? nbind : 0);
  VkWriteDescriptorSet* writes =
      nbind > inline_writes.size() ? heap_writes.data() : inline_writes.data();
  for (size_t b = 0; b < nbuf; ++b) {
    writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstBinding = static_cast<uint32_t>(b);
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &buffers[b];
  }
  std::lock_guard<std::mutex> lock(stream->mutex());
  Batch& batch = stream->Recording();
  VkDescriptorBufferInfo uniform{};
  if (k.uniform) {  // the scalars live in the batch's arena until its submission completes
    uniform = stream->AllocateUniform(&batch, scalars, scalar_size);
    writes[nbuf] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[nbuf].dstBinding = static_cast<uint32_t>(nbuf);
    writes[nbuf].descriptorCount = 1;
    writes[nbuf].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    writes[nbuf].pBufferInfo = &uniform;
  }
  VkCommandBuffer cmd = batch.cmd;
  // Earlier launches (in this or a previous submission) write what this one may read or write.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0,
                          nullptr);
  if (batch.bound != k.pipeline) {
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
    batch.bound = k.pipeline;
  }
  if (nbind > 0 && k.push) {
    dev->push_descriptor_fn()(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0,
                              static_cast<uint32_t>(nbind), writes);
  } else if (nbind > 0) {
    VkDescriptorSet set = stream->AllocateDescriptorSet(&batch, k.set_layout);
    for (size_t b = 0; b < nbind; ++b) writes[b].dstSet = set;
    vk.vkUpdateDescriptorSets(dev->handle(), static_cast<uint32_t>(nbind), writes, 0, nullptr);
    vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &set, 0,
                               nullptr);
  }
  if (scalar_size > 0 && !k.uniform) {
    vk.vkCmdPushConstants(cmd, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, scalar_size, scalars);
  }
  vk.vkCmdDispatch(cmd, static_cast<uint32_t>(cfg.grid[0]), static_cast<uint32_t>(cfg.grid[1]),
                   static_cast<uint32_t>(cfg.grid[2]));
  stream->FinishDispatch(&batch);
}

void VulkanModuleObj::Launch(size_t index, ffi::PackedArgs args) {
  const FunctionInfo& info = spec_.functions[index];
  // The first launch may be what discovers the devices; without one, say so before anything else.
  VulkanRuntime* rt = VulkanRuntime::TryGlobal();
  if (rt == nullptr) VulkanRuntime::ThrowUnavailable("cannot launch vulkan kernel " + info.name);
  LaunchConfig cfg = LaunchConfig::Decode(info, args);
  int dev_id = tvm::runtime::CheckLaunchTensors(info, args, kDLVulkan, /*same_device=*/true);
  if (cfg.empty()) return;
  const KernelLayout& layout = layouts_[index];
  std::vector<VkDescriptorBufferInfo> buffers;
  buffers.reserve(layout.buffers.size());
  dev_id = ResolveBuffers(index, args, rt, dev_id, &buffers);
  CheckLimits(index, cfg, rt->Info(dev_id));
  tvm::runtime::CheckLoopIterationBound("vulkan", info, loop_bounds_[index], args,
                                        rt->Info(dev_id).name);
  // One packing rule for every backend (tvm/runtime/device_module.h), at the ABI's offsets; the
  // block goes into the push constants or the uniform arena (Record).
  std::array<uint64_t, 32> inline_scalars{};
  bool on_heap = layout.scalar_size > sizeof(inline_scalars);
  std::vector<uint64_t> heap_scalars(on_heap ? (layout.scalar_size + 7) / 8 : 0);
  auto* scalars = reinterpret_cast<char*>(on_heap ? heap_scalars.data() : inline_scalars.data());
  for (const KernelLayout::Scalar& s : layout.scalars) {
    uint64_t slot = 0;
    size_t n = tvm::runtime::PackScalarArgument(s.kind, args[s.arg], &slot);
    std::memcpy(scalars + s.offset, &slot, n);
  }
  VulkanDevice& dev = rt->Device(dev_id);
  // The current stream of the device in tvm-ffi's per-thread table (null: the default stream);
  // a freed or unknown handle is a ValueError.
  std::shared_ptr<VulkanStream> stream =
      dev.Stream(tvm::runtime::DeviceAPI::CurrentStream(DLDevice{kDLVulkan, dev_id}));
  // spec constant 3 sizes every launch-sized array of the module: 32 (its default) for a kernel
  // without one, so that no other kernel's array specializes to length 0
  int64_t room = static_cast<int64_t>(rt->Info(dev_id).props.limits.maxComputeSharedMemorySize) -
                 static_shared_[index];
  uint32_t shared =
      static_shared_[index] < 0
          ? 32u
          : static_cast<uint32_t>(tvm::runtime::SharedArrayBucket(cfg.dyn_shmem_bytes, room));
  PipelineKey block = {static_cast<uint32_t>(cfg.block[0]), static_cast<uint32_t>(cfg.block[1]),
                       static_cast<uint32_t>(cfg.block[2]), shared};
  BoundKernel k = Prepare(&dev, index, block);
  Record(&dev, stream.get(), k, buffers.size(), buffers, scalars, layout.scalar_size, cfg);
}

}  // namespace

void RegisterModuleFunctions() {
  tvm::runtime::RegisterDeviceModuleClass<VulkanModuleObj>("vulkan");
  // Whether device discovery has run (it runs on first use, never at activation).
  ffi::Function::SetGlobal("vulkan.Discovered",
                           ffi::Function::FromTyped([]() { return VulkanRuntime::Discovered(); }),
                           true);
  // The SPIR-V a device keeping infinities and NaNs in the float widths of `preserved` gets
  // (ForFloatControls), for tests: (bytes, preserved) -> bytes.
  ffi::Function::SetGlobal("vulkan.SpirvForFloatControls",
                           ffi::Function::FromTyped([](ffi::Bytes spirv, int64_t preserved) {
                             std::vector<uint32_t> words = SpirvWords(std::string(spirv));
                             ParseSpirv(words);
                             words = ForFloatControls(words, static_cast<uint32_t>(preserved));
                             return ffi::Bytes(reinterpret_cast<const char*>(words.data()),
                                               words.size() * 4);
                           }),
                           true);
  // The SPIRV-Tools library that validates every module ("" when none was found).
  ffi::Function::SetGlobal(
      "vulkan.SpirvValidator",
      ffi::Function::FromTyped([]() { return ffi::String(SpirvValidatorPath(nullptr)); }), true);
}

}  // namespace tvm_backend_vulkan
