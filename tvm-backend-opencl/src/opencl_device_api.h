/*!
 * \file opencl_device_api.h
 * \brief The DeviceAPI of kDLOpenCL (device type 4).
 */
#ifndef TVM_BACKEND_OPENCL_OPENCL_DEVICE_API_H_
#define TVM_BACKEND_OPENCL_OPENCL_DEVICE_API_H_

#include <tvm/runtime/device_api.h>

#include <string>

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

/*!
 * \brief Buffers are cl_mem handles (the DLTensor data pointer *is* the cl_mem); a stream is a
 *        cl_command_queue, null meaning the device's default queue. Copies to and from the host
 *        are blocking; device-to-device copies are queued.
 */
class OpenCLDeviceAPI final : public DeviceAPI {
 public:
  ffi::Any GetAttr(DLDevice dev, const std::string& key) final;
  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) final;
  void FreeDataSpace(DLDevice dev, void* ptr) final;
  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final;
  TVMFFIStreamHandle CreateStream(DLDevice dev) final;
  void FreeStream(DLDevice dev, TVMFFIStreamHandle stream) final;
  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) final;

  /*! \brief The process-wide instance (never destroyed). */
  static OpenCLDeviceAPI* Global();
};

}  // namespace tvm_backend_opencl

#endif  // TVM_BACKEND_OPENCL_OPENCL_DEVICE_API_H_
