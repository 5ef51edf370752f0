/*!
 * \file tvm/runtime/handle_driver.h
 * \brief The runtime of a backend whose buffers are driver objects, not device addresses
 *        (OpenCL's cl_mem): the DLTensor data pointer is the handle, a stream is a driver queue,
 *        kernels take their arguments one by one and code images are built per device.
 *
 * The backend implements the verbs of HandleDriver (each one driver call returning its status) and
 * the building of its code image (HandleKernelModule::BuildImage); HandleDeviceAPI and
 * HandleKernelModule do the rest: the registry of live buffers that every copy and launch checks
 * before a handle reaches the driver, the queues it owns, copies staged through the host between
 * devices that share no memory, per-device image and kernel caches, the launch device, the launch
 * limits, argument packing and every error message. Devices are discovered by the backend on
 * first use (tvm/runtime/lazy_discovery.h); until then activation stays cheap.
 */
#ifndef TVM_RUNTIME_HANDLE_DRIVER_H_
#define TVM_RUNTIME_HANDLE_DRIVER_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/buffer_registry.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_module.h>
#include <tvm/runtime/fork_guard.h>
#include <tvm/runtime/launch_limits.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tvm {
namespace runtime {

/*! \brief Most devices of one type a HandleDriver addresses. */
constexpr int kMaxHandleDevices = 64;

/*! \brief One kernel argument as the driver sets it: `size` bytes at `value` (a buffer's handle or
 *  a scalar in PackScalarArgument's layout); `value` null for the trailing dynamic shared memory
 *  argument of `size` bytes. */
struct HandleArg {
  const void* value;
  size_t size;
};

/*!
 * \brief The verbs of one driver, and the kit's per-process state (buffers, queues, limits).
 *  Each verb returns the driver's status, 0 on success; the kit turns any other status into an
 *  error naming the operation, the device and ErrorString(status). A backend makes one instance
 *  (it lives as long as the process).
 */
class HandleDriver {
 public:
  /*!
   * \param device_type DLPack device type of the devices (kDLOpenCL).
   * \param kind Device and module kind: devices print as kind(id) (opencl(0)).
   * \param label How errors name the driver ("OpenCL").
   * \param fix What to install when no device is usable (appended to those errors).
   */
  HandleDriver(int device_type, std::string kind, std::string label, std::string fix)
      : device_type_(device_type),
        kind_(std::move(kind)),
        label_(std::move(label)),
        fix_(std::move(fix)),
        buffers_(kind_, label_) {}
  virtual ~HandleDriver() = default;

