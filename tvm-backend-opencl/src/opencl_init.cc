/*!
 * \file opencl_init.cc
 * \brief TVMBackendInit of libtvm_runtime_opencl: the OpenCL calls behind the kit's ProgramDriver
 *        verbs (tvm/runtime/program_driver.h): buffers are cl_mem handles, streams in-order
 *        command queues, code images cl_programs built per device from OpenCL C.
 *
 * Device ids: every device of every platform gets one id, platforms in the order the ICD loader
 * reports them, devices in each platform's order. One context per platform holds all of its
 * devices, so buffers of one platform are copied directly and may meet in one kernel.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/runtime/base.h>
#include <tvm/runtime/program_driver.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cl_api.h"

namespace tvm_backend_opencl {
namespace cl {

namespace {
/*! \brief The ICD loader. TVM_OPENCL_LIBRARY points at one library (a vendor library that is not
 *  registered as an ICD): when set, it is the only one tried, so a wrong path is reported. */
tvm::runtime::LoadedDriver<Api>& Library() {
  static auto* library = new tvm::runtime::LoadedDriver<Api>({{"libOpenCL.so.1", "libOpenCL.so"},
                                                              "TVM_OPENCL_LIBRARY",
                                                              "",
                                                              "OpenCL 1.2 or newer is required"});
  return *library;
}
}  // namespace

std::string Load() { return Library().Load(); }

const Api& Get() { return Library().Get(); }

std::string ErrorString(cl_int code) {
  const char* name = "unknown OpenCL error";
#define TVM_OPENCL_STATUS_NAME(status, value) \
  if (code == value) name = #status;
  TVM_OPENCL_STATUS_CODES(TVM_OPENCL_STATUS_NAME)
#undef TVM_OPENCL_STATUS_NAME
  return std::string(name) + " (" + std::to_string(code) + ")";
}

}  // namespace cl

namespace {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces
using namespace cl;              // NOLINT(build/namespaces): CL names are prefixed

const char* const kInstallFix =
    "apt-get install pocl-opencl-icd ocl-icd-libopencl1 or your vendor's ICD";

/*! \brief The text of an info query asked twice, for its size and then its bytes (trailing NULs
 *  and newlines dropped; "" when the query fails). */
template <typename Query>
std::string QueryString(Query query) {
  size_t size = 0;
  if (query(0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string out(size, '\0');
  if (query(size, &out[0], nullptr) != CL_SUCCESS) return "";
  while (!out.empty() && (out.back() == '\0' || out.back() == '\n')) out.pop_back();
  return out;
}

std::string DeviceString(cl_device_id dev, cl_device_info key) {
  return QueryString([&](size_t size, void* value, size_t* size_ret) {
    return Get().clGetDeviceInfo(dev, key, size, value, size_ret);
  });
}

/*! \brief A scalar device info; 0 when the query fails (vendor keys). */
template <typename T>
int64_t DeviceScalar(cl_device_id dev, cl_device_info key) {
  T value{};
  Get().clGetDeviceInfo(dev, key, sizeof(T), &value, nullptr);
  return static_cast<int64_t>(value);
}

/*! \brief "3.0" from "OpenCL 3.0 PoCL ..." (the device's OpenCL version). */
std::string VersionNumber(const std::string& version) {
  std::string rest = version.compare(0, 7, "OpenCL ") == 0 ? version.substr(7) : version;
  return rest.substr(0, rest.find(' '));
}

const char* DeviceKind(int64_t type) {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  return type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "other";
}

/*! \brief One OpenCL device and what we know about it. */
struct DeviceInfo {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue default_queue = nullptr;
  std::string name, platform_name, version, driver_version, extensions;
  AttributeList attributes;  // read once, when the device is found

  bool HasExtension(const std::string& ext) const {
    std::istringstream words(extensions);
    std::string word;
    while (words >> word) {
      if (word == ext) return true;
    }
    return false;
  }

  /*! \brief Reads the strings and every attribute of `device`. */
  void Read() {
    name = DeviceString(device, CL_DEVICE_NAME);
    version = DeviceString(device, CL_DEVICE_VERSION);
    driver_version = DeviceString(device, CL_DRIVER_VERSION);
    extensions = DeviceString(device, CL_DEVICE_EXTENSIONS);
    std::vector<size_t> sizes(
        std::max<int64_t>(3, DeviceScalar<cl_uint>(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS)), 1);
    Get().clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes.size() * sizeof(size_t),
                          sizes.data(), nullptr);
    // No portable notion of a warp: vendor queries where present, else 1.
    int64_t warp = DeviceScalar<cl_uint>(device, CL_DEVICE_WARP_SIZE_NV);
    if (warp == 0) warp = DeviceScalar<cl_uint>(device, CL_DEVICE_WAVEFRONT_WIDTH_AMD);
    auto str = [](const std::string& s) { return ffi::String(s); };
    attributes = {
        {"name", str(name)},
        {"max_threads_per_block", DeviceScalar<size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE)},
        {"warp_size", warp == 0 ? 1 : warp},
        {"max_shared_memory_per_block", DeviceScalar<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE)},
        {"multi_processor_count", DeviceScalar<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS)},
        {"compute_version", str(VersionNumber(version))},
        {"total_global_memory", DeviceScalar<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE)},
        {"max_clock_rate", DeviceScalar<cl_uint>(device, CL_DEVICE_MAX_CLOCK_FREQUENCY) * 1000},
        {"api_version", str(version)},
        {"driver_version", str(driver_version)},
        {"max_thread_dimensions",
         ffi::Array<int64_t>{static_cast<int64_t>(sizes[0]), static_cast<int64_t>(sizes[1]),
                             static_cast<int64_t>(sizes[2])}},
        // OpenCL-specific.
        {"device_extensions", str(extensions)},
        {"opencl_c_version", str(DeviceString(device, CL_DEVICE_OPENCL_C_VERSION))},
        {"platform_name", str(platform_name)},
        {"device_kind", str(DeviceKind(DeviceScalar<cl_device_type>(device, CL_DEVICE_TYPE)))},
        {"max_mem_alloc_size", DeviceScalar<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE)},
    };
  }
};

