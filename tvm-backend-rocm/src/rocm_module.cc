/*!
 * \file rocm_module.cc
 * \brief Device module of kind "rocm": one AMDGPU code object per architecture (payload format
 *        "hsaco", tvm_backend_rocm/clang.py), loaded lazily per device, kernels launched with
 *        their arguments packed into one buffer laid out as the code object's kernarg segment.
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_module.h>

#include <array>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "rocm_hip.h"

namespace tvm_backend_rocm {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceAPI;
using tvm::runtime::DeviceModuleSpec;
using tvm::runtime::FunctionInfo;
using tvm::runtime::KernelArgKind;
using tvm::runtime::LaunchConfig;

namespace {

/*! \brief The (architecture, code object) pairs of an "hsaco" payload; ValueError when malformed.
 */
std::vector<std::pair<std::string, std::string>> ParseCodeObjects(const std::string& payload) {
  auto fail = [] { TVM_FFI_THROW(ValueError) << "rocm module: malformed code-object payload"; };
  size_t pos = 0;
  auto u64 = [&]() {
    if (payload.size() - pos < 8) fail();
    uint64_t v = 0;
    std::memcpy(&v, payload.data() + pos, 8);  // little-endian hosts only (x86-64, arm64)
    pos += 8;
    return v;
  };
  auto bytes = [&]() {
    uint64_t n = u64();
    if (n > payload.size() - pos) fail();
    std::string out = payload.substr(pos, n);
    pos += n;
    return out;
  };
  if (payload.compare(0, 8, "TVMHSACO") != 0) fail();
  pos = 8;
  uint64_t count = u64();
  std::vector<std::pair<std::string, std::string>> objects;
  for (uint64_t i = 0; i < count; ++i) {
    std::string arch = bytes();
    objects.emplace_back(arch, bytes());
  }
  return objects;
}

/*! \brief Where each argument sits in the kernarg buffer and how large the buffer is. */
struct ArgLayout {
  std::vector<size_t> offsets;
  size_t size = 0;
};

/*! \brief The AMDGPU kernel ABI: each argument at its natural alignment, in order. */
ArgLayout LayoutOf(const std::vector<KernelArgKind>& kinds) {
  ArgLayout layout;
  for (KernelArgKind k : kinds) {
    size_t n = tvm::runtime::KernelArgBytes(k);
    layout.size = (layout.size + n - 1) / n * n;
    layout.offsets.push_back(layout.size);
    layout.size += n;
  }
  return layout;
}

class ROCmModuleObj final : public tvm::runtime::KernelModuleBase {
 public:
  explicit ROCmModuleObj(DeviceModuleSpec spec) : KernelModuleBase("rocm", std::move(spec)) {
    if (spec_.fmt != "hsaco") {
      TVM_FFI_THROW(ValueError) << "rocm module: unsupported payload format '" << spec_.fmt
                                << "' (expected 'hsaco')";
    }
    objects_ = ParseCodeObjects(spec_.payload);
    for (const FunctionInfo& info : spec_.functions) {
      kinds_.push_back(tvm::runtime::ParseKernelArgTypes(info));
      layouts_.push_back(LayoutOf(kinds_.back()));
    }
    functions_.resize(spec_.functions.size());
  }

  ~ROCmModuleObj() {
    for (int d = 0; d < kMaxDevices; ++d) {
      if (modules_[d] != nullptr && HIP().hipModuleUnload) HIP().hipModuleUnload(modules_[d]);
    }
  }

