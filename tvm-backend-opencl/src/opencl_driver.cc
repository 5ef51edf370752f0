/*!
 * \file opencl_driver.cc
 * \brief The OpenCL driver's verbs: discovery, attributes, buffers, queues, kernels, launches.
 */
#include "opencl_driver.h"

#include <tvm/ffi/container/array.h>

#include <cstdlib>
#include <sstream>
#include <utility>

namespace tvm_backend_opencl {

const char* const kInstallFix =
    "apt-get install pocl-opencl-icd ocl-icd-libopencl1 or your vendor's ICD";

namespace {

std::string PlatformString(cl_platform_id platform, cl_platform_info key) {
  return QueryString([&](size_t size, void* value, size_t* size_ret) {
    return Get().clGetPlatformInfo(platform, key, size, value, size_ret);
  });
}

/*! \brief Why no platform was found: no ICD installed where the loader looks. */
std::string NoPlatform() {
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  std::string where = vendors != nullptr && *vendors != '\0'
                          ? std::string("OCL_ICD_VENDORS=") + vendors
                          : std::string("/etc/OpenCL/vendors");
  return "no OpenCL platform found (no ICD is installed or registered under " + where + ")";
}

/*! \brief "3.0" from "OpenCL 3.0 PoCL ..." (the device's OpenCL version). */
std::string VersionNumber(const std::string& version) {
  const std::string prefix = "OpenCL ";
  if (version.compare(0, prefix.size(), prefix) != 0) return version;
  std::string rest = version.substr(prefix.size());
  return rest.substr(0, rest.find(' '));
}

const char* DeviceKind(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

/*! \brief CL_DEVICE_MAX_WORK_ITEM_SIZES, three entries (1 past the device's dimensions). */
std::vector<int64_t> WorkItemSizes(cl_device_id d) {
  cl_uint ndim = DeviceScalar<cl_uint>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  std::vector<size_t> sizes(ndim < 3 ? 3 : ndim, 1);
  Get().clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes.size() * sizeof(size_t),
                        sizes.data(), nullptr);
  return {static_cast<int64_t>(sizes[0]), static_cast<int64_t>(sizes[1]),
          static_cast<int64_t>(sizes[2])};
}

/*! \brief Every attribute of a found device, by key. */
AttributeList ReadAttributes(const DeviceInfo& d) {
  cl_device_id id = d.device;
  auto scalar = [id](cl_device_info key, auto zero) {
    return static_cast<int64_t>(DeviceScalar<decltype(zero)>(id, key));
  };
  std::vector<int64_t> sizes = WorkItemSizes(id);
  // No portable notion of a warp: vendor queries where present, else 1.
  int64_t warp = scalar(CL_DEVICE_WARP_SIZE_NV, cl_uint{});
  if (warp == 0) warp = scalar(CL_DEVICE_WAVEFRONT_WIDTH_AMD, cl_uint{});
  return {
      {"name", ffi::String(d.name)},
      {"max_threads_per_block", scalar(CL_DEVICE_MAX_WORK_GROUP_SIZE, size_t{})},
      {"warp_size", warp == 0 ? 1 : warp},
      {"max_shared_memory_per_block", static_cast<int64_t>(d.local_mem_size)},
      {"multi_processor_count", scalar(CL_DEVICE_MAX_COMPUTE_UNITS, cl_uint{})},
      {"compute_version", ffi::String(VersionNumber(d.version))},
      {"total_global_memory", scalar(CL_DEVICE_GLOBAL_MEM_SIZE, cl_ulong{})},
      {"max_clock_rate", scalar(CL_DEVICE_MAX_CLOCK_FREQUENCY, cl_uint{}) * 1000},  // MHz -> kHz
      {"api_version", ffi::String(d.version)},
      {"driver_version", ffi::String(d.driver_version)},
      {"max_thread_dimensions", ffi::Array<int64_t>(sizes.begin(), sizes.end())},
      // OpenCL-specific.
      {"device_extensions", ffi::String(d.extensions)},
      {"opencl_c_version", ffi::String(DeviceString(id, CL_DEVICE_OPENCL_C_VERSION))},
      {"platform_name", ffi::String(d.platform_name)},
      {"device_kind", ffi::String(DeviceKind(DeviceScalar<cl_device_type>(id, CL_DEVICE_TYPE)))},
      {"max_mem_alloc_size", scalar(CL_DEVICE_MAX_MEM_ALLOC_SIZE, cl_ulong{})},
  };
}

/*! \brief The devices of `platform` in one context, each with its default queue, into `out`;
 *  problems (a device that cannot get a queue) are appended to `problems`. */
void AddPlatform(cl_platform_id platform, std::vector<DeviceInfo>* out, std::string* problems) {
  std::string pname = PlatformString(platform, CL_PLATFORM_NAME);
  cl_uint ndev = 0;
  cl_int rc = Get().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev);
  if (rc != CL_SUCCESS || ndev == 0) return;  // CL_DEVICE_NOT_FOUND: a platform without devices
  std::vector<cl_device_id> ids(ndev);
  rc = Get().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, ndev, ids.data(), nullptr);
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(platform), 0};
  cl_context ctx = rc == CL_SUCCESS
                       ? Get().clCreateContext(props, ndev, ids.data(), nullptr, nullptr, &rc)
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
    info.name = DeviceString(id, CL_DEVICE_NAME);
    info.version = DeviceString(id, CL_DEVICE_VERSION);
    info.extensions = DeviceString(id, CL_DEVICE_EXTENSIONS);
    info.driver_version = DeviceString(id, CL_DRIVER_VERSION);
    info.local_mem_size = DeviceScalar<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
    info.attributes = ReadAttributes(info);
    info.default_queue = Get().clCreateCommandQueue(ctx, id, 0, &rc);
    if (rc != CL_SUCCESS || info.default_queue == nullptr) {
      *problems +=
          "; device '" + info.name + "': clCreateCommandQueue failed with " + ErrorString(rc);
      continue;
    }
    out->push_back(std::move(info));
  }
}

}  // namespace