/*! \brief The devices of every platform, enumerated once on first use. */
class Platforms {
 public:
  std::vector<DeviceInfo> devices;

 private:
  friend class LazyDiscovery<Platforms>;
  Platforms() = default;

  /*! \brief "" on success, else why no device is usable. */
  std::string Discover() {
    cl_uint count = 0;
    cl_int rc = Get().clGetPlatformIDs(0, nullptr, &count);
    if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && count == 0)) {
      const char* vendors = std::getenv("OCL_ICD_VENDORS");
      return std::string("no OpenCL platform found (no ICD is installed or registered under ") +
             (vendors != nullptr && *vendors ? std::string("OCL_ICD_VENDORS=") + vendors
                                             : "/etc/OpenCL/vendors") +
             ")";
    }
    std::vector<cl_platform_id> platforms(count);
    if (rc == CL_SUCCESS) rc = Get().clGetPlatformIDs(count, platforms.data(), nullptr);
    if (rc != CL_SUCCESS) return "clGetPlatformIDs failed with " + ErrorString(rc);
    std::string problems;
    for (cl_platform_id platform : platforms) AddPlatform(platform, &problems);
    if (!devices.empty()) return "";
    return "no usable OpenCL device found on " + std::to_string(count) + " platform(s)" + problems;
  }

  /*! \brief The devices of `platform` in one context, each with its default queue; what fails
   *  (a context, a queue) is appended to `problems`. */
  void AddPlatform(cl_platform_id platform, std::string* problems) {
    std::string pname = QueryString([&](size_t size, void* value, size_t* size_ret) {
      return Get().clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, value, size_ret);
    });
    cl_uint count = 0;
    cl_int rc = Get().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
    if (rc != CL_SUCCESS || count == 0) {  // CL_DEVICE_NOT_FOUND: a platform without devices
      bool pocl = pname.find("Portable Computing Language") != std::string::npos;
      *problems += "; platform '" + pname + "' lists no device" +
                   (pocl ? " (PoCL lists none when it cannot write its kernel cache: set "
                           "POCL_CACHE_DIR to a writable folder)"
                         : "");
      return;
    }
    std::vector<cl_device_id> ids(count);
    rc = Get().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform), 0};
    cl_context ctx = rc == CL_SUCCESS
                         ? Get().clCreateContext(props, count, ids.data(), nullptr, nullptr, &rc)
                         : nullptr;
    if (rc != CL_SUCCESS || ctx == nullptr) {
      *problems += "; platform '" + pname + "': " + ErrorString(rc);
      return;
    }
    for (cl_device_id id : ids) {
      DeviceInfo info;
      info.device = id;
      info.context = ctx;
      info.platform_name = pname;
      info.Read();
      info.default_queue = Get().clCreateCommandQueue(ctx, id, 0, &rc);
      if (rc != CL_SUCCESS || info.default_queue == nullptr) {
        *problems +=
            "; device '" + info.name + "': clCreateCommandQueue failed with " + ErrorString(rc);
        continue;
      }
      devices.push_back(std::move(info));
    }
  }
};

cl_mem Mem(const void* buffer) { return static_cast<cl_mem>(const_cast<void*>(buffer)); }
cl_command_queue QueueOf(void* queue) { return static_cast<cl_command_queue>(queue); }

