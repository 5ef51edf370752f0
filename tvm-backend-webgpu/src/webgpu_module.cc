/*!
 * \file webgpu_module.cc
 * \brief The "webgpu" device module: WGSL shaders, pipelines per workgroup size, launches.
 *
 * Payload (format "wgsl"): the shaders of the kernels one after another, each after a line
 * "//! kernel <name>", its first lines "//! loop_bound <bound>" when the code generator bounded the
 * loop iterations of one thread, "//! static_shared <bytes>" (its other workgroup memory) when it
 * sizes a workgroup array at launch (the override constant tvm_dyn_shmem: the launch's dynamic
 * shared bytes, times "//! dyn_shmem_scale <k>" when that array holds 8- or 16-bit elements
 * widened to 32 bits), and "//! local_scalars <n>" when one thread holds arrays of n
 * scalars in all; each shader's entry point is `main`. Calling convention (what
 * tvm_backend_webgpu.codegen emits):
 *  - buffer argument k (counting buffers only) is @group(0) @binding(k), a storage buffer
 *    (`var<storage, read_write>`, or `var<storage, read>` when the kernel only reads it: bound
 *    as read-only storage): a WebGPU tensor (its byte_offset becomes the binding offset) or a
 *    WebGPUBuffer*;
 *  - scalar arguments (int32, uint32, float32) are 4-byte members of one uniform struct at
 *    binding (number of buffers), in parameter order, filled per launch from the uniform arena;
 *  - threadIdx extents are the workgroup size: constants in `@workgroup_size(x, y, z)` (a launch
 *    with another size is refused), or the override constants tvm_wg_x/y/z; blockIdx
 *    extents are the dispatch, folded over up to three dimensions when one exceeds the device's
 *    maxComputeWorkgroupsPerDimension (the shader unfolds the linear workgroup number).
 */
#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_module.h>
#include <tvm/runtime/env_setting.h>
#include <tvm/runtime/launch_limits.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "webgpu_runtime.h"

namespace tvm_backend_webgpu {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceModuleSpec;
using tvm::runtime::FunctionInfo;
using tvm::runtime::KernelArgKind;
using tvm::runtime::KernelModuleBase;
using tvm::runtime::LaunchConfig;

namespace {

constexpr const char* kKernelMark = "//! kernel ";
constexpr const char* kLoopBoundMark = "//! loop_bound ";
constexpr const char* kLocalScalarsMark = "//! local_scalars ";
constexpr const char* kStaticSharedMark = "//! static_shared ";
constexpr const char* kDynSharedScaleMark = "//! dyn_shmem_scale ";

/*! \brief The value of the "<mark><value>" line among the "//! " lines a shader starts with, or
 *  "" when it has none. */
std::string HeaderValue(const std::string& shader, const char* mark) {
  size_t n = std::strlen(mark);
  for (size_t pos = 0; shader.compare(pos, 4, "//! ") == 0;) {
    size_t end = std::min(shader.find('\n', pos), shader.size());
    if (shader.compare(pos, n, mark) == 0) return shader.substr(pos + n, end - pos - n);
    pos = end + 1;
  }
  return "";
}

/*!
 * \brief Refuses to build kernel `name` on Mesa's llvmpipe when its threads hold more array
 *  scalars than TVM_WEBGPU_LOCAL_SCALARS (default 1024): WGSL zero-initializes function-scope
 *  arrays, and llvmpipe's pipeline build then takes a time that grows with the square of their
 *  size (1,024 float32: 15 s; 4,096: minutes), which looks like a hang.
 */
void CheckLocalArrays(const std::string& name, int64_t scalars, const std::string& device_name) {
  if (device_name.compare(0, 8, "llvmpipe") != 0) return;
  int64_t limit = tvm::runtime::IntegerSetting("TVM_WEBGPU_LOCAL_SCALARS", 1024, 0, INT64_MAX,
                                               "a number of scalars (0: no limit)");
  if (scalars <= limit || limit == 0) return;
  TVM_FFI_THROW(RuntimeError)
      << "webgpu kernel " << name << ": each thread holds " << scalars
      << " scalars in local arrays, and building it on adapter '" << device_name
      << "' (Mesa's llvmpipe) takes longer than the limit of " << limit
      << " allows (WGSL zero-initializes local arrays, and llvmpipe's build time grows with the "
         "square of their size: 1,024 scalars about 15 s, 4,096 several minutes)"
      << ". Run it with target 'vulkan' on this device (no zero-initialization), keep less in "
         "each thread (more threads, or shared memory), or set TVM_WEBGPU_LOCAL_SCALARS to a "
         "higher limit (0: none) to wait for the build";
}

/*! \brief Each kernel's shader, by name, split off the payload; ValueError when malformed. */
std::map<std::string, std::string> SplitShaders(const std::string& payload) {
  size_t bad = tvm::runtime::FirstNonUtf8(payload);
  if (bad < payload.size()) {  // WGSL is UTF-8 text (wgpu's compiler aborts the process on bytes)
    TVM_FFI_THROW(ValueError) << "a webgpu module's payload is no UTF-8 text: byte "
                              << static_cast<int>(static_cast<unsigned char>(payload[bad]))
                              << " at offset " << bad << " (a damaged or foreign module)";
  }
  std::map<std::string, std::string> shaders;
  std::string* current = nullptr;
  std::istringstream lines(payload);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, std::strlen(kKernelMark), kKernelMark) == 0) {
      current = &shaders[line.substr(std::strlen(kKernelMark))];
      continue;
    }
    if (current == nullptr) {
      TVM_FFI_THROW(ValueError) << "a webgpu module's payload must start with a '" << kKernelMark
                                << "<name>' line; got '" << line.substr(0, 60) << "'";
    }
    *current += line + "\n";
  }
  return shaders;
}

