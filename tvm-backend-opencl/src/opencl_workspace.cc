/*!
 * \file opencl_workspace.cc
 * \brief Platform/device discovery, contexts, queues and the buffer registry.
 */
#include "opencl_workspace.h"

#include <tvm/ffi/error.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <sstream>

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

namespace {
std::string PlatformString(cl_platform_id platform, cl_platform_info key) {
  size_t size = 0;
  if (Get().clGetPlatformInfo(platform, key, 0, nullptr, &size) != CL_SUCCESS || size == 0)
    return "";
  std::string out(size, '\0');
  if (Get().clGetPlatformInfo(platform, key, size, &out[0], nullptr) != CL_SUCCESS) return "";
  while (!out.empty() && out.back() == '\0') out.pop_back();
  return out;
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

const char* const kInstallFix =
    "apt-get install pocl-opencl-icd ocl-icd-libopencl1 or your vendor's ICD";

std::string Workspace::Load() {
  std::string err;
  if (cl::Load(&err) == nullptr) return err;
  return "";
}

LazyDiscovery<Workspace>& Workspace::Discovery() {
  static LazyDiscovery<Workspace> discovery("OpenCL", kInstallFix);
  return discovery;
}

Workspace* Workspace::TryGlobal(std::string* why) { return Discovery().TryGet(why); }

Workspace* Workspace::Global(const char* what) { return Discovery().Get(what); }

void Workspace::ThrowUnavailable(const std::string& what) { Discovery().ThrowUnavailable(what); }

bool Workspace::Discovered() { return Discovery().discovered(); }

std::string Workspace::Discover() {
  const Api& api = Get();
  cl_uint nplat = 0;
  cl_int rc = api.clGetPlatformIDs(0, nullptr, &nplat);
  if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && nplat == 0)) {
    const char* vendors = std::getenv("OCL_ICD_VENDORS");
    std::string where = vendors != nullptr && *vendors != '\0'
                            ? std::string("OCL_ICD_VENDORS=") + vendors
                            : std::string("/etc/OpenCL/vendors");
    return "no OpenCL platform found (no ICD is installed or registered under " + where + ")";
  }
  if (rc != CL_SUCCESS) return "clGetPlatformIDs failed with " + ErrorString(rc);
  std::vector<cl_platform_id> platforms(nplat);
  rc = api.clGetPlatformIDs(nplat, platforms.data(), nullptr);
  if (rc != CL_SUCCESS) return "clGetPlatformIDs failed with " + ErrorString(rc);

  std::string problems;
  for (cl_platform_id platform : platforms) {
    std::string pname = PlatformString(platform, CL_PLATFORM_NAME);
    cl_uint ndev = 0;
    rc = api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev);
    if (rc != CL_SUCCESS || ndev == 0) continue;  // CL_DEVICE_NOT_FOUND: a platform without devices
    std::vector<cl_device_id> ids(ndev);
    rc = api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, ndev, ids.data(), nullptr);
    if (rc != CL_SUCCESS) {
      problems += "; platform '" + pname + "': clGetDeviceIDs failed with " + ErrorString(rc);
      continue;
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform), 0};
    cl_context ctx = api.clCreateContext(props, ndev, ids.data(), nullptr, nullptr, &rc);
    if (rc != CL_SUCCESS || ctx == nullptr) {
      problems += "; platform '" + pname + "': clCreateContext failed with " + ErrorString(rc);
      continue;
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
      info.type = DeviceScalarOr<cl_device_type>(id, CL_DEVICE_TYPE, 0);
      info.local_mem_size = DeviceScalarOr<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE, 0);
      info.default_queue = api.clCreateCommandQueue(ctx, id, 0, &rc);
      if (rc != CL_SUCCESS || info.default_queue == nullptr) {
        problems +=
            "; device '" + info.name + "': clCreateCommandQueue failed with " + ErrorString(rc);
        continue;
      }
      devices_.push_back(std::move(info));
    }
  }
  if (devices_.empty()) {
    return "no usable OpenCL device found on " + std::to_string(nplat) + " platform(s)" + problems;
  }
  return "";
}