/*! \brief Extra clBuildProgram options from TVM_OPENCL_BUILD_OPTIONS ("-cl-fast-relaxed-math"). */
std::string BuildOptions() {
  const char* v = std::getenv("TVM_OPENCL_BUILD_OPTIONS");
  return v != nullptr ? v : "";
}

class OpenCLDriver final : public ProgramDriver<Platforms> {
 public:
  OpenCLDriver() : ProgramDriver(kDLOpenCL, "opencl", "OpenCL", kInstallFix) {}

  std::string ErrorString(int status) final { return cl::ErrorString(status); }
  int Allocate(int dev_id, size_t nbytes, void** buffer) final {
    cl_int rc = CL_SUCCESS;
    *buffer = Get().clCreateBuffer(Device(dev_id).context, CL_MEM_READ_WRITE, nbytes, nullptr, &rc);
    return rc;
  }
  int Release(void* buffer) final { return Get().clReleaseMemObject(Mem(buffer)); }
  int Write(void* queue, void* buffer, size_t offset, const void* host, size_t nbytes) final {
    return Get().clEnqueueWriteBuffer(QueueOf(queue), Mem(buffer), CL_TRUE, offset, nbytes, host, 0,
                                      nullptr, nullptr);
  }
  int Read(void* queue, const void* buffer, size_t offset, void* host, size_t nbytes) final {
    return Get().clEnqueueReadBuffer(QueueOf(queue), Mem(buffer), CL_TRUE, offset, nbytes, host, 0,
                                     nullptr, nullptr);
  }
  int CopyBuffer(void* queue, const void* src, size_t src_offset, void* dst, size_t dst_offset,
                 size_t nbytes) final {
    return Get().clEnqueueCopyBuffer(QueueOf(queue), Mem(src), Mem(dst), src_offset, dst_offset,
                                     nbytes, 0, nullptr, nullptr);
  }
  bool SharesMemory(int a, int b) final { return Device(a).context == Device(b).context; }
  void* DefaultQueue(int dev_id) final { return Device(dev_id).default_queue; }
  int CreateQueue(int dev_id, void** queue) final {
    cl_int rc = CL_SUCCESS;
    *queue = Get().clCreateCommandQueue(Device(dev_id).context, Device(dev_id).device, 0, &rc);
    return rc;
  }
  int DestroyQueue(void* queue) final { return Get().clReleaseCommandQueue(QueueOf(queue)); }
  int Finish(void* queue) final { return Get().clFinish(QueueOf(queue)); }
  int GetKernel(void* image, int dev_id, const std::string& name, void** kernel) final {
    cl_int rc = CL_SUCCESS;
    *kernel = Get().clCreateKernel(static_cast<cl_program>(image), name.c_str(), &rc);
    return rc;
  }
  void ReleaseKernel(void* kernel) final { Get().clReleaseKernel(static_cast<cl_kernel>(kernel)); }
  void ReleaseImage(void* image) final { Get().clReleaseProgram(static_cast<cl_program>(image)); }

  int64_t DeclaredSharedBytes(void* kernel, int dev_id) final {
    // Before any argument is set this is the kernel's own __local declarations (drivers that do
    // not report them, such as PoCL, give 0: the compile-time check covers those).
    cl_ulong bytes = 0;
    Get().clGetKernelWorkGroupInfo(static_cast<cl_kernel>(kernel), Device(dev_id).device,
                                   CL_KERNEL_LOCAL_MEM_SIZE, sizeof(bytes), &bytes, nullptr);
    return static_cast<int64_t>(bytes);
  }

  int Launch(void* queue, void* kernel, const LaunchConfig& cfg,
             const std::vector<HandleArg>& args) final {
    cl_kernel k = static_cast<cl_kernel>(kernel);
    for (size_t i = 0; i < args.size(); ++i) {
      cl_int rc = Get().clSetKernelArg(k, static_cast<cl_uint>(i), args[i].size, args[i].value);
      if (rc != CL_SUCCESS) return rc;
    }
    size_t global[3], local[3];
    cl_uint work_dim = 1;
    for (int d = 0; d < 3; ++d) {
      local[d] = static_cast<size_t>(cfg.block[d]);
      global[d] = static_cast<size_t>(cfg.grid[d]) * local[d];
      if (cfg.grid[d] > 1 || cfg.block[d] > 1) work_dim = static_cast<cl_uint>(d + 1);
    }
    return Get().clEnqueueNDRangeKernel(QueueOf(queue), k, work_dim, nullptr, global, local, 0,
                                        nullptr, nullptr);
  }

  std::string BuildIdentity(int dev_id) final {
    const DeviceInfo& dev = Device(dev_id);
    return dev.platform_name + '\n' + dev.name + '\n' + dev.version + '\n' + dev.driver_version +
           '\n' + BuildOptions();
  }