bool DeviceInfo::HasExtension(const std::string& ext) const {
  std::istringstream words(extensions);
  std::string word;
  while (words >> word) {
    if (word == ext) return true;
  }
  return false;
}

std::string DeviceString(cl_device_id dev, cl_device_info key) {
  return QueryString([&](size_t size, void* value, size_t* size_ret) {
    return Get().clGetDeviceInfo(dev, key, size, value, size_ret);
  });
}

std::string Platforms::Discover() {
  cl_uint nplat = 0;
  cl_int rc = Get().clGetPlatformIDs(0, nullptr, &nplat);
  if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && nplat == 0)) return NoPlatform();
  std::vector<cl_platform_id> platforms(nplat);
  if (rc == CL_SUCCESS) rc = Get().clGetPlatformIDs(nplat, platforms.data(), nullptr);
  if (rc != CL_SUCCESS) return "clGetPlatformIDs failed with " + ErrorString(rc);
  std::string problems;
  for (cl_platform_id platform : platforms) AddPlatform(platform, &devices, &problems);
  if (devices.empty()) {
    return "no usable OpenCL device found on " + std::to_string(nplat) + " platform(s)" + problems;
  }
  return "";
}

OpenCLDriver::OpenCLDriver()
    : HandleDriver(kDLOpenCL, "opencl", "OpenCL", kInstallFix), discovery_("OpenCL", kInstallFix) {}

OpenCLDriver* OpenCLDriver::Global() {
  static auto* inst = new OpenCLDriver();  // must outlive the process (DeviceAPI::Register)
  return inst;
}

std::string OpenCLDriver::UnavailableReason() {
  std::string why;
  discovery_.TryGet(&why);
  return why;
}

const DeviceInfo& OpenCLDriver::Device(int id) {
  Platforms* found = discovery_.TryGet();
  if (found == nullptr || id < 0 || id >= static_cast<int>(found->devices.size())) {
    Require("use", id);  // throws: no device, or not this one
  }
  return found->devices[id];
}

ffi::Any OpenCLDriver::Attribute(int dev_id, const std::string& key) {
  return FindAttribute(Device(dev_id).attributes, key);
}

int OpenCLDriver::Allocate(int dev_id, size_t nbytes, void** buffer) {
  cl_int rc = CL_SUCCESS;
  *buffer = Get().clCreateBuffer(Device(dev_id).context, CL_MEM_READ_WRITE, nbytes, nullptr, &rc);
  return rc;
}

int OpenCLDriver::Write(void* queue, void* buffer, size_t offset, const void* host, size_t nbytes) {
  return Get().clEnqueueWriteBuffer(static_cast<cl_command_queue>(queue),
                                    static_cast<cl_mem>(buffer), CL_TRUE, offset, nbytes, host, 0,
                                    nullptr, nullptr);
}

int OpenCLDriver::Read(void* queue, const void* buffer, size_t offset, void* host, size_t nbytes) {
  return Get().clEnqueueReadBuffer(static_cast<cl_command_queue>(queue),
                                   static_cast<cl_mem>(const_cast<void*>(buffer)), CL_TRUE, offset,
                                   nbytes, host, 0, nullptr, nullptr);
}

int OpenCLDriver::CopyBuffer(void* queue, const void* src, size_t src_offset, void* dst,
                             size_t dst_offset, size_t nbytes) {
  return Get().clEnqueueCopyBuffer(
      static_cast<cl_command_queue>(queue), static_cast<cl_mem>(const_cast<void*>(src)),
      static_cast<cl_mem>(dst), src_offset, dst_offset, nbytes, 0, nullptr, nullptr);
}

int OpenCLDriver::CreateQueue(int dev_id, void** queue) {
  const DeviceInfo& dev = Device(dev_id);
  cl_int rc = CL_SUCCESS;
  *queue = Get().clCreateCommandQueue(dev.context, dev.device, 0, &rc);
  return rc;
}

int OpenCLDriver::GetKernel(void* image, int dev_id, const std::string& name, void** kernel) {
  cl_int rc = CL_SUCCESS;
  *kernel = Get().clCreateKernel(static_cast<cl_program>(image), name.c_str(), &rc);
  return rc;
}

int64_t OpenCLDriver::DeclaredSharedBytes(void* kernel, int dev_id) {
  // Before any argument is set this is the kernel's own __local declarations (drivers that do
  // not report them, such as PoCL, give 0: the compile-time check covers those).
  cl_ulong bytes = 0;
  Get().clGetKernelWorkGroupInfo(static_cast<cl_kernel>(kernel), Device(dev_id).device,
                                 CL_KERNEL_LOCAL_MEM_SIZE, sizeof(bytes), &bytes, nullptr);
  return static_cast<int64_t>(bytes);
}

int OpenCLDriver::Launch(void* queue, void* kernel, const LaunchConfig& cfg,
                         const std::vector<HandleArg>& args) {
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
  return Get().clEnqueueNDRangeKernel(static_cast<cl_command_queue>(queue), k, work_dim, nullptr,
                                      global, local, 0, nullptr, nullptr);
}

}  // namespace tvm_backend_opencl
