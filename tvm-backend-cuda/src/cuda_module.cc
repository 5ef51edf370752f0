/*!
 * \file cuda_module.cc
 * \brief Device module of kind "cuda": lazily loads its cubin/PTX per device and launches kernels.
 *
 * Payload formats: "cubin", "ptx", "fatbin" (loaded by cuModuleLoadDataEx as they are) and "cu"
 * (CUDA C source, written where NVRTC was unavailable at build time). A "cu" payload is compiled
 * once per architecture on first use by the Python function "tvm_backend_cuda.nvrtc_compile"
 * (registered by tvm_backend_cuda.activate; it caches the result on disk).
 */
#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_module.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda_driver.h"

namespace tvm_backend_cuda {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceAPI;
using tvm::runtime::DeviceModuleSpec;
using tvm::runtime::FunctionInfo;
using tvm::runtime::KernelArgKind;
using tvm::runtime::KernelModuleBase;
using tvm::runtime::LaunchConfig;

namespace {
constexpr int64_t kDefaultSharedLimit = 48 * 1024;

/*! \brief Per-kernel state: argument kinds and, per device, the loaded function. */
struct KernelState {
  FunctionInfo info;
  std::vector<KernelArgKind> kinds;
  std::array<CUfunction, kMaxDevices> func{};
  std::array<int64_t, kMaxDevices> dyn_shmem_set{};
};

/*! \brief Launch limits of one device, queried once (the driver call is not free). */
struct DeviceLimits {
  std::array<int64_t, 3> grid{};
  std::array<int64_t, 3> block{};
  int64_t threads_per_block = 0;
  int64_t shmem_optin = 0;
};

const DeviceLimits& LimitsOf(int dev_id) {
  static std::mutex mu;
  static std::array<std::unique_ptr<DeviceLimits>, kMaxDevices> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (cache[dev_id] == nullptr) {
    CUdevice d;
    TVM_CUDA_CALL(Driver().cuDeviceGet(&d, dev_id));
    auto attr = [d](int a) { return static_cast<int64_t>(DeviceAttribute(d, a)); };
    auto lim = std::make_unique<DeviceLimits>();
    lim->grid = {attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                 attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    lim->block = {attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                  attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                  attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    lim->threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    lim->shmem_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    cache[dev_id] = std::move(lim);
  }
  return *cache[dev_id];
}

class CUDAModuleObj : public KernelModuleBase {
 public:
  explicit CUDAModuleObj(DeviceModuleSpec spec) : KernelModuleBase("cuda", std::move(spec)) {
    const std::string& f = spec_.fmt;
    if (f != "cubin" && f != "ptx" && f != "fatbin" && f != "cu") {
      TVM_FFI_THROW(ValueError) << "cuda module: unsupported payload format '" << f
                                << "' (expected cubin, ptx, fatbin or cu)";
    }
    for (const FunctionInfo& info : spec_.functions) {
      auto k = std::make_unique<KernelState>();
      k->info = info;
      k->kinds = tvm::runtime::ParseKernelArgTypes(info);
      kernels_.push_back(std::move(k));
    }
  }

  ~CUDAModuleObj() {
    for (int i = 0; i < kMaxDevices; ++i) {
      // Errors are ignored: at interpreter exit the driver may be gone already.
      if (modules_[i] != nullptr) Driver().cuModuleUnload(modules_[i]);
    }
  }

 private:
  void Launch(size_t index, ffi::PackedArgs args) final { Launch(kernels_[index].get(), args); }

  /*!
   * \brief The device the kernel runs on, once every tensor argument is checked (on one CUDA
   *  device, with the layout, dtype and size the kernel declared): that of the first tensor, else
   *  that of the first raw device pointer, else 0. A tensor elsewhere would reach cuLaunchKernel
   *  as if it were a pointer on the launch device (a fault, or silently wrong data).
   */
  static int LaunchDevice(const KernelState* k, ffi::PackedArgs args) {
    int dev_id = tvm::runtime::CheckLaunchTensors(k->info, args, kDLCUDA, /*same_device=*/true);
    if (dev_id >= 0) return dev_id;
    for (size_t i = 0; i < k->kinds.size(); ++i) {
      if (k->kinds[i] != KernelArgKind::kPointer) continue;
      auto p = args[i].try_cast<void*>();
      if (!p.has_value() || *p == nullptr) continue;
      int ordinal = 0;
      CUresult r = Driver().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                                  reinterpret_cast<CUdeviceptr>(*p));
      if (r == CUDA_SUCCESS) return ordinal;
    }
    return 0;
  }

  /*!
   * \brief The CUDA limits that LaunchConfig::Decode's generic range checks do not know: without
   *  them an extent past what cuLaunchKernel takes would be truncated to unsigned (or fail with an
   *  opaque driver error).
   */
  static void CheckLaunchLimits(const KernelState* k, const LaunchConfig& cfg, int dev_id) {
    const DeviceLimits& lim = LimitsOf(dev_id);
    static const char* kAxis[3] = {"x", "y", "z"};
    for (int a = 0; a < 3; ++a) {
      if (cfg.grid[a] > lim.grid[a]) {
        TVM_FFI_THROW(ValueError) << "cuda kernel " << k->info.name << ": grid extent blockIdx."
                                  << kAxis[a] << " = " << cfg.grid[a] << " exceeds the limit "
                                  << lim.grid[a] << " of cuda(" << dev_id << ")";
      }
      if (cfg.block[a] > lim.block[a]) {
        TVM_FFI_THROW(ValueError) << "cuda kernel " << k->info.name << ": block extent threadIdx."
                                  << kAxis[a] << " = " << cfg.block[a] << " exceeds the limit "
                                  << lim.block[a] << " of cuda(" << dev_id << ")";
      }
    }
    int64_t threads = cfg.block[0] * cfg.block[1] * cfg.block[2];  // each <= 1024 here
    if (threads > lim.threads_per_block) {
      TVM_FFI_THROW(ValueError) << "cuda kernel " << k->info.name << ": block (" << cfg.block[0]
                                << ", " << cfg.block[1] << ", " << cfg.block[2] << ") has "
                                << threads << " threads, more than the limit "
                                << lim.threads_per_block << " threads per block of cuda(" << dev_id
                                << ")";
    }
    if (cfg.dyn_shmem_bytes > lim.shmem_optin) {
      TVM_FFI_THROW(ValueError) << "cuda kernel " << k->info.name << ": " << cfg.dyn_shmem_bytes
                                << " bytes of dynamic shared memory exceed the limit "
                                << lim.shmem_optin << " bytes per block (opt-in) of cuda(" << dev_id
                                << ")";
    }
  }

  CUmodule Module(int dev_id) {
    std::lock_guard<std::mutex> lock(mu_);
    if (modules_[dev_id] != nullptr) return modules_[dev_id];
    std::string image = spec_.fmt == "cu" ? CompileSource(dev_id) : spec_.payload;
    char log[8192] = {0};
    int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log) - 1))};
    CUmodule mod = nullptr;
    CUresult r = Driver().cuModuleLoadDataEx(&mod, image.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS) {
      TVM_FFI_THROW(RuntimeError)
          << "CUDA: loading the cuda module (" << spec_.fmt << ", " << image.size()
          << " bytes) on cuda(" << dev_id << ", " << ArchOf(dev_id)
          << ") failed: " << ErrorString(r)
          << (log[0] ? std::string("\nJIT log:\n") + log : std::string())
          << "\nHint: a cubin runs only on the architecture it was compiled for; compile with "
             "target tvm.target.detect_target_from_device(tvm.cuda("
          << dev_id << ")), or ship PTX (PTX needs a driver at least as new as the NVRTC that "
          << "produced it)";
    }
    modules_[dev_id] = mod;
    return mod;
  }

  static std::string ArchOf(int dev_id) {
    CUdevice d;
    int major = 0, minor = 0;
    if (Driver().cuDeviceGet(&d, dev_id) != CUDA_SUCCESS) return "sm_unknown";
    Driver().cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    Driver().cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    return "sm_" + std::to_string(major) + std::to_string(minor);
  }

  /*! \brief Compile the "cu" payload for the device's architecture through the Python hook. */
  std::string CompileSource(int dev_id) {
    std::string arch = ArchOf(dev_id);
    auto it = compiled_.find(arch);
    if (it != compiled_.end()) return it->second;
    auto hook = ffi::Function::GetGlobal("tvm_backend_cuda.nvrtc_compile");
    if (!hook.has_value()) {
      TVM_FFI_THROW(RuntimeError)
          << "this cuda module holds CUDA C source (it was built where NVRTC was unavailable) and "
             "must be compiled on first use, but the NVRTC hook is not registered: import "
             "tvm_backend_cuda (tvm.backend.load('cuda')) and pip install nvidia-cuda-nvrtc";
    }
    ffi::Bytes out = (*hook)(ffi::String(spec_.payload), ffi::String(arch)).cast<ffi::Bytes>();
    std::string image(out.data(), out.size());
    compiled_[arch] = image;
    return image;
  }

  CUfunction Function(KernelState* k, int dev_id, int64_t dyn_shmem) {
    CUmodule mod = Module(dev_id);
    std::lock_guard<std::mutex> lock(mu_);
    CUfunction f = k->func[dev_id];
    if (f == nullptr) {
      CUresult r = Driver().cuModuleGetFunction(&f, mod, k->info.name.c_str());
      if (r != CUDA_SUCCESS) {
        TVM_FFI_THROW(RuntimeError) << "CUDA: kernel '" << k->info.name
                                    << "' is not in the loaded cuda module: " << ErrorString(r)
                                    << " (was it declared extern \"C\"?)";
      }
      k->func[dev_id] = f;
    }
    if (dyn_shmem > kDefaultSharedLimit && dyn_shmem > k->dyn_shmem_set[dev_id]) {
      CUresult r = Driver().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               static_cast<int>(dyn_shmem));
      if (r != CUDA_SUCCESS) {
        TVM_FFI_THROW(RuntimeError)
            << "CUDA: kernel '" << k->info.name << "' asks for " << dyn_shmem
            << " bytes of dynamic shared memory, more than cuda(" << dev_id
            << ") allows: " << ErrorString(r);
      }
      k->dyn_shmem_set[dev_id] = dyn_shmem;
    }
    return f;
  }

  void Launch(KernelState* k, ffi::PackedArgs args) {
    LaunchConfig cfg = LaunchConfig::Decode(k->info, args);
    int dev_id = LaunchDevice(k, args);
    SetDevice(dev_id);
    if (cfg.empty()) return;  // a symbolic size of 0: nothing to launch
    CheckLaunchLimits(k, cfg, dev_id);
    CUfunction f = Function(k, dev_id, cfg.dyn_shmem_bytes);
    size_t n = k->kinds.size();
    // One 8-byte slot per argument; cuLaunchKernel reads each at its declared size.
    std::array<uint64_t, 32> small_slots;
    std::array<void*, 32> small_ptrs;
    std::vector<uint64_t> big_slots;
    std::vector<void*> big_ptrs;
    uint64_t* slots = small_slots.data();
    void** ptrs = small_ptrs.data();
    if (n > small_slots.size()) {
      big_slots.resize(n);
      big_ptrs.resize(n);
      slots = big_slots.data();
      ptrs = big_ptrs.data();
    }
    for (size_t i = 0; i < n; ++i) {
      slots[i] = 0;
      void* slot = &slots[i];
      ptrs[i] = slot;
      switch (k->kinds[i]) {
        case KernelArgKind::kPointer: {
          CUdeviceptr p;
          if (auto t = args[i].try_cast<DLTensor*>()) {
            p = reinterpret_cast<CUdeviceptr>(static_cast<char*>((*t)->data) + (*t)->byte_offset);
          } else if (auto q = args[i].try_cast<void*>()) {
            p = reinterpret_cast<CUdeviceptr>(*q);
          } else if (auto v = args[i].try_cast<int64_t>()) {
            p = static_cast<CUdeviceptr>(*v);
          } else {
            TVM_FFI_THROW(TypeError)
                << "cuda kernel " << k->info.name << ": argument " << i
                << " must be a device pointer or tensor, got " << args[i].GetTypeKey();
          }
          std::memcpy(slot, &p, sizeof(p));
          break;
        }
        default:
          PackScalarArgument(k->kinds[i], args[i], slot);
      }
    }
    CUstream stream = static_cast<CUstream>(DeviceAPI::CurrentStream(DLDevice{kDLCUDA, dev_id}));
    CUresult r = Driver().cuLaunchKernel(
        f, static_cast<unsigned>(cfg.grid[0]), static_cast<unsigned>(cfg.grid[1]),
        static_cast<unsigned>(cfg.grid[2]), static_cast<unsigned>(cfg.block[0]),
        static_cast<unsigned>(cfg.block[1]), static_cast<unsigned>(cfg.block[2]),
        static_cast<unsigned>(cfg.dyn_shmem_bytes), stream, ptrs, nullptr);
    if (r != CUDA_SUCCESS) {
      TVM_FFI_THROW(RuntimeError) << "CUDA: launching kernel '" << k->info.name << "' with grid ("
                                  << cfg.grid[0] << ", " << cfg.grid[1] << ", " << cfg.grid[2]
                                  << "), block (" << cfg.block[0] << ", " << cfg.block[1] << ", "
                                  << cfg.block[2] << "), " << cfg.dyn_shmem_bytes
                                  << " bytes dynamic shared memory on cuda(" << dev_id
                                  << ") failed: " << ErrorString(r);
    }
  }

  std::mutex mu_;
  std::array<CUmodule, kMaxDevices> modules_{};
  std::map<std::string, std::string> compiled_;
  std::vector<std::unique_ptr<KernelState>> kernels_;
};
}  // namespace

void RegisterModuleFactories() {
  tvm::runtime::RegisterDeviceModuleKind("cuda", [](DeviceModuleSpec spec) {
    return ffi::Module(ffi::make_object<CUDAModuleObj>(std::move(spec)));
  });
}

}  // namespace tvm_backend_cuda
