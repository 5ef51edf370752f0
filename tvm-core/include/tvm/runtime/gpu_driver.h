/*!
 * \file tvm/runtime/gpu_driver.h
 * \brief The runtime of a backend whose driver has CUDA's shape: devices made current, device
 *        pointers, streams, code images loaded per device, kernels launched on a grid with an
 *        array of argument pointers or one packed argument buffer (CUDA's driver API, HIP).
 *
 * The backend implements the verbs of GPUDriver (each one driver call returning its status) and
 * the loading of its code image (GPUKernelModule::LoadImage); GPUDeviceAPI and GPUKernelModule do
 * the rest: device range checks, attributes, the streams it owns, per-device module and function
 * caches, the launch device, the launch limits, argument packing and every error message.
 */
#ifndef TVM_RUNTIME_GPU_DRIVER_H_
#define TVM_RUNTIME_GPU_DRIVER_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_attributes.h>
#include <tvm/runtime/device_module.h>
#include <tvm/runtime/fork_guard.h>
#include <tvm/runtime/launch_limits.h>
#include <tvm/runtime/owned_streams.h>

#include <array>
#include <atomic>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tvm {
namespace runtime {

/*! \brief Most devices of one type a GPUDriver addresses. */
constexpr int kMaxGPUDevices = 64;

/*!
 * \brief The arguments of one launch: one 8-byte slot per argument holding its value (a device
 *  address for a buffer, PackScalarArgument's bytes for a scalar), the array of slot pointers
 *  (CUDA's kernelParams), and on request the arguments laid out at their natural alignment in one
 *  buffer (the kernarg segment of HIP's `extra`).
 */
class KernelArgPack {
 public:
  KernelArgPack(const char* kind, const FunctionInfo& info, const std::vector<KernelArgKind>& kinds,
                ffi::PackedArgs args)
      : kinds_(kinds) {
    size_t n = kinds.size();
    if (n > small_slots_.size()) {
      big_slots_.resize(n);
      big_params_.resize(n);
      slots_ = big_slots_.data();
      params_ = big_params_.data();
    }
    for (size_t i = 0; i < n; ++i) {
      slots_[i] = 0;
      params_[i] = &slots_[i];
      if (kinds[i] == KernelArgKind::kPointer) {
        void* p = BufferArgumentOf(kind, info, args, i).address();
        std::memcpy(&slots_[i], &p, sizeof(p));
      } else {
        PackScalarArgument(kinds[i], args[i], &slots_[i]);
      }
    }
  }
  KernelArgPack(const KernelArgPack&) = delete;  // params_ point into this object
  KernelArgPack& operator=(const KernelArgPack&) = delete;

  /*! \brief One pointer per argument, to its value. */
  void** Params() { return params_; }

  /*! \brief The arguments in order, each at its natural alignment (at least 8 bytes in all). */
  std::vector<char> Packed() const {
    std::vector<char> out;
    out.reserve(8 * kinds_.size() + 8);
    for (size_t i = 0; i < kinds_.size(); ++i) {
      size_t bytes = KernelArgBytes(kinds_[i]);
      size_t at = (out.size() + bytes - 1) / bytes * bytes;
      out.resize(at + bytes, 0);
      std::memcpy(out.data() + at, &slots_[i], bytes);
    }
    if (out.size() < 8) out.resize(8, 0);
    return out;
  }

 private:
  const std::vector<KernelArgKind>& kinds_;
  std::array<uint64_t, 32> small_slots_;  // no allocation for the common launch
  std::array<void*, 32> small_params_;
  std::vector<uint64_t> big_slots_;
  std::vector<void*> big_params_;
  uint64_t* slots_ = small_slots_.data();
  void** params_ = small_params_.data();
};

/*!
 * \brief The verbs of one driver. Each returns the driver's status, 0 on success; the kit turns
 *  any other status into an error naming the operation, the device and ErrorString(status).
 *  A backend makes one instance (it lives as long as the process) and fills `codes_`.
 */
class GPUDriver {
 public:
  /*!
   * \param device_type DLPack device type of the devices (kDLCUDA).
   * \param kind Device and module kind: devices print as kind(id) (cuda(0)).
   * \param label How errors name the driver ("CUDA").
   */
  GPUDriver(int device_type, std::string kind, std::string label)
      : device_type_(device_type), kind_(std::move(kind)), label_(std::move(label)) {}
  virtual ~GPUDriver() = default;