/*! \brief `message` followed by the shader lines it points at ("wgsl:LINE:COL", naga's form). */
std::string WithShaderLines(const std::string& message, const std::string& shader) {
  std::vector<std::string> lines;
  std::istringstream in(shader);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out = message;
  size_t at = 0;
  while ((at = message.find("wgsl:", at)) != std::string::npos) {
    at += 5;
    size_t n = std::strtoul(message.c_str() + at, nullptr, 10);
    if (n >= 1 && n <= lines.size()) {
      out += "\ngenerated WGSL line " + std::to_string(n) + ": " + lines[n - 1];
      break;
    }
  }
  return out;
}

const char* const kEnableSubgroups = "enable subgroups;";

/*! \brief Whether `shader` declares binding `k` as `var<storage, read>` (read-only storage). */
bool ReadOnlyBinding(const std::string& shader, size_t k) {
  std::string decl = "@binding(" + std::to_string(k) + ") var<storage, read>";
  return shader.find(decl) != std::string::npos;
}

/*! \brief A workgroup size. */
using BlockDims = std::array<uint32_t, 3>;
/*!
 * \brief The key of a kernel's pipelines: its workgroup size (the override constants
 *  tvm_wg_x/y/z) and the bytes of its launch-sized workgroup array (tvm_dyn_shmem; 0 without one).
 */
using PipelineKey = std::array<uint32_t, 4>;

/*!
 * \brief The constant workgroup size `shader` declares (`@workgroup_size(16, 16, 1)`), or
 *  {0, 0, 0} when it uses the override constants tvm_wg_x/y/z.
 */
BlockDims FixedWorkgroupSize(const std::string& shader) {
  BlockDims dims{0, 0, 0};
  if (shader.find("override tvm_wg_x") != std::string::npos) return dims;
  size_t at = shader.find("@workgroup_size(");
  if (at == std::string::npos) return dims;
  const char* p = shader.c_str() + at + std::strlen("@workgroup_size(");
  for (int d = 0; d < 3; ++d) {
    char* end = nullptr;
    unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || v == 0 || v > 1024) return BlockDims{0, 0, 0};
    dims[d] = static_cast<uint32_t>(v);
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  return dims;
}