  /*! \brief "" when devices are usable, else why not; the first call discovers them. */
  virtual std::string UnavailableReason() = 0;
  /*! \brief Devices found (called only when UnavailableReason() is ""). */
  virtual int DeviceCount() = 0;
  /*! \brief "NAME" of a status. */
  virtual std::string ErrorString(int status) = 0;
  /*! \brief Attribute `key` of existing device `dev_id`, None when the driver has no such key. */
  virtual ffi::Any Attribute(int dev_id, const std::string& key) = 0;
  /*! \brief The launch limits of `dev_id`; by default from its "max_thread_dimensions",
   *  "max_threads_per_block" and "max_shared_memory_per_block" attributes (where it has them). */
  virtual int ReadLimits(int dev_id, LaunchLimits* limits) {
    auto dims = Attribute(dev_id, "max_thread_dimensions").try_cast<ffi::Array<int64_t>>();
    for (size_t a = 0; dims.has_value() && a < 3 && a < dims->size(); ++a) {
      limits->block[a] = (*dims)[a];
    }
    auto read = [&](const char* key, int64_t* out) {
      auto value = Attribute(dev_id, key).try_cast<int64_t>();
      if (value.has_value() && *value > 0) *out = *value;
    };
    read("max_threads_per_block", &limits->threads_per_block);
    read("max_shared_memory_per_block", &limits->shared_bytes);
    return 0;
  }
  virtual int Allocate(int dev_id, size_t nbytes, void** buffer) = 0;
  virtual int Release(void* buffer) = 0;
  /*! \brief Blocking copies between host memory and a buffer, ordered after `queue`'s work. */
  virtual int Write(void* queue, void* buffer, size_t offset, const void* host, size_t nbytes) = 0;
  virtual int Read(void* queue, const void* buffer, size_t offset, void* host, size_t nbytes) = 0;
  /*! \brief Queues a copy between buffers of devices that share memory (SharesMemory). */
  virtual int CopyBuffer(void* queue, const void* src, size_t src_offset, void* dst,
                         size_t dst_offset, size_t nbytes) = 0;
  /*! \brief Whether buffers of devices `a` and `b` can be copied and used by one kernel. */
  virtual bool SharesMemory(int a, int b) { return true; }
  virtual void* DefaultQueue(int dev_id) = 0;
  virtual int CreateQueue(int dev_id, void** queue) = 0;
  virtual int DestroyQueue(void* queue) = 0;
  virtual int Finish(void* queue) = 0;
  virtual int GetKernel(void* image, int dev_id, const std::string& name, void** kernel) = 0;
  virtual void ReleaseKernel(void* kernel) {}
  virtual void ReleaseImage(void* image) {}
  /*! \brief Bytes of shared memory `kernel` declares itself on `dev_id` (0 where the driver does
   *  not say), read once per kernel: a launch needs them plus its dynamic bytes within the
   *  device's "max_shared_memory_per_block". */
  virtual int64_t DeclaredSharedBytes(void* kernel, int dev_id) { return 0; }
  /*! \brief Sets `args` on `kernel` and queues it on `queue` with `cfg`'s grid and block. */
  virtual int Launch(void* queue, void* kernel, const LaunchConfig& cfg,
                     const std::vector<HandleArg>& args) = 0;

  int device_type() const { return device_type_; }
  const std::string& kind() const { return kind_; }
  const std::string& label() const { return label_; }

  /*! \brief "opencl(0)". */
  std::string DeviceLabel(int dev_id) const { return kind_ + "(" + std::to_string(dev_id) + ")"; }

  /*! \brief RuntimeError "<label>: <what> failed: <ErrorString>" unless `status` is 0. */
  void Check(int status, const std::string& what) {
    if (status != 0) {
      TVM_FFI_THROW(RuntimeError) << label_ << ": " << what << " failed: " << ErrorString(status);
    }
  }

  /*! \brief RuntimeError "<what>: <why no device is usable>; <fix>". */
  [[noreturn]] void ThrowUnavailable(const std::string& what) {
    TVM_FFI_THROW(RuntimeError) << what << ": " << ReasonWithFix(UnavailableReason(), fix_);
    throw;  // unreachable: TVM_FFI_THROW throws
  }

  /*! \brief Checks that device `dev_id` exists before `what` ("allocate memory on") is done. */
  void Require(const char* what, int dev_id) {
    if (!UnavailableReason().empty()) {
      ThrowUnavailable(std::string("cannot ") + what + " " + DeviceLabel(dev_id));
    }
    int count = DeviceCount();
    if (dev_id < 0 || dev_id >= count || dev_id >= kMaxHandleDevices) {
      TVM_FFI_THROW(ValueError) << DeviceLabel(dev_id) << " does not exist: this machine has "
                                << count << " " << label_ << " device(s) (ids 0.." << count - 1
                                << ")";
    }
  }

  const LaunchLimits& LimitsOf(int dev_id) {
    return limits_.Get(dev_id, [&] {
      LaunchLimits lim;
      Check(ReadLimits(dev_id, &lim), "reading the launch limits of " + DeviceLabel(dev_id));
      return lim;
    });
  }

  /*! \brief A new buffer of `nbytes` on `dev_id` (existing), recorded as live. */
  void* Alloc(int dev_id, size_t nbytes) {
    void* buffer = nullptr;
    Check(Allocate(dev_id, nbytes == 0 ? 1 : nbytes, &buffer),
          "allocating " + std::to_string(nbytes) + " bytes on " + DeviceLabel(dev_id));
    buffers_.Add(buffer, dev_id, nbytes);
    return buffer;
  }