  virtual int DeviceCount() = 0;
  /*! \brief "NAME (description)" of a status. */
  virtual std::string ErrorString(int status) = 0;
  /*! \brief Whether `status` says the driver is shut down already (at interpreter exit). */
  virtual bool IsDeinitialized(int status) { return false; }
  /*! \brief Makes device `dev_id` (in range) current on the calling thread. */
  virtual int MakeCurrent(int dev_id) = 0;
  virtual int DeviceName(int dev_id, std::string* name) = 0;
  virtual int Attribute(int dev_id, int code, int* value) = 0;
  virtual int TotalMemory(int dev_id, size_t* bytes) = 0;
  virtual int DriverVersion(int* version) = 0;
  /*! \brief Memory on the current device, aligned to at least 256 bytes. */
  virtual int Allocate(size_t nbytes, void** ptr) = 0;
  virtual int Free(void* ptr) = 0;
  /*! \brief Queues a copy on `stream`; `from` or `to` (or both) is a device of this driver. */
  virtual int CopyAsync(void* dst, const void* src, size_t nbytes, DLDevice from, DLDevice to,
                        void* stream) = 0;
  /*! \brief A stream that the default (null) stream and it wait for each other's work (CUDA's
   *  and HIP's blocking streams): the kit's copies rely on it to see what every stream wrote. */
  virtual int CreateStream(void** stream) = 0;
  virtual int DestroyStream(void* stream) = 0;
  virtual int SyncStream(void* stream) = 0;
  virtual int UnloadModule(void* module) = 0;
  virtual int GetFunction(void* module, const char* name, void** function) = 0;
  /*! \brief Launches `function` on `stream` of the current device. */
  virtual int Launch(void* function, const LaunchConfig& cfg, void* stream,
                     KernelArgPack* args) = 0;
  /*! \brief Dynamic shared memory a function gets without RaiseSharedMemoryLimit. */
  virtual int64_t DefaultSharedMemoryLimit() { return int64_t{1} << 62; }
  /*! \brief Lets `function` use `bytes` of dynamic shared memory (above the default limit). */
  virtual int RaiseSharedMemoryLimit(void* function, int64_t bytes) { return 0; }
  /*! \brief The device a raw device pointer is on, or -1 when the driver cannot tell. */
  virtual int DeviceOfPointer(const void* ptr) { return -1; }

  int device_type() const { return device_type_; }
  const std::string& kind() const { return kind_; }
  const std::string& label() const { return label_; }
  const IntegerAttributeCodes& codes() const { return codes_; }

  /*! \brief "cuda(0)". */
  std::string DeviceLabel(int dev_id) const { return kind_ + "(" + std::to_string(dev_id) + ")"; }

  /*! \brief RuntimeError "<label>: <what> failed: <ErrorString>" unless `status` is 0. */
  void Check(int status, const std::string& what) {
    if (status != 0) {
      TVM_FFI_THROW(RuntimeError) << label_ << ": " << what << " failed: " << ErrorString(status);
    }
  }

  /*! \brief Makes `dev_id` current; ValueError when the machine has no such device, and
   *  RuntimeError naming fork() in a child forked after this process first used a device. */
  void UseDevice(int dev_id) {
    std::call_once(first_use_, [this] {
      first_use_in_ = ForkGuard();
      used_.store(true, std::memory_order_release);
    });
    if (first_use_in_.Stale()) TVM_FFI_THROW(RuntimeError) << ForkedChildMessage(label_);
    int count = DeviceCount();
    if (dev_id < 0 || dev_id >= kMaxGPUDevices || dev_id >= count) {
      TVM_FFI_THROW(ValueError) << DeviceLabel(dev_id) << " does not exist: this machine has "
                                << count << " " << label_ << " device(s)";
    }
    Check(MakeCurrent(dev_id), "making " + DeviceLabel(dev_id) + " current");
  }

