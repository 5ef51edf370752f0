/*!
 * \file opencl_module.cc
 * \brief The "opencl" device module: program build (source or binary), kernel lookup, launch.
 */
#include "opencl_module.h"

#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/string.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/runtime/device_api.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "opencl_workspace.h"
#include "program_cache.h"

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

namespace {

/*! \brief Extra clBuildProgram options from TVM_OPENCL_BUILD_OPTIONS (e.g.
 * "-cl-fast-relaxed-math"). */
std::string BuildOptions() {
  const char* env = std::getenv("TVM_OPENCL_BUILD_OPTIONS");
  return env != nullptr ? env : "";
}

std::string BuildLog(cl_program prog, cl_device_id dev) {
  size_t size = 0;
  if (Get().clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
      CL_SUCCESS) {
    return "(no build log available)";
  }
  std::string log(size, '\0');
  if (size > 0 && Get().clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, size, &log[0],
                                              nullptr) != CL_SUCCESS) {
    return "(no build log available)";
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log.empty() ? "(empty build log)" : log;
}

/*!
 * \brief Refuse, with a clear message, programs that need an extension the device lacks
 *        (the generated code enables cl_khr_fp64 / cl_khr_fp16 with a pragma when it uses them).
 */
void CheckExtensions(const std::string& source, const DeviceInfo& dev, const std::string& kernel) {
  struct Need {
    const char* ext;
    const char* what;
  };
  for (const Need& need : {Need{"cl_khr_fp64", "float64 (double precision)"},
                           Need{"cl_khr_fp16", "float16 arithmetic (half precision)"}}) {
    std::string pragma = std::string("OPENCL EXTENSION ") + need.ext;
    if (source.find(pragma) != std::string::npos && !dev.HasExtension(need.ext)) {
      TVM_FFI_THROW(RuntimeError) << "OpenCL kernel '" << kernel << "' uses " << need.what
                                  << ", but device '" << dev.name << "' (" << dev.platform_name
                                  << ") lacks the " << need.ext << " extension; use another dtype "
                                  << "or a device that supports it";
    }
  }
}

/*! \brief Build `prog` for `dev`; throws with the build log on failure. */
void BuildOrThrow(cl_program prog, const DeviceInfo& dev, const std::string& kernel) {
  std::string options = BuildOptions();
  cl_int rc = Get().clBuildProgram(prog, 1, &dev.device, options.c_str(), nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    std::string log = BuildLog(prog, dev.device);
    Get().clReleaseProgram(prog);
    TVM_FFI_THROW(RuntimeError) << "building the OpenCL program of kernel '" << kernel
                                << "' for device '" << dev.name << "' failed with "
                                << ErrorString(rc) << ". Build log:\n"
                                << log;
  }
}

cl_program ProgramFromSource(const std::string& source, const DeviceInfo& dev,
                             const std::string& kernel) {
  CheckExtensions(source, dev, kernel);
  const char* text = source.c_str();
  size_t len = source.size();
  cl_int rc = CL_SUCCESS;
  cl_program prog = Get().clCreateProgramWithSource(dev.context, 1, &text, &len, &rc);
  if (rc != CL_SUCCESS || prog == nullptr) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL error: clCreateProgramWithSource failed with "
                                << ErrorString(rc) << " (kernel '" << kernel << "')";
  }
  BuildOrThrow(prog, dev, kernel);
  return prog;
}

/*! \brief A built program from a binary, or null when the device rejects or cannot build it. */
cl_program ProgramFromBinary(const std::string& binary, const DeviceInfo& dev) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  size_t len = binary.size();
  cl_int status = CL_SUCCESS, rc = CL_SUCCESS;
  cl_program prog =
      Get().clCreateProgramWithBinary(dev.context, 1, &dev.device, &len, &bytes, &status, &rc);
  if (rc != CL_SUCCESS || status != CL_SUCCESS || prog == nullptr) {
    if (prog != nullptr) Get().clReleaseProgram(prog);
    return nullptr;
  }
  std::string options = BuildOptions();
  if (Get().clBuildProgram(prog, 1, &dev.device, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    Get().clReleaseProgram(prog);
    return nullptr;
  }
  return prog;
}

/*!
 * \brief The program of `source` for `dev`: from the on-disk binary cache when an entry exists and
 *        the device accepts it, else built from source (and its binary stored in the cache).
 */