/*! \brief One kernel's WebGPU objects. */
struct Kernel {
  std::vector<size_t> buffers;  // argument index of binding k
  std::vector<bool> read_only;  // whether binding k is read-only storage
  BlockDims fixed{0, 0, 0};     // the shader's constant workgroup size ({0,0,0}: overrides)
  std::vector<size_t> scalars;  // argument index of uniform member k
  std::vector<KernelArgKind> kinds;
  std::string shader;
  tvm::runtime::LoopIterationBound loop_bound;  // from the shader's "//! loop_bound", parsed once
  int64_t local_scalars = 0;                    // from the shader's "//! local_scalars"
  int64_t static_shared =
      -1;  // "//! static_shared": its other workgroup bytes; -1: no tvm_dyn_shmem
  int64_t dyn_shmem_scale = 1;  // "//! dyn_shmem_scale": its launch-sized array's widening
  WGPUShaderModule module = nullptr;
  WGPUBindGroupLayout bind_layout = nullptr;
  WGPUPipelineLayout layout = nullptr;
  std::map<PipelineKey, WGPUComputePipeline> pipelines;
};

class WebGPUModuleObj final : public KernelModuleBase {
 public:
  explicit WebGPUModuleObj(DeviceModuleSpec spec);

 private:
  void Launch(size_t index, ffi::PackedArgs args) final;
  WGPUComputePipeline Pipeline(WebGPUDevice* dev, size_t index, const PipelineKey& block);
  void CreateLayout(WebGPUDevice* dev, size_t index);
  void CheckLimits(size_t index, const LaunchConfig& cfg, const WGPULimits& lim) const;
  WGPUBindGroup BindGroup(WebGPUDevice* dev, size_t index, ffi::PackedArgs args,
                          uint64_t uniform_offset);

  std::vector<Kernel> kernels_;
};

WebGPUModuleObj::WebGPUModuleObj(DeviceModuleSpec spec)
    : KernelModuleBase("webgpu", std::move(spec)) {
  if (spec_.fmt != "wgsl") {
    TVM_FFI_THROW(ValueError) << "a webgpu module needs format 'wgsl' (WGSL shaders), got '"
                              << spec_.fmt << "'";
  }
  std::map<std::string, std::string> shaders = SplitShaders(spec_.payload);
  for (const FunctionInfo& info : spec_.functions) {
    Kernel k;
    auto it = shaders.find(info.name);
    if (it == shaders.end()) {
      TVM_FFI_THROW(ValueError) << "the webgpu module has no shader for kernel '" << info.name
                                << "'";
    }
    k.shader = it->second;
    k.fixed = FixedWorkgroupSize(k.shader);
    k.loop_bound =
        tvm::runtime::ParseLoopIterationBound(info, HeaderValue(k.shader, kLoopBoundMark));
    k.local_scalars = std::atoll(HeaderValue(k.shader, kLocalScalarsMark).c_str());
    std::string static_shared = HeaderValue(k.shader, kStaticSharedMark);
    if (!static_shared.empty()) {
      k.static_shared = std::atoll(static_shared.c_str());
      if (k.static_shared < 0 || k.static_shared > (int64_t{1} << 32)) {
        TVM_FFI_THROW(ValueError) << "webgpu kernel '" << info.name << "': static_shared '"
                                  << static_shared << "' is no byte count of workgroup memory";
      }
    }
    std::string scale = HeaderValue(k.shader, kDynSharedScaleMark);
    if (!scale.empty()) {
      k.dyn_shmem_scale = std::atoll(scale.c_str());
      if (k.dyn_shmem_scale < 1 || k.dyn_shmem_scale > 8) {
        TVM_FFI_THROW(ValueError) << "webgpu kernel '" << info.name << "': dyn_shmem_scale '"
                                  << scale << "' is not a widening of 1 to 8";
      }
    }
    for (size_t i = 0; i < info.arg_types.size(); ++i) {
      if (tvm::runtime::IsBufferArgType(info.arg_types[i])) {
        k.read_only.push_back(ReadOnlyBinding(k.shader, k.buffers.size()));
        k.buffers.push_back(i);
        continue;
      }
      KernelArgKind kind = tvm::runtime::ParseKernelArgType(info, i);
      if (kind != KernelArgKind::kI32 && kind != KernelArgKind::kU32 &&
          kind != KernelArgKind::kF32) {
        TVM_FFI_THROW(ValueError) << "webgpu kernel " << info.name << ": scalar argument " << i
                                  << " has type " << info.arg_types[i]
                                  << "; WebGPU kernels take int32, uint32 or float32 scalars";
      }
      k.scalars.push_back(i);
      k.kinds.push_back(kind);
    }
    if (k.scalars.size() * 4 > kUniformArenaBytes) {
      TVM_FFI_THROW(ValueError) << "webgpu kernel " << info.name << " takes " << k.scalars.size()
                                << " scalar arguments; one launch passes at most "
                                << kUniformArenaBytes / 4 << " (a " << kUniformArenaBytes
                                << "-byte uniform block)";
    }
    kernels_.push_back(std::move(k));
  }
}