  /*! \brief Whether this is a child forked after the parent used a device (the memory and
   *  modules made then are the parent's: they are not freed here). */
  bool Forked() const { return used_.load(std::memory_order_acquire) && first_use_in_.Stale(); }

  /*! \brief Integer attribute `code` of device `dev_id`. */
  int AttributeOf(int dev_id, int code) {
    int value = 0;
    Check(Attribute(dev_id, code, &value),
          "reading attribute " + std::to_string(code) + " of " + DeviceLabel(dev_id));
    return value;
  }

  /*! \brief Device `dev_id`'s compute capability as major * 10 + minor (90 for 9.0), or -1 when
   *  the driver has no codes for it or cannot answer. */
  int ComputeCapability(int dev_id) {
    int major = 0, minor = 0;
    if (codes_.compute_capability_major < 0 ||
        Attribute(dev_id, codes_.compute_capability_major, &major) != 0 ||
        Attribute(dev_id, codes_.compute_capability_minor, &minor) != 0) {
      return -1;
    }
    return major * 10 + minor;
  }

  /*! \brief Device `dev_id`'s launch limits (read once). */
  const LaunchLimits& LimitsOf(int dev_id) {
    return limits_.Get(dev_id, [&] {
      auto attr = [&](int code) { return code < 0 ? kMaxLaunchValue : AttributeOf(dev_id, code); };
      LaunchLimits lim;
      for (int a = 0; a < 3; ++a) {
        lim.grid[a] = attr(codes_.max_grid_dim[a]);
        lim.block[a] = attr(codes_.max_block_dim[a]);
      }
      lim.threads_per_block = attr(codes_.max_threads_per_block);
      lim.shared_opt_in = codes_.max_shared_memory_per_block_optin >= 0;
      lim.shared_bytes = attr(lim.shared_opt_in ? codes_.max_shared_memory_per_block_optin
                                                : codes_.max_shared_memory_per_block);
      return lim;
    });
  }

 protected:
  IntegerAttributeCodes codes_;

 private:
  int device_type_;
  std::string kind_;
  std::string label_;
  LaunchLimitsCache<kMaxGPUDevices> limits_;
  std::once_flag first_use_;
  ForkGuard first_use_in_;  // the process that first used a device (set by that use)
  std::atomic<bool> used_{false};
};

/*! \brief The DeviceAPI of a GPUDriver's devices: attributes, memory, copies, owned streams. */
class GPUDeviceAPI final : public DeviceAPI {
 public:
  explicit GPUDeviceAPI(GPUDriver* driver) : d_(driver) {}

  ffi::Any GetAttr(DLDevice dev, const std::string& key) final {
    int id = dev.device_id;
    if (key == "exist") return id >= 0 && id < d_->DeviceCount();
    if (id < 0 || id >= d_->DeviceCount()) return ffi::Any();
    if (key == "name") {
      std::string name;
      d_->Check(d_->DeviceName(id, &name), "reading the name of " + d_->DeviceLabel(id));
      return ffi::String(name);
    }
    auto value = IntegerDeviceAttribute(key, d_->codes(),
                                        [&](int code) { return d_->AttributeOf(id, code); });
    if (value) return *value;
    if (key == "total_global_memory") {
      size_t bytes = 0;
      d_->Check(d_->TotalMemory(id, &bytes), "reading the memory size of " + d_->DeviceLabel(id));
      return static_cast<int64_t>(bytes);
    }
    if (key == "driver_version" || key == "api_version") {
      int version = 0;
      d_->Check(d_->DriverVersion(&version), "reading the driver version");
      return version;
    }
    if (key == "unavailable_reason") return ffi::String("");
    return ffi::Any();
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) final {
    if (alignment > 256) {
      TVM_FFI_THROW(ValueError) << d_->label() << " allocations are 256-byte aligned; " << alignment
                                << " was requested";
    }
    d_->UseDevice(dev.device_id);
    void* ptr = nullptr;
    d_->Check(
        d_->Allocate(nbytes == 0 ? 1 : nbytes, &ptr),
        "allocating " + std::to_string(nbytes) + " bytes on " + d_->DeviceLabel(dev.device_id));
    return ptr;
  }