  /*! \brief Releases a live buffer; never throws (tensor destructors call it), warns about
   *  anything else. */
  void Free(void* buffer) {
    if (buffer == nullptr || !buffers_.Remove(buffer)) return;
    int status = Release(buffer);
    if (status != 0) {
      std::fprintf(stderr, "[tvm %s] warning: releasing a buffer failed: %s\n", kind_.c_str(),
                   ErrorString(status).c_str());
    }
  }

  /*! \brief The live buffers (every copy and launch checks its pointers here). */
  const BufferRegistry& buffers() const { return buffers_; }

  /*! \brief The queue of `stream` on `dev_id`: the default queue for null, else one CreateStream
   *  made there. */
  void* Queue(int dev_id, void* stream) {
    if (stream == nullptr) return DefaultQueue(dev_id);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = queues_.find(stream);
    if (it == queues_.end()) {
      TVM_FFI_THROW(ValueError) << "stream " << stream << " is not a live stream of "
                                << DeviceLabel(dev_id)
                                << " (streams come from runtime.DeviceCreateStream; a freed one "
                                   "is gone)";
    }
    if (it->second != dev_id) {
      TVM_FFI_THROW(ValueError) << "stream " << stream << " belongs to " << DeviceLabel(it->second)
                                << ", not " << DeviceLabel(dev_id);
    }
    return stream;
  }

  void* NewQueue(int dev_id) {
    void* queue = nullptr;
    Check(CreateQueue(dev_id, &queue), "creating a stream on " + DeviceLabel(dev_id));
    std::lock_guard<std::mutex> lock(mu_);
    queues_[queue] = dev_id;
    return queue;
  }

  /*! \brief Waits for the work of every queue of `dev_id` but `queue` (the default queue
   *  included): a copy may touch buffers that any stream writes, and waits for them first. */
  void FinishOtherQueues(int dev_id, void* queue) {
    void* fallback = DefaultQueue(dev_id);
    if (fallback != queue) Check(Finish(fallback), "waiting for " + DeviceLabel(dev_id));
    std::lock_guard<std::mutex> lock(mu_);  // a stream freed meanwhile must not be finished
    for (const auto& [other, id] : queues_) {
      if (id == dev_id && other != queue) {
        Check(Finish(const_cast<void*>(other)), "waiting for a stream of " + DeviceLabel(dev_id));
      }
    }
  }

  void FreeQueue(int dev_id, void* stream) {
    if (stream == nullptr) return;  // the default queue is never destroyed
    void* queue = Queue(dev_id, stream);
    {
      // forgotten first: FinishOtherQueues in another thread must not wait on it once destroyed
      std::lock_guard<std::mutex> lock(mu_);
      if (queues_.erase(stream) == 0) {  // another thread freed it meanwhile
        TVM_FFI_THROW(ValueError) << "stream " << stream << " of " << DeviceLabel(dev_id)
                                  << " was freed already";
      }
    }
    Check(Finish(queue), "finishing a stream of " + DeviceLabel(dev_id));
    Check(DestroyQueue(queue), "destroying a stream of " + DeviceLabel(dev_id));
  }

 private:
  int device_type_;
  std::string kind_;
  std::string label_;
  std::string fix_;
  std::mutex mu_;
  BufferRegistry buffers_;
  std::unordered_map<const void*, int> queues_;
  LaunchLimitsCache<kMaxHandleDevices> limits_;
};

/*! \brief The DeviceAPI of a HandleDriver's devices: attributes, buffers, checked copies, queues
 *  as streams (a copy first waits for the device's other streams; host copies block, copies
 *  between buffers are queued). */
class HandleDeviceAPI final : public DeviceAPI {
 public:
  explicit HandleDeviceAPI(HandleDriver* driver) : d_(driver) {}