void WebGPUModuleObj::CreateLayout(WebGPUDevice* dev, size_t index) {
  Kernel& k = kernels_[index];
  const std::string& name = spec_.functions[index].name;
  size_t nbuf = k.buffers.size();
  std::vector<WGPUBindGroupLayoutEntry> entries(nbuf + (k.scalars.empty() ? 0 : 1));
  for (size_t b = 0; b < entries.size(); ++b) {
    entries[b] = WGPU_BIND_GROUP_LAYOUT_ENTRY_INIT;
    entries[b].binding = static_cast<uint32_t>(b);
    entries[b].visibility = WGPUShaderStage_Compute;
    if (b == nbuf) {
      entries[b].buffer.type = WGPUBufferBindingType_Uniform;
    } else {
      entries[b].buffer.type =
          k.read_only[b] ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
    }
  }
  WGPUBindGroupLayoutDescriptor bgl = WGPU_BIND_GROUP_LAYOUT_DESCRIPTOR_INIT;
  bgl.entryCount = entries.size();
  bgl.entries = entries.data();
  k.bind_layout = dev->Checked([&] { return api.DeviceCreateBindGroupLayout(dev->device, &bgl); },
                               "the bind group layout of webgpu kernel ", name);
  WGPUPipelineLayoutDescriptor pl = WGPU_PIPELINE_LAYOUT_DESCRIPTOR_INIT;
  pl.bindGroupLayoutCount = 1;
  pl.bindGroupLayouts = &k.bind_layout;
  k.layout = dev->Checked([&] { return api.DeviceCreatePipelineLayout(dev->device, &pl); },
                          "the pipeline layout of webgpu kernel ", name);
}