  void FreeDataSpace(DLDevice dev, void* ptr) final {
    if (ptr == nullptr || d_->Forked()) return;
    d_->UseDevice(dev.device_id);
    int status = d_->Free(ptr);
    if (!d_->IsDeinitialized(status)) d_->Check(status, "freeing device memory");
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final {
    if (nbytes == 0) return;
    bool src_gpu = dev_from.device_type == d_->device_type();
    bool dst_gpu = dev_to.device_type == d_->device_type();
    if (!src_gpu && !dst_gpu)
      TVM_FFI_THROW(ValueError) << d_->label() << " copy called for two host buffers";
    d_->UseDevice(src_gpu ? dev_from.device_id : dev_to.device_id);
    d_->Check(d_->CopyAsync(static_cast<char*>(to) + to_offset,
                            static_cast<const char*>(from) + from_offset, nbytes, dev_from, dev_to,
                            stream),
              "copying " + std::to_string(nbytes) + " bytes");
  }

  TVMFFIStreamHandle CreateStream(DLDevice dev) final {
    d_->UseDevice(dev.device_id);
    void* stream = nullptr;
    d_->Check(d_->CreateStream(&stream), "creating a stream on " + d_->DeviceLabel(dev.device_id));
    streams_.Add(dev, stream);
    return stream;
  }

  void FreeStream(DLDevice dev, TVMFFIStreamHandle stream) final {
    if (stream == nullptr) return;  // the default stream is never destroyed
    d_->UseDevice(dev.device_id);
    streams_.Remove(dev, stream);
    d_->Check(d_->DestroyStream(stream), "destroying a stream");
  }

  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) final {
    d_->UseDevice(dev.device_id);
    streams_.CheckSyncable(dev, stream);
    d_->Check(d_->SyncStream(stream),
              "synchronizing a stream of " + d_->DeviceLabel(dev.device_id));
  }

 private:
  GPUDriver* d_;
  OwnedStreams streams_;
};

/*!
 * \brief A device module of a GPUDriver: its code image loaded once per device (LoadImage, the
 *  one thing a backend writes), each kernel looked up once per device, launched on the device of
 *  its tensors with their checks, the device's launch limits and the module's argument packing.
 */
class GPUKernelModule : public KernelModuleBase {
 public:
  /*! \param formats The payload formats LoadImage accepts; any other is a ValueError. */
  GPUKernelModule(GPUDriver* driver, DeviceModuleSpec spec,
                  std::initializer_list<const char*> formats)
      : KernelModuleBase(driver->kind(), std::move(spec)), d_(driver) {
    CheckFormat(formats);
    for (const FunctionInfo& info : spec_.functions) kinds_.push_back(ParseKernelArgTypes(info));
    functions_.resize(spec_.functions.size());
    shared_set_.resize(spec_.functions.size());
  }

  ~GPUKernelModule() {
    if (d_->Forked()) return;  // the images were loaded by the parent of this forked child
    for (void* m : modules_) {
      if (m != nullptr) d_->UnloadModule(m);  // at interpreter exit the driver may be gone already
    }
  }

 protected:
  /*! \brief Loads this module's code image on device `dev_id` (current); throws when it cannot. */
  virtual void* LoadImage(int dev_id) = 0;

  void Launch(size_t index, ffi::PackedArgs args) final {
    const FunctionInfo& info = spec_.functions[index];
    LaunchConfig cfg = LaunchConfig::Decode(info, args);
    int dev_id = LaunchDevice(index, args);
    d_->UseDevice(dev_id);
    if (cfg.empty()) return;  // a symbolic size of 0: nothing to launch
    CheckLaunchLimits(kind(), info, cfg, d_->LimitsOf(dev_id), d_->DeviceLabel(dev_id));
    void* f = Function(index, dev_id, cfg.dyn_shmem_bytes);
    KernelArgPack pack(kind(), info, kinds_[index], args);
    void* stream =
        DeviceAPI::CurrentStream(DLDevice{static_cast<DLDeviceType>(d_->device_type()), dev_id});
    int status = d_->Launch(f, cfg, stream, &pack);
    if (status != 0) {
      TVM_FFI_THROW(RuntimeError) << d_->label() << ": launching kernel '" << info.name
                                  << "' with grid (" << cfg.grid[0] << ", " << cfg.grid[1] << ", "
                                  << cfg.grid[2] << "), block (" << cfg.block[0] << ", "
                                  << cfg.block[1] << ", " << cfg.block[2] << "), "
                                  << cfg.dyn_shmem_bytes << " bytes dynamic shared memory on "
                                  << d_->DeviceLabel(dev_id)
                                  << " failed: " << d_->ErrorString(status);
    }
  }