  ffi::Any GetAttr(DLDevice dev, const std::string& key) final {
    std::string why = d_->UnavailableReason();  // the first query discovers the devices
    if (key == "unavailable_reason") return ffi::String(why);
    bool exist = why.empty() && dev.device_id >= 0 && dev.device_id < d_->DeviceCount();
    if (key == "exist") return exist;
    return exist ? d_->Attribute(dev.device_id, key) : ffi::Any();
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t /*alignment*/) final {
    // Buffers are aligned by the driver, far above any dtype's alignment.
    d_->Require("allocate memory on", dev.device_id);
    return d_->Alloc(dev.device_id, nbytes);
  }

  void FreeDataSpace(DLDevice /*dev*/, void* ptr) final { d_->Free(ptr); }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final {
    bool src_dev = dev_from.device_type == d_->device_type();
    bool dst_dev = dev_to.device_type == d_->device_type();
    if (!src_dev && !dst_dev) {
      TVM_FFI_THROW(ValueError) << "the " << d_->label() << " DeviceAPI was asked to copy between "
                                << DeviceTypeName(dev_from.device_type) << " and "
                                << DeviceTypeName(dev_to.device_type);
    }
    if (nbytes == 0) return;
    d_->Require(src_dev ? "copy from" : "copy to", src_dev ? dev_from.device_id : dev_to.device_id);
    if (src_dev && dst_dev) return CopyBetween(from, from_offset, to, to_offset, nbytes, stream);
    if (dst_dev) {  // blocking, so the caller may free its host memory right away
      HandleBuffer dst = d_->buffers().ForCopy(to, to_offset, nbytes, "destination");
      d_->Check(
          d_->Write(OrderedQueue(dst.device_id, stream), to, to_offset,
                    static_cast<const char*>(from) + from_offset, nbytes),
          "copying " + std::to_string(nbytes) + " bytes to " + d_->DeviceLabel(dst.device_id));
      return;
    }
    HandleBuffer src = d_->buffers().ForCopy(from, from_offset, nbytes, "source");
    d_->Check(
        d_->Read(OrderedQueue(src.device_id, stream), from, from_offset,
                 static_cast<char*>(to) + to_offset, nbytes),
        "copying " + std::to_string(nbytes) + " bytes from " + d_->DeviceLabel(src.device_id));
  }

  TVMFFIStreamHandle CreateStream(DLDevice dev) final {
    d_->Require("create a stream on", dev.device_id);
    return d_->NewQueue(dev.device_id);
  }

  void FreeStream(DLDevice dev, TVMFFIStreamHandle stream) final {
    d_->Require("free a stream of", dev.device_id);
    d_->FreeQueue(dev.device_id, stream);
  }

  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) final {
    d_->Require("synchronize", dev.device_id);
    d_->Check(d_->Finish(d_->Queue(dev.device_id, stream)),
              "synchronizing " + d_->DeviceLabel(dev.device_id));
  }

 private:
  /*! \brief A copy between two buffers: queued where the devices share memory, else staged
   *  through the host. */
  void CopyBetween(const void* from, size_t from_offset, void* to, size_t to_offset, size_t nbytes,
                   TVMFFIStreamHandle stream) {
    HandleBuffer src = d_->buffers().ForCopy(from, from_offset, nbytes, "source");
    HandleBuffer dst = d_->buffers().ForCopy(to, to_offset, nbytes, "destination");
    std::string what = "copying " + std::to_string(nbytes) + " bytes from " +
                       d_->DeviceLabel(src.device_id) + " to " + d_->DeviceLabel(dst.device_id);
    void* queue = OrderedQueue(src.device_id, stream);
    if (dst.device_id != src.device_id) d_->FinishOtherQueues(dst.device_id, nullptr);
    bool same = from == to && from_offset == to_offset;
    bool overlap =
        from == to && from_offset < to_offset + nbytes && to_offset < from_offset + nbytes;
    if (same) return;
    if (!overlap && d_->SharesMemory(src.device_id, dst.device_id)) {
      d_->Check(d_->CopyBuffer(queue, from, from_offset, to, to_offset, nbytes), what);
      return;
    }
    // other devices' memory, or overlapping views of one buffer (drivers refuse those)
    std::vector<char> staging(nbytes);
    d_->Check(d_->Read(queue, from, from_offset, staging.data(), nbytes), what);
    d_->Check(d_->Write(d_->Queue(dst.device_id, dst.device_id == src.device_id ? stream : nullptr),
                        to, to_offset, staging.data(), nbytes),
              what);
  }