WGPUComputePipeline WebGPUModuleObj::Pipeline(WebGPUDevice* dev, size_t index,
                                              const PipelineKey& block) {
  Kernel& k = kernels_[index];
  auto found = k.pipelines.find(block);
  if (found != k.pipelines.end()) return found->second;
  const std::string& name = spec_.functions[index].name;
  if (k.module == nullptr) {
    if (k.shader.find("enable f16;") != std::string::npos && !dev->has_f16) {
      TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << " uses float16, but adapter '"
                                << dev->name << "' lacks the WebGPU feature shader-f16";
    }
    std::string code = k.shader;
    size_t directive = code.find(kEnableSubgroups);
    if (directive != std::string::npos && !dev->has_subgroups) {
      TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << " uses subgroup operations "
                                << "(T.webgpu.*), but adapter '" << dev->name
                                << "' lacks the WebGPU feature subgroups";
    }
    CheckLocalArrays(name, k.local_scalars, dev->name);
    if (directive != std::string::npos) {
      // wgpu's shader compiler (naga) offers the subgroup built-ins on a device with the feature
      // but rejects the standard directive, which browsers require (the payload keeps it): a
      // comment on the same line keeps the line numbers of errors
      code.replace(directive, std::strlen(kEnableSubgroups),
                   "// enable subgroups: the device's feature");
    }
    WGPUShaderSourceWGSL source = WGPU_SHADER_SOURCE_WGSL_INIT;
    source.code = View(code);
    WGPUShaderModuleDescriptor desc = WGPU_SHADER_MODULE_DESCRIPTOR_INIT;
    desc.nextInChain = &source.chain;
    try {
      k.module = dev->Checked([&] { return api.DeviceCreateShaderModule(dev->device, &desc); },
                              "compiling the WGSL of webgpu kernel ", name);
    } catch (const ffi::Error& err) {
      TVM_FFI_THROW(RuntimeError) << WithShaderLines(err.message(), k.shader);
    }
    CreateLayout(dev, index);
  }
  // only the overrides the shader declares (another key is a validation error)
  static const char* const kNames[] = {"tvm_wg_x", "tvm_wg_y", "tvm_wg_z", "tvm_dyn_shmem"};
  std::array<WGPUConstantEntry, 4> constants;
  std::array<std::string, 4> keys;
  size_t count = 0;
  for (int c = 0; c < 4; ++c) {
    if (c < 3 ? k.fixed[0] != 0 : k.static_shared < 0) continue;
    keys[count] = kNames[c];
    constants[count] = WGPU_CONSTANT_ENTRY_INIT;
    constants[count].key = View(keys[count]);
    constants[count].value = block[c];
    ++count;
  }
  WGPUComputePipelineDescriptor desc = WGPU_COMPUTE_PIPELINE_DESCRIPTOR_INIT;
  desc.layout = k.layout;
  desc.compute.module = k.module;
  std::string entry = "main";
  desc.compute.entryPoint = View(entry);
  desc.compute.constantCount = count;
  desc.compute.constants = count > 0 ? constants.data() : nullptr;
  WGPUComputePipeline pipeline;
  try {
    pipeline = dev->Checked([&] { return api.DeviceCreateComputePipeline(dev->device, &desc); },
                            "building webgpu kernel ", name);
  } catch (const ffi::Error& err) {
    TVM_FFI_THROW(RuntimeError) << WithShaderLines(err.message(), k.shader);
  }
  k.pipelines.emplace(block, pipeline);
  return pipeline;
}

void WebGPUModuleObj::CheckLimits(size_t index, const LaunchConfig& cfg,
                                  const WGPULimits& lim) const {
  const std::string& name = spec_.functions[index].name;
  const uint32_t sizes[] = {lim.maxComputeWorkgroupSizeX, lim.maxComputeWorkgroupSizeY,
                            lim.maxComputeWorkgroupSizeZ};
  static const char* const kAxis[] = {"X", "Y", "Z"};
  uint64_t threads = 1, groups = 1;
  for (int d = 0; d < 3; ++d) {
    if (static_cast<uint64_t>(cfg.block[d]) > sizes[d]) {
      TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << ": a workgroup size of "
                                << cfg.block[d] << " along " << kAxis[d]
                                << " exceeds the device's maxComputeWorkgroupSize" << kAxis[d]
                                << " (" << sizes[d] << ")";
    }
    threads *= cfg.block[d];
    groups *= cfg.grid[d];
  }
  if (threads > lim.maxComputeInvocationsPerWorkgroup) {
    TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << ": " << threads
                              << " invocations per workgroup exceed the device's "
                              << "maxComputeInvocationsPerWorkgroup ("
                              << lim.maxComputeInvocationsPerWorkgroup << ")";
  }
  int64_t declared = kernels_[index].static_shared;
  if (declared >= 0 && declared + cfg.dyn_shmem_bytes > lim.maxComputeWorkgroupStorageSize) {
    TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << ": " << cfg.dyn_shmem_bytes
                              << " bytes of workgroup memory sized at launch"
                              << (kernels_[index].dyn_shmem_scale > 1
                                      ? " (its 8- or 16-bit elements take 4 bytes each in WGSL)"
                                      : "")
                              << " and " << declared
                              << " declared exceed the device's maxComputeWorkgroupStorageSize ("
                              << lim.maxComputeWorkgroupStorageSize << ")";
  }
  uint64_t most = lim.maxComputeWorkgroupsPerDimension;
  if (groups > most * most * most || groups > 0xffffffffull) {
    TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << ": " << groups
                              << " workgroups are more than one dispatch can hold";
  }
}