cl_program CachedProgram(const std::string& source, const DeviceInfo& dev,
                         const std::string& kernel) {
  CheckExtensions(source, dev, kernel);
  std::string path = CachePath(source, BuildOptions(), dev);
  std::string binary;
  if (CacheLoad(path, &binary)) {
    if (cl_program prog = ProgramFromBinary(binary, dev)) {
      ++GlobalCacheStats().hits;
      return prog;
    }
    ++GlobalCacheStats().rejected;
  }
  cl_program prog = ProgramFromSource(source, dev, kernel);
  if (!path.empty()) CacheStore(path, ProgramBinaryOf(prog));
  return prog;
}

/*! \brief Device-side objects of one module on one device. */
/*! \brief A kernel object and the __local memory it declares statically (queried once). */
struct KernelObject {
  cl_kernel kernel = nullptr;
  cl_ulong static_local_bytes = 0;
};

struct DeviceProgram {
  cl_program program = nullptr;
  std::unordered_map<std::string, KernelObject> kernels;
};

class OpenCLModuleObj final : public KernelModuleBase {
 public:
  explicit OpenCLModuleObj(DeviceModuleSpec spec) : KernelModuleBase("opencl", std::move(spec)) {
    if (spec_.fmt != "cl" && spec_.fmt != "clbin") {
      TVM_FFI_THROW(ValueError)
          << "an opencl module needs format 'cl' (OpenCL C source) or 'clbin' "
          << "(program binary), got '" << spec_.fmt << "'";
    }
    if (spec_.fmt == "clbin" && Source().empty()) {
      TVM_FFI_THROW(ValueError) << "an opencl 'clbin' module must also carry its source as "
                                << "('opencl', text), so that other devices can rebuild it";
    }
  }

  ~OpenCLModuleObj() {
    for (auto& entry : programs_) {
      for (auto& kv : entry.second.kernels) Get().clReleaseKernel(kv.second.kernel);
      if (entry.second.program != nullptr) Get().clReleaseProgram(entry.second.program);
    }
  }

 private:
  /*! \brief The OpenCL C source ("cl" payload, else the ("opencl", text) source entry). */
  std::string Source() const {
    if (spec_.fmt == "cl") return spec_.payload;
    for (const auto& kv : spec_.sources) {
      if (kv.first == "opencl" || kv.first == "cl") return kv.second;
    }
    return "";
  }

  /*! \brief The kernel object of `name` on device `id`, building the program on first use. */
  const KernelObject& GetKernel(int id, const std::string& name) {
    const DeviceInfo& dev = Workspace::Global()->Device(id);
    DeviceProgram& dp = programs_[id];
    if (dp.program == nullptr) {
      if (spec_.fmt == "clbin") {
        CheckExtensions(Source(), dev, name);
        dp.program = ProgramFromBinary(spec_.payload, dev);
      }
      if (dp.program == nullptr) dp.program = CachedProgram(Source(), dev, name);
    }
    auto it = dp.kernels.find(name);
    if (it != dp.kernels.end()) return it->second;
    cl_int rc = CL_SUCCESS;
    cl_kernel k = Get().clCreateKernel(dp.program, name.c_str(), &rc);
    if (rc != CL_SUCCESS || k == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "OpenCL kernel '" << name
                                  << "' is not in its program on device '" << dev.name
                                  << "': clCreateKernel failed with " << ErrorString(rc);
    }
    KernelObject& obj = dp.kernels[name];
    obj.kernel = k;
    // Before any argument is set this is the kernel's own __local declarations (drivers that do
    // not report them, such as PoCL, give 0: the compile-time check covers those).
    Get().clGetKernelWorkGroupInfo(k, dev.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(cl_ulong),
                                   &obj.static_local_bytes, nullptr);
    return obj;
  }

  /*!
   * \brief A work-group's __local memory (declared plus dynamic) must fit the device: past it a
   *  launch fails inside the driver, or worse. Checked before the launch, naming the amounts.
   */
  static void CheckLocalMemory(const FunctionInfo& info, const KernelObject& k,
                               const DeviceInfo& dev, int64_t dyn_bytes) {
    cl_ulong need = k.static_local_bytes + static_cast<cl_ulong>(dyn_bytes > 0 ? dyn_bytes : 0);
    if (dev.local_mem_size == 0 || need <= dev.local_mem_size) return;
    TVM_FFI_THROW(ValueError) << "OpenCL kernel '" << info.name << "' needs " << need
                              << " bytes of local (shared) memory per work-group ("
                              << k.static_local_bytes << " declared + "
                              << (need - k.static_local_bytes) << " dynamic); device '" << dev.name
                              << "' has " << dev.local_mem_size;
  }

