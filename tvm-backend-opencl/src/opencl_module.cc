/*!
 * \file opencl_module.cc
 * \brief The "opencl" device module: its program built per device (from the binary cache, the
 *        carried binary or the source); kernels, launches and checks come from the kit.
 */
#include "opencl_module.h"

#include <tvm/ffi/function.h>
#include <tvm/runtime/program_cache.h>

#include <cstdlib>
#include <string>

#include "opencl_driver.h"

namespace tvm_backend_opencl {

namespace {

/*!
 * Program binaries on disk (the kit's ProgramCache: $TVM_CACHE_DIR/opencl, or
 * $TVM_OPENCL_CACHE_DIR; TVM_OPENCL_CACHE=0 turns it off), so that a program built from source
 * once is loaded as a binary by later processes where the platform offers binaries. Entries are
 * keyed by the source, the build options and the device's identity.
 */
ProgramCache& Cache() {
  static auto* cache = new ProgramCache("opencl");  // its info function outlives any scope
  return *cache;
}

/*! \brief Extra clBuildProgram options from TVM_OPENCL_BUILD_OPTIONS ("-cl-fast-relaxed-math"). */
std::string BuildOptions() {
  const char* v = std::getenv("TVM_OPENCL_BUILD_OPTIONS");
  return v != nullptr ? v : "";
}

/*! \brief The cache entry of `source` built for `dev` ("" when the cache is off). */
std::string CachePath(const std::string& source, const DeviceInfo& dev) {
  return Cache().PathOf("tvm-opencl-cache-v2\n" + dev.platform_name + '\n' + dev.name + '\n' +
                            dev.version + '\n' + dev.driver_version + '\n' + BuildOptions() + '\n' +
                            source,
                        ".clbin");
}

/*! \brief The binary of a built single-device program, or "" when the platform gives none. */
std::string ProgramBinaryOf(cl_program prog) {
  size_t size = 0;
  if (Get().clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) !=
          CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string binary(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(&binary[0]);
  if (Get().clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS) {
    return "";
  }
  return binary;
}

std::string BuildLog(cl_program prog, cl_device_id dev) {
  std::string log = QueryString([&](size_t size, void* value, size_t* size_ret) {
    return Get().clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, size, value, size_ret);
  });
  return log.empty() ? "(empty build log)" : log;
}

/*!
 * \brief Refuse, with a clear message, programs that need an extension the device lacks
 *        (the generated code enables cl_khr_fp64 / cl_khr_fp16 with a pragma when it uses them).
 */
void CheckExtensions(const std::string& source, const DeviceInfo& dev, const std::string& kernel) {
  static const std::pair<const char*, const char*> kNeeds[] = {
      {"cl_khr_fp64", "float64 (double precision)"},
      {"cl_khr_fp16", "float16 arithmetic (half precision)"}};
  for (const auto& need : kNeeds) {
    if (source.find(std::string("OPENCL EXTENSION ") + need.first) != std::string::npos &&
        !dev.HasExtension(need.first)) {
      TVM_FFI_THROW(RuntimeError) << "OpenCL kernel '" << kernel << "' uses " << need.second
                                  << ", but device '" << dev.name << "' (" << dev.platform_name
                                  << ") lacks the " << need.first << " extension; use another "
                                  << "dtype or a device that supports it";
    }
  }
}

/*! \brief `source` built for `dev` (its extensions checked by the caller); throws with the
 *  build log on failure. */
cl_program ProgramFromSource(const std::string& source, const DeviceInfo& dev,
                             const std::string& kernel) {
  const char* text = source.c_str();
  size_t len = source.size();
  cl_int rc = CL_SUCCESS;
  cl_program prog = Get().clCreateProgramWithSource(dev.context, 1, &text, &len, &rc);
  if (rc != CL_SUCCESS) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL: clCreateProgramWithSource failed with "
                                << ErrorString(rc) << " (kernel '" << kernel << "')";
  }
  rc = Get().clBuildProgram(prog, 1, &dev.device, BuildOptions().c_str(), nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    std::string log = BuildLog(prog, dev.device);
    Get().clReleaseProgram(prog);
    TVM_FFI_THROW(RuntimeError) << "building the OpenCL program of kernel '" << kernel
                                << "' for device '" << dev.name << "' failed with "
                                << ErrorString(rc) << ". Build log:\n"
                                << log;
  }
  return prog;
}

/*! \brief A built program from a binary, or null when the device rejects or cannot build it. */
cl_program ProgramFromBinary(const std::string& binary, const DeviceInfo& dev) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  size_t len = binary.size();
  cl_int status = CL_SUCCESS, rc = CL_SUCCESS;
  cl_program prog =
      Get().clCreateProgramWithBinary(dev.context, 1, &dev.device, &len, &bytes, &status, &rc);
  if (rc == CL_SUCCESS && status == CL_SUCCESS && prog != nullptr) {
    rc = Get().clBuildProgram(prog, 1, &dev.device, BuildOptions().c_str(), nullptr, nullptr);
    if (rc == CL_SUCCESS) return prog;
  }
  if (prog != nullptr) Get().clReleaseProgram(prog);
  return nullptr;
}