/*! \brief The dispatch of `cfg`: the grid itself when it fits, else folded (see the file doc). */
std::array<uint32_t, 3> DispatchSize(const LaunchConfig& cfg, uint64_t most) {
  if (cfg.grid[0] <= static_cast<int64_t>(most) && cfg.grid[1] <= static_cast<int64_t>(most) &&
      cfg.grid[2] <= static_cast<int64_t>(most)) {
    return {static_cast<uint32_t>(cfg.grid[0]), static_cast<uint32_t>(cfg.grid[1]),
            static_cast<uint32_t>(cfg.grid[2])};
  }
  uint64_t total = static_cast<uint64_t>(cfg.grid[0]) * cfg.grid[1] * cfg.grid[2];
  uint64_t x = std::min(total, most);
  uint64_t y = std::min((total + x - 1) / x, most);
  uint64_t z = (total + x * y - 1) / (x * y);
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(z)};
}

WGPUBindGroup WebGPUModuleObj::BindGroup(WebGPUDevice* dev, size_t index, ffi::PackedArgs args,
                                         uint64_t uniform_offset) {
  const Kernel& k = kernels_[index];
  const std::string& name = spec_.functions[index].name;
  std::vector<WGPUBindGroupEntry> entries(k.buffers.size() + (k.scalars.empty() ? 0 : 1));
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    size_t i = k.buffers[b];
    tvm::runtime::BufferArgument arg =
        tvm::runtime::BufferArgumentOf("webgpu", spec_.functions[index], args, i);
    const void* ptr = arg.data;
    uint64_t offset = arg.byte_offset;
    auto* buf = dev->buffers().ArgumentRecord<WebGPUBuffer>(ptr, name, i);
    if (offset % dev->limits.minStorageBufferOffsetAlignment != 0 || offset >= buf->size) {
      TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << ": argument " << i
                                << " starts at byte " << offset << " of its buffer, which is not "
                                << "a multiple of the device's minStorageBufferOffsetAlignment ("
                                << dev->limits.minStorageBufferOffsetAlignment << ")";
    }
    tvm::runtime::CheckBufferBytes(spec_.functions[index], i, args, buf->size - offset);
    for (size_t other = 0; other < b; ++other) {
      if (entries[other].buffer == buf->handle && k.read_only[other] != k.read_only[b]) {
        TVM_FFI_THROW(ValueError) << "webgpu kernel " << name << ": arguments " << k.buffers[other]
                                  << " and " << i << " are the same buffer, "
                                  << "which the kernel reads through one and writes through the "
                                  << "other; WebGPU forbids that in one launch: pass a copy";
      }
    }
    entries[b] = WGPU_BIND_GROUP_ENTRY_INIT;
    entries[b].binding = static_cast<uint32_t>(b);
    entries[b].buffer = buf->handle;
    entries[b].offset = offset;
    entries[b].size = buf->size - offset;
  }
  if (!k.scalars.empty()) {
    size_t b = k.buffers.size();
    entries[b] = WGPU_BIND_GROUP_ENTRY_INIT;
    entries[b].binding = static_cast<uint32_t>(b);
    entries[b].buffer = dev->uniform_arena;
    entries[b].offset = uniform_offset;
    entries[b].size = (k.scalars.size() * 4 + 15) / 16 * 16;
  }
  WGPUBindGroupDescriptor desc = WGPU_BIND_GROUP_DESCRIPTOR_INIT;
  desc.layout = k.bind_layout;
  desc.entryCount = entries.size();
  desc.entries = entries.data();
  return dev->Checked([&] { return api.DeviceCreateBindGroup(dev->device, &desc); },
                      "binding the arguments of webgpu kernel ", name);
}