  /*! \brief The cl_mem of buffer argument `i` (an opaque pointer or an OpenCL tensor). */
  static void* BufferArg(const FunctionInfo& info, ffi::PackedArgs args, size_t i,
                         BufferInfo* where) {
    // A tensor's device, layout, dtype and size: CheckLaunchTensors in Launch.
    tvm::runtime::BufferArgument arg = tvm::runtime::BufferArgumentOf("opencl", info, args, i);
    if (arg.byte_offset != 0) {
      TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << i
                                << " has a byte offset; OpenCL buffers cannot be offset";
    }
    void* ptr = arg.data;
    if (!Workspace::Global()->LookupBuffer(ptr, where)) {
      TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << i << " (" << ptr
                                << ") is not a live OpenCL buffer allocated by TVM";
    }
    return ptr;
  }

  /*! \brief clSetKernelArg for scalar argument `i`, packed as its arg type says. */
  static void SetScalarArg(cl_kernel k, const FunctionInfo& info, ffi::PackedArgs args, size_t i) {
    const std::string& type = info.arg_types[i];
    auto set = [&](const void* value, size_t size) {
      cl_int rc = Get().clSetKernelArg(k, static_cast<cl_uint>(i), size, value);
      if (rc != CL_SUCCESS) {
        TVM_FFI_THROW(RuntimeError) << "kernel " << info.name << ": setting argument " << i << " ("
                                    << type << ") failed with " << ErrorString(rc);
      }
    };
    uint64_t slot = 0;  // one packing rule for every backend (tvm/runtime/device_module.h)
    set(&slot, PackScalarArgument(ParseKernelArgType(info, i), args[i], &slot));
  }

  void Launch(size_t index, ffi::PackedArgs args) final {
    const FunctionInfo& info = spec_.functions[index];
    // The first launch may be what discovers the devices; without one, say so before anything else.
    Workspace* ws = Workspace::TryGlobal();
    if (ws == nullptr)
      Workspace::ThrowUnavailable("cannot launch OpenCL kernel '" + info.name + "'");
    LaunchConfig cfg = LaunchConfig::Decode(info, args);
    // buffers may sit on several devices of one platform (checked below), so not same_device
    CheckLaunchTensors(info, args, kDLOpenCL, /*same_device=*/false);
    if (cfg.empty()) return;
    size_t nargs = info.arg_types.size();
    std::vector<void*> mems(nargs, nullptr);
    int dev_id = -1;
    for (size_t i = 0; i < nargs; ++i) {
      if (!IsBufferArgType(info.arg_types[i])) continue;
      BufferInfo where{};
      mems[i] = BufferArg(info, args, i, &where);
      if (dev_id < 0) {
        dev_id = where.device_id;
      } else if (ws->Device(where.device_id).context != ws->Device(dev_id).context) {
        TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << i
                                  << " lives on opencl(" << where.device_id
                                  << "), another OpenCL platform than opencl(" << dev_id << ")";
      }
    }
    if (dev_id < 0) dev_id = 0;  // no buffer arguments: the first device
    const DeviceInfo& dev = ws->Device(dev_id);
    cl_command_queue queue =
        ws->Queue(dev_id, DeviceAPI::CurrentStream(DLDevice{kDLOpenCL, dev_id}));

    size_t global[3], local[3];
    cl_uint work_dim = 1;
    for (int d = 0; d < 3; ++d) {
      local[d] = static_cast<size_t>(cfg.block[d]);
      global[d] = static_cast<size_t>(cfg.grid[d]) * local[d];
      if (cfg.grid[d] > 1 || cfg.block[d] > 1) work_dim = static_cast<cl_uint>(d + 1);
    }

    std::lock_guard<std::mutex> lock(mu_);  // kernel objects hold argument state
    const KernelObject& obj = GetKernel(dev_id, info.name);
    CheckLocalMemory(info, obj, dev, cfg.dyn_shmem_bytes);
    cl_kernel k = obj.kernel;
    for (size_t i = 0; i < nargs; ++i) {
      if (IsBufferArgType(info.arg_types[i])) {
        cl_mem mem = static_cast<cl_mem>(mems[i]);
        cl_int rc = Get().clSetKernelArg(k, static_cast<cl_uint>(i), sizeof(cl_mem), &mem);
        if (rc != CL_SUCCESS) {
          TVM_FFI_THROW(RuntimeError) << "kernel " << info.name << ": setting buffer argument " << i
                                      << " failed with " << ErrorString(rc);
        }
      } else {
        SetScalarArg(k, info, args, i);
      }
    }
    bool has_dyn = false;
    for (const std::string& tag : info.launch_param_tags) has_dyn |= tag == "dyn_shmem";
    if (has_dyn) {
      size_t bytes = cfg.dyn_shmem_bytes > 0 ? static_cast<size_t>(cfg.dyn_shmem_bytes) : 1;
      cl_int rc = Get().clSetKernelArg(k, static_cast<cl_uint>(nargs), bytes, nullptr);
      if (rc != CL_SUCCESS) {
        TVM_FFI_THROW(RuntimeError)
            << "kernel " << info.name << ": setting " << bytes
            << " bytes of dynamic local memory failed with " << ErrorString(rc);
      }
    }
    cl_int rc = Get().clEnqueueNDRangeKernel(queue, k, work_dim, nullptr, global, local, 0, nullptr,
                                             nullptr);
    if (rc != CL_SUCCESS) {
      TVM_FFI_THROW(RuntimeError) << "launching OpenCL kernel '" << info.name << "' on '"
                                  << dev.name << "' with global size (" << global[0] << ", "
                                  << global[1] << ", " << global[2] << ") and local size ("
                                  << local[0] << ", " << local[1] << ", " << local[2]
                                  << ") failed with " << ErrorString(rc);
    }
  }