const DeviceInfo& Workspace::Device(int id) const {
  if (id < 0 || id >= num_devices()) {
    TVM_FFI_THROW(ValueError) << "opencl(" << id << ") does not exist: this machine has "
                              << num_devices() << " OpenCL device(s) (ids 0.." << num_devices() - 1
                              << ")";
  }
  return devices_[id];
}

std::string Workspace::DeviceString(cl_device_id dev, cl_device_info key) const {
  size_t size = 0;
  TVM_OPENCL_CALL(clGetDeviceInfo, dev, key, 0, nullptr, &size);
  std::string out(size, '\0');
  if (size > 0) TVM_OPENCL_CALL(clGetDeviceInfo, dev, key, size, &out[0], nullptr);
  while (!out.empty() && out.back() == '\0') out.pop_back();
  return out;
}

cl_command_queue Workspace::Queue(int id, TVMFFIStreamHandle stream) {
  const DeviceInfo& dev = Device(id);
  if (stream == nullptr) return dev.default_queue;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) {
    TVM_FFI_THROW(ValueError) << "stream " << stream << " was not created for an OpenCL device "
                              << "(use Device.create_stream / runtime.DeviceCreateStream)";
  }
  if (it->second != id) {
    TVM_FFI_THROW(ValueError) << "stream " << stream << " belongs to opencl(" << it->second
                              << "), not opencl(" << id << ")";
  }
  return reinterpret_cast<cl_command_queue>(stream);
}

TVMFFIStreamHandle Workspace::CreateStream(int id) {
  const DeviceInfo& dev = Device(id);
  cl_int rc = CL_SUCCESS;
  cl_command_queue q = Get().clCreateCommandQueue(dev.context, dev.device, 0, &rc);
  if (rc != CL_SUCCESS || q == nullptr) {
    TVM_FFI_THROW(RuntimeError) << "OpenCL error: clCreateCommandQueue failed with "
                                << ErrorString(rc);
  }
  std::lock_guard<std::mutex> lock(mu_);
  streams_[q] = id;
  return q;
}

void Workspace::FreeStream(int id, TVMFFIStreamHandle stream) {
  if (stream == nullptr) return;
  cl_command_queue q = Queue(id, stream);  // validates
  TVM_OPENCL_CALL(clFinish, q);
  TVM_OPENCL_CALL(clReleaseCommandQueue, q);
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(stream);
}

cl_mem Workspace::Alloc(int id, size_t nbytes) {
  const DeviceInfo& dev = Device(id);
  cl_int rc = CL_SUCCESS;
  // A zero-byte buffer is invalid in OpenCL; empty tensors still get a distinct handle.
  cl_mem mem =
      Get().clCreateBuffer(dev.context, CL_MEM_READ_WRITE, nbytes == 0 ? 1 : nbytes, nullptr, &rc);
  if (rc != CL_SUCCESS || mem == nullptr) {
    TVM_FFI_THROW(RuntimeError) << "cannot allocate " << nbytes << " bytes on opencl(" << id << ") "
                                << dev.name << ": clCreateBuffer failed with " << ErrorString(rc);
  }
  std::lock_guard<std::mutex> lock(mu_);
  buffers_[mem] = BufferInfo{id, nbytes};
  return mem;
}

void Workspace::Free(cl_mem mem) {
  // Called from tensor destructors: must never throw (that would terminate the process).
  if (mem == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (buffers_.erase(mem) == 0) {
      std::fprintf(stderr,
                   "[tvm opencl] warning: ignoring free of %p, not an OpenCL buffer "
                   "allocated by TVM\n",
                   static_cast<void*>(mem));
      return;
    }
  }
  // The release is deferred by OpenCL until queued commands using the buffer have finished.
  cl_int rc = Get().clReleaseMemObject(mem);
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "[tvm opencl] warning: clReleaseMemObject failed with %s\n",
                 ErrorString(rc).c_str());
  }
}

bool Workspace::LookupBuffer(const void* mem, BufferInfo* info) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buffers_.find(mem);
  if (it == buffers_.end()) return false;
  *info = it->second;
  return true;
}

}  // namespace tvm_backend_opencl