  /*! \brief Refuses programs that need an extension the device lacks (the generated code enables
   *  cl_khr_fp64 / cl_khr_fp16 with a pragma when it uses them). */
  void CheckSource(int dev_id, const std::string& source, const std::string& kernel) final {
    static const std::pair<const char*, const char*> kNeeds[] = {
        {"cl_khr_fp64", "float64 (double precision)"},
        {"cl_khr_fp16", "float16 arithmetic (half precision)"}};
    const DeviceInfo& dev = Device(dev_id);
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

  int BuildSource(int dev_id, const std::string& source, void** image, std::string* log) final {
    const DeviceInfo& dev = Device(dev_id);
    const char* text = source.c_str();
    size_t len = source.size();
    cl_int rc = CL_SUCCESS;
    cl_program prog = Get().clCreateProgramWithSource(dev.context, 1, &text, &len, &rc);
    if (rc != CL_SUCCESS || prog == nullptr) {
      *log = "clCreateProgramWithSource failed";
      return rc != CL_SUCCESS ? rc : CL_OUT_OF_HOST_MEMORY;
    }
    if (Built(prog, &rc, dev)) return *image = prog, rc;
    *log = QueryString([&](size_t size, void* value, size_t* size_ret) {
      return Get().clGetProgramBuildInfo(prog, dev.device, CL_PROGRAM_BUILD_LOG, size, value,
                                         size_ret);
    });
    Get().clReleaseProgram(prog);
    return rc;
  }

  void* BuildBinary(int dev_id, const std::string& binary) final {
    const DeviceInfo& dev = Device(dev_id);
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    size_t len = binary.size();
    cl_int status = CL_SUCCESS, rc = CL_SUCCESS;
    cl_program prog =
        Get().clCreateProgramWithBinary(dev.context, 1, &dev.device, &len, &bytes, &status, &rc);
    if (status == CL_SUCCESS && Built(prog, &rc, dev)) return prog;
    if (prog != nullptr) Get().clReleaseProgram(prog);
    return nullptr;
  }

  std::string BinaryOf(void* image) final {
    cl_program prog = static_cast<cl_program>(image);
    size_t size = 0;
    Get().clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
    std::string binary(size, '\0');
    auto* ptr = reinterpret_cast<unsigned char*>(&binary[0]);
    bool ok = size > 0 && Get().clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr,
                                                 nullptr) == CL_SUCCESS;
    return ok ? binary : "";
  }

 private:
  /*! \brief Whether `prog` (created with status `*rc`) builds for `dev`; `*rc` the build's. */
  static bool Built(cl_program prog, cl_int* rc, const DeviceInfo& dev) {
    if (*rc != CL_SUCCESS || prog == nullptr) return false;
    *rc = Get().clBuildProgram(prog, 1, &dev.device, BuildOptions().c_str(), nullptr, nullptr);
    return *rc == CL_SUCCESS;
  }
};

OpenCLDriver* Driver() {
  static auto* driver = new OpenCLDriver();  // must outlive the process (DeviceAPI::Register)
  return driver;
}

/*! \brief Device modules of kind "opencl": formats "cl" (OpenCL C) and "clbin" (a program binary
 *  with its source as ("opencl", text)). Kernels take their buffers as cl_mem handles, scalars by
 *  value (float16/bfloat16 scalars as float32), and with a "dyn_shmem" launch tag one trailing
 *  `__local` pointer argument of that many bytes; global size = grid * block, local = block. */
class OpenCLModule final : public ProgramKernelModule<OpenCLDriver> {
 public:
  explicit OpenCLModule(DeviceModuleSpec spec)
      : ProgramKernelModule(Driver(), std::move(spec), "cl", "clbin") {}
};

/*!
 * \brief Runs at every `import tvm`, so it stays cheap: it only dlopens the ICD loader and resolves
 *        the entry points, then registers the DeviceAPI and the module factory/loader. Without
 *        libOpenCL it reports the reason and registers nothing, so the core's fallback module takes
 *        over. Platforms and devices are discovered on first use; when none is found, devices do
 *        not exist and every operation raises the reason and the fix.
 */
int OpenCLBackendInit(char* err, int err_len) {
  std::string why = cl::Load();
  if (!why.empty()) return BackendInitFailed(err, err_len, why);
  static auto* api = new HandleDeviceAPI(Driver());  // must outlive the process
  DeviceAPI::Register(kDLOpenCL, api);
  RegisterDeviceModuleClass<OpenCLModule>("opencl");
  Driver()->RegisterGlobals();
  return 0;
}

}  // namespace
}  // namespace tvm_backend_opencl

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_opencl::OpenCLBackendInit)
