/*!
 * \file opencl_driver.h
 * \brief The OpenCL driver on the kit's handle runtime (tvm/runtime/handle_driver.h): buffers are
 *        cl_mem handles, streams are in-order command queues, code images are cl_programs.
 *
 * Device ids: every device of every platform gets one id, platforms in the order the ICD loader
 * reports them, devices in each platform's order. One context per platform holds all of its
 * devices, so buffers of one platform are copied directly and may meet in one kernel.
 */
#ifndef TVM_BACKEND_OPENCL_OPENCL_DRIVER_H_
#define TVM_BACKEND_OPENCL_OPENCL_DRIVER_H_

#include <tvm/runtime/handle_driver.h>
#include <tvm/runtime/lazy_discovery.h>

#include <string>
#include <vector>

#include "cl_api.h"

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces
using namespace ::tvm_backend_opencl::cl;  // NOLINT(build/namespaces): CL names are prefixed

/*! \brief One OpenCL device and what we know about it. */
struct DeviceInfo {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue default_queue = nullptr;
  std::string name;
  std::string platform_name;
  std::string version;  // "OpenCL 3.0 PoCL ..."
  std::string extensions;
  std::string driver_version;
  cl_ulong local_mem_size = 0;  // bytes of __local memory one work-group may use
  AttributeList attributes;     // read once, when the device is found

  bool HasExtension(const std::string& ext) const;
};

/*! \brief The devices of every platform, enumerated once on first use. */
class Platforms {
 public:
  std::vector<DeviceInfo> devices;

 private:
  friend class LazyDiscovery<Platforms>;
  Platforms() = default;
  /*! \brief "" on success, else why no device is usable. */
  std::string Discover();
};

/*!
 * \brief The text of an OpenCL info query asked twice, for its size and then its bytes: `query`
 *        is `(size_t size, void* value, size_t* size_ret) -> cl_int`. Trailing NULs and newlines
 *        are dropped; "" when the query fails.
 */
template <typename Query>
std::string QueryString(Query query) {
  size_t size = 0;
  if (query(0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string out(size, '\0');
  if (query(size, &out[0], nullptr) != CL_SUCCESS) return "";
  while (!out.empty() && (out.back() == '\0' || out.back() == '\n')) out.pop_back();
  return out;
}

/*! \brief clGetDeviceInfo of a string. */
std::string DeviceString(cl_device_id dev, cl_device_info key);

/*! \brief clGetDeviceInfo of a scalar; `fallback` when the query fails (vendor keys). */
template <typename T>
T DeviceScalar(cl_device_id dev, cl_device_info key, T fallback = T{}) {
  T value{};
  return Get().clGetDeviceInfo(dev, key, sizeof(T), &value, nullptr) == CL_SUCCESS ? value
                                                                                   : fallback;
}

class OpenCLDriver final : public HandleDriver {
 public:
  /*! \brief The process-wide driver (never destroyed). */
  static OpenCLDriver* Global();
  /*! \brief Device `id` (discovering the devices on first use; throws when it does not exist). */
  const DeviceInfo& Device(int id);
  /*! \brief Whether discovery has run in this process (for tests of lazy activation). */
  bool Discovered() const { return discovery_.discovered(); }

  std::string UnavailableReason() final;
  int DeviceCount() final { return static_cast<int>(discovery_.TryGet()->devices.size()); }
  std::string ErrorString(int status) final { return cl::ErrorString(status); }
  ffi::Any Attribute(int dev_id, const std::string& key) final;
  int Allocate(int dev_id, size_t nbytes, void** buffer) final;
  int Release(void* buffer) final { return Get().clReleaseMemObject(static_cast<cl_mem>(buffer)); }
  int Write(void* queue, void* buffer, size_t offset, const void* host, size_t nbytes) final;
  int Read(void* queue, const void* buffer, size_t offset, void* host, size_t nbytes) final;
  int CopyBuffer(void* queue, const void* src, size_t src_offset, void* dst, size_t dst_offset,
                 size_t nbytes) final;
  bool SharesMemory(int a, int b) final { return Device(a).context == Device(b).context; }
  void* DefaultQueue(int dev_id) final { return Device(dev_id).default_queue; }
  int CreateQueue(int dev_id, void** queue) final;
  int DestroyQueue(void* queue) final {
    return Get().clReleaseCommandQueue(static_cast<cl_command_queue>(queue));
  }
  int Finish(void* queue) final { return Get().clFinish(static_cast<cl_command_queue>(queue)); }
  int GetKernel(void* image, int dev_id, const std::string& name, void** kernel) final;
  void ReleaseKernel(void* kernel) final { Get().clReleaseKernel(static_cast<cl_kernel>(kernel)); }
  void ReleaseImage(void* image) final { Get().clReleaseProgram(static_cast<cl_program>(image)); }
  int64_t DeclaredSharedBytes(void* kernel, int dev_id) final;
  int Launch(void* queue, void* kernel, const LaunchConfig& cfg,
             const std::vector<HandleArg>& args) final;

 private:
  OpenCLDriver();
  LazyDiscovery<Platforms> discovery_;
};

/*! \brief What to install when no device is usable. */
extern const char* const kInstallFix;

}  // namespace tvm_backend_opencl

#endif  // TVM_BACKEND_OPENCL_OPENCL_DRIVER_H_