  /*! \brief The queue of `stream` on `dev_id`, once the device's other queues are done: a copy
   *  sees what every stream wrote before it, as a copy on CUDA's default stream does. */
  void* OrderedQueue(int dev_id, TVMFFIStreamHandle stream) {
    void* queue = d_->Queue(dev_id, stream);
    d_->FinishOtherQueues(dev_id, queue);
    return queue;
  }

  HandleDriver* d_;
};

/*!
 * \brief A device module of a HandleDriver: its code image built once per device (BuildImage, the
 *  one thing a backend writes), each kernel looked up once per device, launched on the device of
 *  its buffers after the tensor checks, the device's launch limits and the argument packing.
 */
class HandleKernelModule : public KernelModuleBase {
 public:
  /*! \param formats The payload formats BuildImage accepts; any other is a ValueError. */
  HandleKernelModule(HandleDriver* driver, DeviceModuleSpec spec,
                     std::initializer_list<const char*> formats)
      : KernelModuleBase(driver->kind(), std::move(spec)), d_(driver) {
    CheckFormat(formats);
    for (const FunctionInfo& info : spec_.functions) kinds_.push_back(ParseKernelArgTypes(info));
  }

  ~HandleKernelModule() {
    for (auto& entry : images_) {
      for (auto& kernel : entry.second.kernels) d_->ReleaseKernel(kernel.second.handle);
      d_->ReleaseImage(entry.second.image);
    }
  }

 protected:
  /*! \brief This module's code image built for device `dev_id`; throws when it cannot be. */
  virtual void* BuildImage(int dev_id) = 0;

  void Launch(size_t index, ffi::PackedArgs args) final {
    const FunctionInfo& info = spec_.functions[index];
    if (!d_->UnavailableReason().empty()) {
      d_->ThrowUnavailable("cannot launch " + d_->label() + " kernel '" + info.name + "'");
    }
    LaunchConfig cfg = LaunchConfig::Decode(info, args);
    // buffers may sit on several devices that share memory (checked below): not same_device
    CheckLaunchTensors(info, args, d_->device_type(), /*same_device=*/false);
    if (cfg.empty()) return;  // a symbolic size of 0: nothing to launch
    std::vector<void*> handles(kinds_[index].size(), nullptr);
    int dev_id = BufferHandles(index, args, &handles);
    CheckLaunchLimits(kind(), info, cfg, d_->LimitsOf(dev_id), d_->DeviceLabel(dev_id));
    void* queue = d_->Queue(dev_id, DeviceAPI::CurrentStream(DLDevice{
                                        static_cast<DLDeviceType>(d_->device_type()), dev_id}));
    std::vector<uint64_t> slots(handles.size(), 0);
    std::vector<HandleArg> packed;
    packed.reserve(handles.size() + 1);
    for (size_t i = 0; i < handles.size(); ++i) {
      if (kinds_[index][i] == KernelArgKind::kPointer) {
        packed.push_back(HandleArg{&handles[i], sizeof(void*)});
      } else {
        packed.push_back(
            HandleArg{&slots[i], PackScalarArgument(kinds_[index][i], args[i], &slots[i])});
      }
    }
    for (const std::string& tag : info.launch_param_tags) {
      if (tag == "dyn_shmem") {
        packed.push_back(
            HandleArg{nullptr, static_cast<size_t>(std::max<int64_t>(cfg.dyn_shmem_bytes, 1))});
      }
    }
    std::lock_guard<std::mutex> lock(mu_);  // kernel objects hold their arguments
    const LoadedKernel& kernel = Kernel(index, dev_id);
    CheckSharedBytes(info, kernel.declared_shared_bytes, cfg, dev_id);
    int status = d_->Launch(queue, kernel.handle, cfg, packed);
    if (status != 0) {
      TVM_FFI_THROW(RuntimeError) << d_->label() << ": launching kernel '" << info.name
                                  << "' with grid (" << cfg.grid[0] << ", " << cfg.grid[1] << ", "
                                  << cfg.grid[2] << "), block (" << cfg.block[0] << ", "
                                  << cfg.block[1] << ", " << cfg.block[2] << ") on "
                                  << d_->DeviceLabel(dev_id)
                                  << " failed: " << d_->ErrorString(status);
    }
  }

