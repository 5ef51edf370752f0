/*!
 * \file opencl_workspace.h
 * \brief Process-wide OpenCL state: platforms, devices, contexts, queues (streams) and the
 *        registry of buffers this backend allocated.
 *
 * Device ids: every device of every platform gets one id, platforms in the order the ICD loader
 * reports them, devices in each platform's order. One context per platform holds all of its
 * devices, so buffers can be copied between devices of one platform directly.
 *
 * A stream (TVMFFIStreamHandle) is a cl_command_queue; the null stream is the device's default
 * in-order queue. Buffers are cl_mem handles used directly as DLTensor::data.
 */
#ifndef TVM_BACKEND_OPENCL_OPENCL_WORKSPACE_H_
#define TVM_BACKEND_OPENCL_OPENCL_WORKSPACE_H_

#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/runtime/lazy_discovery.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cl_api.h"

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

using namespace ::tvm_backend_opencl::cl;  // NOLINT(build/namespaces): the CL names are prefixed
                                           // already

/*! \brief One OpenCL device and what we know about it. */
struct DeviceInfo {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue default_queue = nullptr;
  std::string name;
  std::string platform_name;
  std::string version;     // "OpenCL 3.0 PoCL ..."
  std::string extensions;  // space separated
  std::string driver_version;
  cl_device_type type = 0;
  cl_ulong local_mem_size = 0;  // bytes of __local memory one work-group may use

  bool HasExtension(const std::string& ext) const;
};

/*! \brief Where a buffer lives. */
struct BufferInfo {
  int device_id;
  size_t nbytes;
};

/*!
 * \brief What to install when discovery finds no platform or device (shown in every error).
 */
extern const char* const kInstallFix;

/*!
 * \brief The process-wide OpenCL state, in two steps so that activation stays cheap:
 *        Load() (at backend init) only dlopens the ICD loader and resolves the entry points;
 *        platform/device discovery (clGetPlatformIDs and friends, ~20 ms with PoCL) runs once,
 *        thread-safely, on the first use of a device or a kernel (TryGlobal / Global).
 *        The workspace is never destroyed.
 */
class Workspace {
 public:
  /*!
   * \brief Load libOpenCL and resolve its entry points; no platform is queried.
   * \return "" on success, else why OpenCL cannot be used at all ("libOpenCL.so.1 not found ...").
   */
  static std::string Load();
  /*!
   * \brief The workspace, discovering platforms and devices on the first call (std::call_once).
   * \param why Set to the reason when discovery found no usable device.
   * \return Null when discovery found no usable device (then the reason is in `why`).
   */
  static Workspace* TryGlobal(std::string* why = nullptr);
  /*!
   * \brief The workspace (discovering on first use); throws RuntimeError
   *        "<what>: <reason>; <fix>" when this machine has no usable OpenCL device.
   */
  static Workspace* Global(const char* what = "OpenCL is unavailable");
  /*! \brief Throw the RuntimeError of Global for `what` (discovery must have failed). */
  [[noreturn]] static void ThrowUnavailable(const std::string& what);
  /*! \brief Whether discovery has run in this process (for tests of lazy activation). */
  static bool Discovered();

  int num_devices() const { return static_cast<int>(devices_.size()); }
  /*! \brief The device `id`; throws ValueError naming the valid range when out of range. */
  const DeviceInfo& Device(int id) const;

  /*! \brief The queue for `stream` on device `id` (null stream: the device's default queue). */
  cl_command_queue Queue(int id, TVMFFIStreamHandle stream);
  /*! \brief A new in-order queue on device `id`. */
  TVMFFIStreamHandle CreateStream(int id);
  void FreeStream(int id, TVMFFIStreamHandle stream);

  /*! \brief Allocate a buffer of `nbytes` on device `id`, recorded in the buffer registry. */
  cl_mem Alloc(int id, size_t nbytes);
  /*! \brief Release a buffer; never throws (warns on stderr about unknown handles). */
  void Free(cl_mem mem);
  /*! \brief The record of `mem`; false when `mem` is not a live buffer allocated here. */
  bool LookupBuffer(const void* mem, BufferInfo* info);

  /*! \brief clGetDeviceInfo as a string / scalar. */
  std::string DeviceString(cl_device_id dev, cl_device_info key) const;
  template <typename T>
  T DeviceScalar(cl_device_id dev, cl_device_info key) const {
    T value{};
    TVM_OPENCL_CALL(clGetDeviceInfo, dev, key, sizeof(T), &value, nullptr);
    return value;
  }
  /*! \brief Like DeviceScalar, but `fallback` when the query fails (vendor-specific keys). */
  template <typename T>
  T DeviceScalarOr(cl_device_id dev, cl_device_info key, T fallback) const {
    T value{};
    if (Get().clGetDeviceInfo(dev, key, sizeof(T), &value, nullptr) != CL_SUCCESS) return fallback;
    return value;
  }

 private:
  friend class LazyDiscovery<Workspace>;
  Workspace() = default;
  /*! \brief The one discovery of this process (never destroyed; see lazy_discovery.h). */
  static LazyDiscovery<Workspace>& Discovery();
  /*! \brief Enumerate platforms and devices: "" on success, else why none is usable. */
  std::string Discover();

  std::vector<DeviceInfo> devices_;
  std::mutex mu_;
  std::unordered_map<const void*, BufferInfo> buffers_;
  std::unordered_map<TVMFFIStreamHandle, int> streams_;
};

}  // namespace tvm_backend_opencl

#endif  // TVM_BACKEND_OPENCL_OPENCL_WORKSPACE_H_