 protected:
  void Launch(size_t index, ffi::PackedArgs args) final {
    const FunctionInfo& info = spec_.functions[index];
    LaunchConfig cfg = LaunchConfig::Decode(info, args);
    int dev_id = tvm::runtime::CheckLaunchTensors(info, args, kDLROCM, /*same_device=*/true);
    if (dev_id < 0) dev_id = 0;
    SetDevice(dev_id);
    if (cfg.empty()) return;
    hipFunction_t f = Function(index, dev_id);
    const ArgLayout& layout = layouts_[index];
    std::vector<char> buffer(layout.size == 0 ? 8 : layout.size, 0);
    for (size_t i = 0; i < kinds_[index].size(); ++i) {
      char* slot = buffer.data() + layout.offsets[i];
      if (kinds_[index][i] != KernelArgKind::kPointer) {
        uint64_t bits = 0;
        tvm::runtime::PackScalarArgument(kinds_[index][i], args[i], &bits);
        std::memcpy(slot, &bits, tvm::runtime::KernelArgBytes(kinds_[index][i]));
        continue;
      }
      void* p = nullptr;
      if (auto t = args[i].try_cast<DLTensor*>()) {
        p = static_cast<char*>((*t)->data) + (*t)->byte_offset;
      } else if (auto q = args[i].try_cast<void*>()) {
        p = *q;
      } else {
        TVM_FFI_THROW(TypeError) << "rocm kernel " << info.name << ": argument " << i
                                 << " must be a device pointer or tensor, got "
                                 << args[i].GetTypeKey();
      }
      std::memcpy(slot, &p, sizeof(p));
    }
    size_t size = buffer.size();
    void* extra[] = {kLaunchParamBufferPointer, buffer.data(), kLaunchParamBufferSize, &size,
                     kLaunchParamEnd};
    hipStream_t stream =
        static_cast<hipStream_t>(DeviceAPI::CurrentStream(DLDevice{kDLROCM, dev_id}));
    hipError_t r = HIP().hipModuleLaunchKernel(
        f, static_cast<unsigned>(cfg.grid[0]), static_cast<unsigned>(cfg.grid[1]),
        static_cast<unsigned>(cfg.grid[2]), static_cast<unsigned>(cfg.block[0]),
        static_cast<unsigned>(cfg.block[1]), static_cast<unsigned>(cfg.block[2]),
        static_cast<unsigned>(cfg.dyn_shmem_bytes), stream, nullptr, extra);
    if (r != hipSuccess) {
      TVM_FFI_THROW(RuntimeError) << "ROCm: launching kernel '" << info.name << "' with grid ("
                                  << cfg.grid[0] << ", " << cfg.grid[1] << ", " << cfg.grid[2]
                                  << "), block (" << cfg.block[0] << ", " << cfg.block[1] << ", "
                                  << cfg.block[2] << ") on rocm(" << dev_id
                                  << ") failed: " << ErrorString(r);
    }
  }

 private:
  /*! \brief Kernel `index` on device `dev_id`, loading the code object the device accepts. */
  hipFunction_t Function(size_t index, int dev_id) {
    std::lock_guard<std::mutex> lock(mu_);
    if (modules_[dev_id] == nullptr) modules_[dev_id] = LoadFor(dev_id);
    hipFunction_t& f = functions_[index][dev_id];
    if (f == nullptr) {
      const std::string& name = spec_.functions[index].name;
      hipError_t r = HIP().hipModuleGetFunction(&f, modules_[dev_id], name.c_str());
      if (r != hipSuccess) {
        TVM_FFI_THROW(RuntimeError) << "ROCm: kernel '" << name << "' is not in the code object "
                                    << "loaded on rocm(" << dev_id << "): " << ErrorString(r);
      }
    }
    return f;
  }

  /*! \brief The first code object rocm(dev_id) accepts (one per architecture; a device rejects
   *  the others with hipErrorNoBinaryForGpu or hipErrorInvalidImage). */
  hipModule_t LoadFor(int dev_id) {
    if (objects_.empty()) {
      TVM_FFI_THROW(RuntimeError)
          << "rocm module: it holds the HIP source but no code object: it was compiled where no "
          << "clang for AMDGPU was found. apt-get install clang-19 lld-19 (or install ROCm) and "
          << "compile it again";
    }
    std::string tried;
    for (const auto& [arch, image] : objects_) {
      hipModule_t m = nullptr;
      hipError_t r = HIP().hipModuleLoadData(&m, image.data());
      if (r == hipSuccess) return m;
      if (r != hipErrorNoBinaryForGpu && r != hipErrorInvalidImage) Check(r, "hipModuleLoadData");
      tried += (tried.empty() ? "" : ", ") + arch;
    }
    char name[256] = {0};
    HIP().hipDeviceGetName(name, sizeof(name) - 1, dev_id);
    TVM_FFI_THROW(RuntimeError) << "rocm module: none of its code objects (" << tried
                                << ") runs on rocm(" << dev_id << ") (" << name
                                << "): compile for that GPU with target \"rocm -arch=gfx...\"";
  }

  std::vector<std::pair<std::string, std::string>> objects_;
  std::vector<std::vector<KernelArgKind>> kinds_;
  std::vector<ArgLayout> layouts_;
  std::mutex mu_;
  std::array<hipModule_t, kMaxDevices> modules_{};
  std::vector<std::array<hipFunction_t, kMaxDevices>> functions_;
};

}  // namespace

void RegisterModuleFactories() {
  tvm::runtime::RegisterDeviceModuleKind("rocm", [](DeviceModuleSpec spec) {
    return ffi::Module(ffi::make_object<ROCmModuleObj>(std::move(spec)));
  });
}

}  // namespace tvm_backend_rocm
