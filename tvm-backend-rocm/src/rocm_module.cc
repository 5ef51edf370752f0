/*!
 * \file rocm_module.cc
 * \brief Device module of kind "rocm": one AMDGPU code object per architecture (payload format
 *        "hsaco", tvm_backend_rocm/clang.py), loaded lazily per device, kernels launched with
 *        their arguments packed into one buffer laid out as the code object's kernarg segment.
 */
#include <tvm/ffi/error.h>
#include <tvm/runtime/code_image.h>
#include <tvm/runtime/gpu_driver.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "rocm_hip.h"

namespace tvm_backend_rocm {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceModuleSpec;

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

class ROCmModuleObj final : public tvm::runtime::GPUKernelModule {
 public:
  explicit ROCmModuleObj(DeviceModuleSpec spec)
      : GPUKernelModule(&ROCm(), std::move(spec), {"hsaco"}),
        objects_(ParseCodeObjects(spec_.payload)) {}

 protected:
  /*! \brief The first code object rocm(dev_id) accepts (one per architecture; a device rejects
   *  the others with hipErrorNoBinaryForGpu or hipErrorInvalidImage). */
  void* LoadImage(int dev_id) final {
    if (objects_.empty()) {
      TVM_FFI_THROW(RuntimeError)
          << "rocm module: it holds the HIP source but no code object: it was compiled where no "
          << "clang for AMDGPU was found. apt-get install clang-19 lld-19 (or install ROCm) and "
          << "compile it again";
    }
    std::string tried;
    for (const auto& [arch, image] : objects_) {
      tvm::runtime::code_image::Check(image, "the " + arch + " code object of this rocm module");
      hipModule_t m = nullptr;
      hipError_t r = HIP().hipModuleLoadData(&m, image.data());
      if (r == hipSuccess) return m;
      if (r != hipErrorNoBinaryForGpu && r != hipErrorInvalidImage) {
        ROCm().Check(
            r, "loading the " + arch + " code object on rocm(" + std::to_string(dev_id) + ")");
      }
      tried += (tried.empty() ? "" : ", ") + arch;
    }
    std::string name;
    ROCm().DeviceName(dev_id, &name);
    TVM_FFI_THROW(RuntimeError) << "rocm module: none of its code objects (" << tried
                                << ") runs on rocm(" << dev_id << ") (" << name
                                << "): compile for that GPU with target \"rocm -arch=gfx...\"";
  }

 private:
  std::vector<std::pair<std::string, std::string>> objects_;
};

}  // namespace

void RegisterModuleFactories() { tvm::runtime::RegisterDeviceModuleClass<ROCmModuleObj>("rocm"); }

}  // namespace tvm_backend_rocm