  std::mutex mu_;
  std::unordered_map<int, DeviceProgram> programs_;
};

}  // namespace

ffi::Module CreateOpenCLModule(DeviceModuleSpec spec) {
  return ffi::Module(ffi::make_object<OpenCLModuleObj>(std::move(spec)));
}

std::string BuildProgramBinary(const std::string& source, int device_id) {
  const DeviceInfo& dev =
      Workspace::Global("cannot build an OpenCL program binary")->Device(device_id);
  cl_program prog = ProgramFromSource(source, dev, "<program>");
  std::string binary = ProgramBinaryOf(prog);
  Get().clReleaseProgram(prog);
  if (binary.empty()) {
    TVM_FFI_THROW(RuntimeError) << "device '" << dev.name << "' offers no program binary";
  }
  return binary;
}

void RegisterModuleFunctions() {
  RegisterDeviceModuleKind(
      "opencl", [](DeviceModuleSpec spec) { return CreateOpenCLModule(std::move(spec)); });
  ffi::Function::SetGlobal("opencl.ProgramCacheInfo", ffi::Function::FromTyped([]() {
                             CacheStats& st = GlobalCacheStats();
                             ffi::Map<ffi::String, ffi::Any> info;
                             info.Set("dir", ffi::String(CacheDir()));
                             info.Set("hits", st.hits.load());
                             info.Set("stores", st.stores.load());
                             info.Set("rejected", st.rejected.load());
                             return info;
                           }),
                           true);
  ffi::Function::SetGlobal("opencl.ProgramBinary",
                           ffi::Function::FromTyped([](ffi::String source, int device_id) {
                             return ffi::Bytes(BuildProgramBinary(source, device_id));
                           }),
                           true);
  // Whether platform/device discovery has run (it runs on first use, never at activation).
  ffi::Function::SetGlobal("opencl.Discovered",
                           ffi::Function::FromTyped([]() { return Workspace::Discovered(); }),
                           true);
  // Why no OpenCL device is usable ("" when discovery found one); runs discovery if needed.
  ffi::Function::SetGlobal("opencl.UnavailableReason", ffi::Function::FromTyped([]() {
                             std::string why;
                             Workspace::TryGlobal(&why);
                             return ffi::String(why);
                           }),
                           true);
}

}  // namespace tvm_backend_opencl