/*!
 * \brief The program of `source` for `dev`: from the on-disk binary cache when an entry exists and
 *        the device accepts it, else built from source (and its binary stored in the cache).
 */
cl_program CachedProgram(const std::string& source, const DeviceInfo& dev,
                         const std::string& kernel) {
  std::string path = CachePath(source, dev);
  cl_program prog = nullptr;
  auto load = [&](const std::string& binary) {
    return (prog = ProgramFromBinary(binary, dev)) != nullptr;
  };
  if (Cache().Load(path, load)) return prog;
  prog = ProgramFromSource(source, dev, kernel);
  Cache().Store(path, ProgramBinaryOf(prog));
  return prog;
}

class OpenCLModule final : public HandleKernelModule {
 public:
  explicit OpenCLModule(DeviceModuleSpec spec)
      : HandleKernelModule(OpenCLDriver::Global(), std::move(spec), {"cl", "clbin"}) {
    if (spec_.fmt == "clbin" && Source().empty()) {
      TVM_FFI_THROW(ValueError) << "an opencl 'clbin' module must also carry its source as "
                                << "('opencl', text), so that other devices can rebuild it";
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

  void* BuildImage(int dev_id) final {
    const DeviceInfo& dev = OpenCLDriver::Global()->Device(dev_id);
    std::string first = spec_.functions.empty() ? "<program>" : spec_.functions[0].name;
    std::string source = Source();
    CheckExtensions(source, dev, first);
    if (spec_.fmt == "clbin") {
      if (cl_program prog = ProgramFromBinary(spec_.payload, dev)) return prog;
    }
    return CachedProgram(source, dev, first);
  }
};

}  // namespace

std::string BuildProgramBinary(const std::string& source, int device_id) {
  const DeviceInfo& dev = OpenCLDriver::Global()->Device(device_id);
  CheckExtensions(source, dev, "<program>");
  cl_program prog = ProgramFromSource(source, dev, "<program>");
  std::string binary = ProgramBinaryOf(prog);
  Get().clReleaseProgram(prog);
  if (binary.empty()) {
    TVM_FFI_THROW(RuntimeError) << "device '" << dev.name << "' offers no program binary";
  }
  return binary;
}

void RegisterModuleFunctions() {
  RegisterDeviceModuleClass<OpenCLModule>("opencl");
  Cache().RegisterInfo();
  ffi::Function::SetGlobal("opencl.ProgramBinary",
                           ffi::Function::FromTyped([](ffi::String source, int device_id) {
                             return ffi::Bytes(BuildProgramBinary(source, device_id));
                           }),
                           true);
  // Whether platform/device discovery has run (it runs on first use, never at activation).
  ffi::Function::SetGlobal(
      "opencl.Discovered",
      ffi::Function::FromTyped([]() { return OpenCLDriver::Global()->Discovered(); }), true);
}

}  // namespace tvm_backend_opencl