  /*!
   * \brief The module's source payload compiled for `arch` by the global function `hook`
   *  (payload, arch) -> bytes, once per architecture: for a module exported where the compiler
   *  was missing. `missing` tells the user how to get the hook registered.
   */
  const std::string& CompiledForArchitecture(const std::string& arch, const char* hook,
                                             const char* missing) {
    auto found = compiled_.find(arch);
    if (found != compiled_.end()) return found->second;
    auto compile = ffi::Function::GetGlobal(hook);
    if (!compile.has_value()) {
      TVM_FFI_THROW(RuntimeError) << "this " << kind() << " module holds " << spec_.fmt
                                  << " source to be compiled on first use, but its compiler hook "
                                  << hook << " is not registered: " << missing;
    }
    ffi::Bytes out = (*compile)(ffi::String(spec_.payload), ffi::String(arch)).cast<ffi::Bytes>();
    return compiled_[arch] = std::string(out.data(), out.size());
  }

  GPUDriver* d_;

 private:
  /*! \brief That of the first tensor argument (all checked), else of the first raw pointer the
   *  driver can place, else 0: a tensor elsewhere would reach the kernel as a pointer of the
   *  launch device (a fault, or silently wrong data). */
  int LaunchDevice(size_t index, ffi::PackedArgs args) {
    int dev_id = CheckLaunchTensors(spec_.functions[index], args, d_->device_type(), true);
    if (dev_id >= 0) return dev_id;
    for (size_t i = 0; i < kinds_[index].size(); ++i) {
      if (kinds_[index][i] != KernelArgKind::kPointer) continue;
      auto p = args[i].try_cast<void*>();
      int owner = p.has_value() && *p != nullptr ? d_->DeviceOfPointer(*p) : -1;
      if (owner >= 0) return owner;
    }
    return 0;
  }

  /*! \brief Kernel `index` on device `dev_id` (loading the image there first), allowed
   *  `shared_bytes` of dynamic shared memory. */
  void* Function(size_t index, int dev_id, int64_t shared_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (modules_[dev_id] == nullptr) modules_[dev_id] = LoadImage(dev_id);
    void*& f = functions_[index][dev_id];
    const std::string& name = spec_.functions[index].name;
    if (f == nullptr) {
      int status = d_->GetFunction(modules_[dev_id], name.c_str(), &f);
      if (status != 0) {
        f = nullptr;
        TVM_FFI_THROW(RuntimeError)
            << d_->label() << ": kernel '" << name << "' is not in the " << kind()
            << " module loaded on " << d_->DeviceLabel(dev_id) << ": " << d_->ErrorString(status)
            << " (was it declared extern \"C\"?)";
      }
    }
    int64_t& granted = shared_set_[index][dev_id];
    if (shared_bytes > d_->DefaultSharedMemoryLimit() && shared_bytes > granted) {
      d_->Check(d_->RaiseSharedMemoryLimit(f, shared_bytes),
                "letting kernel '" + name + "' use " + std::to_string(shared_bytes) +
                    " bytes of dynamic shared memory on " + d_->DeviceLabel(dev_id));
      granted = shared_bytes;
    }
    return f;
  }

  std::vector<std::vector<KernelArgKind>> kinds_;
  std::mutex mu_;
  std::array<void*, kMaxGPUDevices> modules_{};
  std::vector<std::array<void*, kMaxGPUDevices>> functions_;
  std::vector<std::array<int64_t, kMaxGPUDevices>> shared_set_;
  std::map<std::string, std::string> compiled_;  // CompiledForArchitecture's images
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_GPU_DRIVER_H_