  HandleDriver* d_;

 private:
  struct LoadedKernel {
    void* handle = nullptr;
    int64_t declared_shared_bytes = 0;
  };
  struct Image {
    void* image = nullptr;
    std::map<size_t, LoadedKernel> kernels;
  };

  /*! \brief ValueError when the shared memory `info` declares plus `cfg`'s dynamic bytes exceed
   *  what a block of `dev_id` may use. */
  void CheckSharedBytes(const FunctionInfo& info, int64_t declared, const LaunchConfig& cfg,
                        int dev_id) {
    int64_t need = declared + cfg.dyn_shmem_bytes, limit = d_->LimitsOf(dev_id).shared_bytes;
    if (declared == 0 || need <= limit) return;
    TVM_FFI_THROW(ValueError) << d_->label() << " kernel '" << info.name << "' needs " << need
                              << " bytes of shared memory per block (" << declared << " declared + "
                              << cfg.dyn_shmem_bytes << " dynamic); " << d_->DeviceLabel(dev_id)
                              << " has " << limit;
  }

  /*! \brief The handles of the buffer arguments (live buffers of devices sharing memory, with no
   *  byte offset) into `handles`; returns their device (0, which exists once the devices were
   *  found, when there are none). */
  int BufferHandles(size_t index, ffi::PackedArgs args, std::vector<void*>* handles) {
    const FunctionInfo& info = spec_.functions[index];
    int dev_id = -1;
    for (size_t i = 0; i < handles->size(); ++i) {
      if (kinds_[index][i] != KernelArgKind::kPointer) continue;
      BufferArgument arg = BufferArgumentOf(kind(), info, args, i);
      if (arg.byte_offset != 0) {
        TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << i
                                  << " has a byte offset; " << d_->label()
                                  << " buffers cannot be offset";
      }
      HandleBuffer where = d_->buffers().ForArgument(arg.data, info.name, i);
      CheckBufferBytes(info, i, args, where.nbytes);
      if (dev_id < 0) {
        dev_id = where.device_id;
      } else if (!d_->SharesMemory(where.device_id, dev_id)) {
        TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << i << " lives on "
                                  << d_->DeviceLabel(where.device_id)
                                  << ", which shares no memory with " << d_->DeviceLabel(dev_id);
      }
      (*handles)[i] = arg.data;
    }
    return dev_id < 0 ? 0 : dev_id;
  }

  /*! \brief Kernel `index` on device `dev_id`, building the image there first (mu_ held). */
  const LoadedKernel& Kernel(size_t index, int dev_id) {
    Image& img = images_[dev_id];
    if (img.image == nullptr) img.image = BuildImage(dev_id);
    LoadedKernel& kernel = img.kernels[index];
    if (kernel.handle == nullptr) {
      const std::string& name = spec_.functions[index].name;
      void* handle = nullptr;
      int status = d_->GetKernel(img.image, dev_id, name, &handle);
      if (status != 0) {
        TVM_FFI_THROW(RuntimeError)
            << d_->label() << ": kernel '" << name << "' is not in the " << kind()
            << " module built for " << d_->DeviceLabel(dev_id) << ": " << d_->ErrorString(status);
      }
      kernel = LoadedKernel{handle, d_->DeclaredSharedBytes(handle, dev_id)};
    }
    return kernel;
  }

  std::vector<std::vector<KernelArgKind>> kinds_;
  std::mutex mu_;
  std::map<int, Image> images_;
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_HANDLE_DRIVER_H_
