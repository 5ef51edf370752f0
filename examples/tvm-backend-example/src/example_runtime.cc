/*!
 * \file example_runtime.cc
 * \brief Runtime of the example backend: a device (of a type the core hands out to vendors)
 *        whose memory is host memory and whose kernels are shared objects run on the CPU, one
 *        OpenMP thread per GPU-style thread of a block. It exercises every piece a real backend
 *        has: DeviceAPI, a module kind, its factory and loader, launch configuration and streams.
 */
#include <dlfcn.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_module.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>
#include <unistd.h>

namespace tvm_backend_example {

using tvm::runtime::DeviceAPI;
using tvm::runtime::DeviceModuleBase;
using tvm::runtime::DeviceModuleSpec;
using tvm::runtime::FunctionInfo;
using tvm::runtime::LaunchConfig;
namespace ffi = tvm::ffi;

constexpr int kNumDevices = 1;
constexpr int64_t kMaxThreadsPerBlock = 256;
constexpr int64_t kMaxSharedMemory = 48 * 1024;

/*! \brief Argument slot of a compiled example kernel: handles, ints and floats share 8 bytes. */
union KernelArg {
  void* v_handle;
  int64_t v_int64;
  double v_float64;
};
/*! \brief A compiled kernel: 0 when it ran, else the size of the OpenMP team that started for a
 *  block whose threads meet at barriers, when that is fewer than the block's threads. */
using KernelFn = int (*)(const KernelArg* args, const int64_t* grid, const int64_t* block);

/*! \brief A shared object written to a private temp file and dlopen'ed. */
class LoadedObject {
 public:
  explicit LoadedObject(const std::string& bytes) {
    // $TMPDIR, else /tmp (Python's tempfile falls back to another folder when $TMPDIR is not
    // usable; here that is an error naming it): the folder must allow mapping code.
    const char* tmpdir = std::getenv("TMPDIR");
    std::string name =
        std::string(tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp") + "/tvm_example_kernelXXXXXX";
    std::vector<char> path(name.begin(), name.end());
    path.push_back('\0');
    int fd = mkstemp(path.data());
    if (fd < 0) {
      TVM_FFI_THROW(RuntimeError) << "example module: cannot create a temporary file " << name
                                  << ": " << std::strerror(errno)
                                  << " (set TMPDIR to a writable folder)";
    }
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = write(fd, bytes.data() + off, bytes.size() - off);
      if (n <= 0) {
        int why = n < 0 ? errno : ENOSPC;
        close(fd);
        unlink(path.data());
        TVM_FFI_THROW(RuntimeError) << "example module: cannot write " << path.data() << ": "
                                    << std::strerror(why) << " (set TMPDIR to a folder with room)";
      }
      off += static_cast<size_t>(n);
    }
    close(fd);
    handle_ = dlopen(path.data(), RTLD_NOW | RTLD_LOCAL);
    unlink(path.data());
    if (handle_ == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "example module: the kernel object does not load: "
                                  << dlerror();
    }
  }
  ~LoadedObject() {
    if (handle_) dlclose(handle_);
  }
  void* Symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

 private:
  void* handle_ = nullptr;
};

/*! \brief The device's memory is host memory: the core's HostMemoryDeviceAPI with this table. */
tvm::runtime::HostMemoryDeviceAPI& ExampleDevice() {
  static tvm::runtime::HostMemoryDeviceAPI api("example", kNumDevices,
                                               {{"name", ffi::String("example-cpu-device")},
                                                {"max_threads_per_block", kMaxThreadsPerBlock},
                                                {"warp_size", int64_t{1}},
                                                {"max_shared_memory_per_block", kMaxSharedMemory},
                                                {"compute_version", ffi::String("1.0")},
                                                {"multi_processor_count", int64_t{1}}});
  return api;
}

class ExampleModuleObj final : public DeviceModuleBase {
 public:
  explicit ExampleModuleObj(DeviceModuleSpec spec) : DeviceModuleBase("example", std::move(spec)) {
    if (spec_.fmt != "so") {
      TVM_FFI_THROW(ValueError) << "example module: unsupported payload format '" << spec_.fmt
                                << "' (expected 'so')";
    }
  }

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    const FunctionInfo* found = spec_.Find(std::string(name));
    if (found == nullptr) return std::nullopt;
    FunctionInfo info = *found;
    KernelFn fn = reinterpret_cast<KernelFn>(Object()->Symbol(info.name));
    if (fn == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "example module: kernel " << info.name
                                  << " missing from its object";
    }
    ffi::Module self = ffi::GetRef<ffi::Module>(this);
    return ffi::Function::FromPacked([self, info, fn](ffi::PackedArgs args, ffi::Any*) {
      LaunchConfig cfg = LaunchConfig::Decode(info, args);
      tvm::runtime::CheckLaunchTensors(info, args, tvm::runtime::DeviceTypeOf("example"), true);
      if (cfg.empty()) return;
      int64_t threads = cfg.ThreadsPerBlock();
      if (threads > kMaxThreadsPerBlock) {
        TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": " << threads
                                  << " threads per block exceed the example device's "
                                  << kMaxThreadsPerBlock;
      }
      std::vector<KernelArg> slots(info.arg_types.size());
      for (size_t i = 0; i < info.arg_types.size(); ++i) {
        const std::string& t = info.arg_types[i];
        if (tvm::runtime::IsBufferArgType(t)) {
          slots[i].v_handle =
              tvm::runtime::LiveHostBuffer(ExampleDevice(), "example", info, args, i);
        } else if (t.rfind("float", 0) == 0 || t.rfind("bfloat", 0) == 0) {
          slots[i].v_float64 = args[i].cast<double>();
        } else {
          slots[i].v_int64 = args[i].cast<int64_t>();
        }
      }
      if (int team = fn(slots.data(), cfg.grid.data(), cfg.block.data())) {
        TVM_FFI_THROW(RuntimeError)
            << "example kernel " << info.name << ": its blocks of " << threads
            << " threads meet at barriers and run as an OpenMP team, but OpenMP started " << team
            << " (OMP_THREAD_LIMIT or OMP_DYNAMIC limit it; a child forked from a process that had "
               "loaded OpenMP runs one thread, since the parent's worker threads did not come "
               "along: "
               "use the 'spawn' start method of multiprocessing)";
      }
    });
  }

 private:
  LoadedObject* Object() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!object_) object_ = std::make_unique<LoadedObject>(spec_.payload);
    return object_.get();
  }
  std::mutex mu_;
  std::unique_ptr<LoadedObject> object_;
};

ffi::Module Create(DeviceModuleSpec spec) {
  return ffi::Module(ffi::make_object<ExampleModuleObj>(std::move(spec)));
}

int Init(char* err, int err_len) {
  // A real backend would dlopen its driver here and report why it is missing.
  if (const char* why = std::getenv("TVM_EXAMPLE_SIMULATE_NO_DRIVER")) {
    return tvm::runtime::BackendInitFailed(
        err, err_len, std::string("example driver not found (simulated: ") + why + ")");
  }
  // The core handed this vendor backend a device type of its own at ctx.register_device.
  int device_type = tvm::runtime::DeviceTypeOf("example");
  if (device_type < 0) {
    return tvm::runtime::BackendInitFailed(
        err, err_len, "no device type for 'example': call ctx.register_device before load_runtime");
  }
  DeviceAPI::Register(device_type, &ExampleDevice());
  tvm::runtime::RegisterDeviceModuleKind("example", Create);
  return 0;
}

}  // namespace tvm_backend_example

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_example::Init)