void WebGPUModuleObj::Launch(size_t index, ffi::PackedArgs args) {
  const FunctionInfo& info = spec_.functions[index];
  WebGPUDevice* dev = WebGPUDevice::TryGet(nullptr);  // the message is built only when needed
  if (dev == nullptr) dev = WebGPUDevice::Get("cannot launch webgpu kernel " + info.name);
  LaunchConfig cfg = LaunchConfig::Decode(info, args);
  tvm::runtime::CheckLaunchTensors(info, args, kDLWebGPU, /*same_device=*/true);
  if (cfg.empty()) return;
  const Kernel& k = kernels_[index];
  // The host sized the launch's array in its narrow elements; the shader holds them widened.
  cfg.dyn_shmem_bytes = cfg.dyn_shmem_bytes > (int64_t{1} << 40)
                            ? cfg.dyn_shmem_bytes
                            : cfg.dyn_shmem_bytes * k.dyn_shmem_scale;
  CheckLimits(index, cfg, dev->limits);
  tvm::runtime::CheckLoopIterationBound("webgpu", info, k.loop_bound, args, dev->name);
  std::vector<uint32_t> scalars(k.scalars.size());
  for (size_t s = 0; s < k.scalars.size(); ++s) {
    uint64_t slot = 0;
    tvm::runtime::PackScalarArgument(k.kinds[s], args[k.scalars[s]], &slot);
    std::memcpy(&scalars[s], &slot, 4);
  }
  BlockDims block = {static_cast<uint32_t>(cfg.block[0]), static_cast<uint32_t>(cfg.block[1]),
                     static_cast<uint32_t>(cfg.block[2])};
  uint32_t shared = k.static_shared < 0
                        ? 0u
                        : static_cast<uint32_t>(tvm::runtime::SharedArrayBucket(
                              cfg.dyn_shmem_bytes,
                              static_cast<int64_t>(dev->limits.maxComputeWorkgroupStorageSize) -
                                  k.static_shared));
  if (k.fixed[0] != 0 && block != k.fixed) {
    TVM_FFI_THROW(ValueError) << "webgpu kernel " << info.name
                              << " was compiled for workgroup size (" << k.fixed[0] << ", "
                              << k.fixed[1] << ", " << k.fixed[2] << "), but is launched with ("
                              << block[0] << ", " << block[1] << ", " << block[2] << ")";
  }
  std::array<uint32_t, 3> groups = DispatchSize(cfg, dev->limits.maxComputeWorkgroupsPerDimension);
  std::lock_guard<std::mutex> lock(dev->mu);
  if (!dev->uncaptured.empty())
    dev->ThrowIfUncaptured("before launching webgpu kernel " + info.name);
  WGPUComputePipeline pipeline = Pipeline(dev, index, {block[0], block[1], block[2], shared});
  uint64_t uniform_offset =
      scalars.empty() ? 0
                      : dev->PushUniform(scalars.data(), static_cast<uint32_t>(scalars.size() * 4));
  WGPUBindGroup group = BindGroup(dev, index, args, uniform_offset);
  WGPUComputePassEncoder pass = dev->Pass();
  api.ComputePassSetPipeline(pass, pipeline);
  api.ComputePassSetBindGroup(pass, 0, group, 0, nullptr);
  api.ComputePassDispatch(pass, groups[0], groups[1], groups[2]);
  api.BindGroupRelease(group);  // the pass keeps what it uses alive
  dev->Dispatched();
}

}  // namespace

void RegisterModuleFunctions() {
  tvm::runtime::RegisterDeviceModuleClass<WebGPUModuleObj>("webgpu");
}

}  // namespace tvm_backend_webgpu
