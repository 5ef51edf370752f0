/*!
 * \file opencl_device_api.cc
 * \brief DeviceAPI for kDLOpenCL: attributes, cl_mem buffers, copies, queues as streams.
 */
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/device_api.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "opencl_device_api.h"
#include "opencl_workspace.h"

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

namespace {
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

/*! \brief The buffer record of `ptr`, checking that [offset, offset + nbytes) lies inside it. */
BufferInfo CheckedBuffer(Workspace* ws, const void* ptr, size_t offset, size_t nbytes,
                         const char* role) {
  BufferInfo info{};
  if (!ws->LookupBuffer(ptr, &info)) {
    TVM_FFI_THROW(ValueError) << "copy " << role << " " << ptr
                              << " is not an OpenCL buffer allocated by TVM";
  }
  if (offset > info.nbytes || nbytes > info.nbytes - offset) {
    TVM_FFI_THROW(ValueError) << "copy " << role << " range [" << offset << ", " << offset + nbytes
                              << ") is outside its " << info.nbytes << "-byte OpenCL buffer";
  }
  return info;
}

/*! \brief The workspace for an operation on opencl(`id`); throws naming `what` and the fix when
 *         this machine has no usable OpenCL device. */
Workspace* Require(const char* what, int id) {
  Workspace* ws = Workspace::TryGlobal();
  if (ws == nullptr) {
    Workspace::ThrowUnavailable(std::string("cannot ") + what + " opencl(" + std::to_string(id) +
                                ")");
  }
  return ws;
}
}  // namespace

ffi::Any OpenCLDeviceAPI::GetAttr(DLDevice dev, const std::string& key) {
  // The first device query discovers platforms and devices; without any, no device exists and
  // every attribute is None.
  std::string why;
  Workspace* ws = Workspace::TryGlobal(&why);
  if (key == "unavailable_reason") return ffi::String(why);
  if (ws == nullptr) return key == "exist" ? ffi::Any(false) : ffi::Any();
  if (key == "exist") return dev.device_id >= 0 && dev.device_id < ws->num_devices();
  const DeviceInfo& info = ws->Device(dev.device_id);
  cl_device_id d = info.device;
  if (key == "name") return ffi::String(info.name);
  if (key == "max_threads_per_block") {
    return static_cast<int64_t>(ws->DeviceScalar<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  }
  if (key == "warp_size") {
    // OpenCL has no portable notion of a warp; vendor queries where present, else 1.
    cl_uint w = ws->DeviceScalarOr<cl_uint>(d, CL_DEVICE_WARP_SIZE_NV, 0);
    if (w == 0) w = ws->DeviceScalarOr<cl_uint>(d, CL_DEVICE_WAVEFRONT_WIDTH_AMD, 0);
    return static_cast<int64_t>(w == 0 ? 1 : w);
  }
  if (key == "max_shared_memory_per_block") {
    return static_cast<int64_t>(ws->DeviceScalar<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE));
  }
  if (key == "multi_processor_count") {
    return static_cast<int64_t>(ws->DeviceScalar<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
  }
  if (key == "compute_version") return ffi::String(VersionNumber(info.version));
  if (key == "total_global_memory") {
    return static_cast<int64_t>(ws->DeviceScalar<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE));
  }
  if (key == "max_clock_rate") {  // MHz in OpenCL, kHz in TVM
    return static_cast<int64_t>(ws->DeviceScalar<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY)) * 1000;
  }
  if (key == "api_version") return ffi::String(info.version);
  if (key == "driver_version") return ffi::String(info.driver_version);
  if (key == "max_thread_dimensions") {
    cl_uint ndim = ws->DeviceScalar<cl_uint>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    std::vector<size_t> sizes(ndim == 0 ? 1 : ndim);
    TVM_OPENCL_CALL(clGetDeviceInfo, d, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                    sizes.size() * sizeof(size_t), sizes.data(), nullptr);
    ffi::Array<int64_t> out;
    for (cl_uint i = 0; i < 3; ++i) out.push_back(i < ndim ? static_cast<int64_t>(sizes[i]) : 1);
    return out;
  }
  // OpenCL-specific extras.
  if (key == "device_extensions") return ffi::String(info.extensions);
  if (key == "opencl_c_version")
    return ffi::String(ws->DeviceString(d, CL_DEVICE_OPENCL_C_VERSION));
  if (key == "platform_name") return ffi::String(info.platform_name);
  if (key == "device_kind") return ffi::String(DeviceKind(info.type));
  if (key == "max_mem_alloc_size") {
    return static_cast<int64_t>(ws->DeviceScalar<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  }
  return ffi::Any();
}

void* OpenCLDeviceAPI::AllocDataSpace(DLDevice dev, size_t nbytes, size_t /*alignment*/) {
  // cl_mem buffers are aligned by the implementation (CL_DEVICE_MEM_BASE_ADDR_ALIGN).
  return Require("allocate memory on", dev.device_id)->Alloc(dev.device_id, nbytes);
}

void OpenCLDeviceAPI::FreeDataSpace(DLDevice /*dev*/, void* ptr) {
  // Never throws (called from tensor destructors); without a workspace no buffer was allocated
  // here.
  Workspace* ws = Workspace::TryGlobal();
  if (ws != nullptr) {
    ws->Free(static_cast<cl_mem>(ptr));
  } else if (ptr != nullptr) {
    std::fprintf(stderr,
                 "[tvm opencl] warning: ignoring free of %p: no OpenCL device on this machine\n",
                 ptr);
  }
}

void OpenCLDeviceAPI::CopyDataFromTo(const void* from, size_t from_offset, void* to,
                                     size_t to_offset, size_t nbytes, DLDevice dev_from,
                                     DLDevice dev_to, TVMFFIStreamHandle stream) {
  if (nbytes == 0) return;
  Workspace* ws =
      Require(dev_from.device_type == kDLOpenCL ? "copy from" : "copy to",
              dev_from.device_type == kDLOpenCL ? dev_from.device_id : dev_to.device_id);
  bool from_cl = dev_from.device_type == kDLOpenCL;
  bool to_cl = dev_to.device_type == kDLOpenCL;
  if (from_cl && to_cl) {
    BufferInfo src = CheckedBuffer(ws, from, from_offset, nbytes, "source");
    BufferInfo dst = CheckedBuffer(ws, to, to_offset, nbytes, "destination");
    const DeviceInfo& sdev = ws->Device(src.device_id);
    const DeviceInfo& ddev = ws->Device(dst.device_id);
    cl_mem smem = static_cast<cl_mem>(const_cast<void*>(from));
    cl_mem dmem = static_cast<cl_mem>(to);
    if (sdev.context == ddev.context) {
      cl_command_queue q = ws->Queue(src.device_id, stream);
      TVM_OPENCL_CALL(clEnqueueCopyBuffer, q, smem, dmem, from_offset, to_offset, nbytes, 0,
                      nullptr, nullptr);
      return;
    }
    // Devices of different platforms share no context: stage through the host.
    std::vector<char> staging(nbytes);
    TVM_OPENCL_CALL(clEnqueueReadBuffer, ws->Queue(src.device_id, stream), smem, CL_TRUE,
                    from_offset, nbytes, staging.data(), 0, nullptr, nullptr);
    TVM_OPENCL_CALL(clEnqueueWriteBuffer, ws->Queue(dst.device_id, nullptr), dmem, CL_TRUE,
                    to_offset, nbytes, staging.data(), 0, nullptr, nullptr);
    return;
  }
  if (to_cl) {  // host -> device; blocking, so the caller may free its host memory right away
    BufferInfo dst = CheckedBuffer(ws, to, to_offset, nbytes, "destination");
    TVM_OPENCL_CALL(clEnqueueWriteBuffer, ws->Queue(dst.device_id, stream), static_cast<cl_mem>(to),
                    CL_TRUE, to_offset, nbytes, static_cast<const char*>(from) + from_offset, 0,
                    nullptr, nullptr);
    return;
  }
  if (from_cl) {  // device -> host; blocking, ordered after the kernels queued on the stream
    BufferInfo src = CheckedBuffer(ws, from, from_offset, nbytes, "source");
    TVM_OPENCL_CALL(clEnqueueReadBuffer, ws->Queue(src.device_id, stream),
                    static_cast<cl_mem>(const_cast<void*>(from)), CL_TRUE, from_offset, nbytes,
                    static_cast<char*>(to) + to_offset, 0, nullptr, nullptr);
    return;
  }
  TVM_FFI_THROW(ValueError) << "the OpenCL DeviceAPI was asked to copy between "
                            << DeviceTypeName(dev_from.device_type) << " and "
                            << DeviceTypeName(dev_to.device_type);
}

TVMFFIStreamHandle OpenCLDeviceAPI::CreateStream(DLDevice dev) {
  return Require("create a stream on", dev.device_id)->CreateStream(dev.device_id);
}

void OpenCLDeviceAPI::FreeStream(DLDevice dev, TVMFFIStreamHandle stream) {
  Require("free a stream of", dev.device_id)->FreeStream(dev.device_id, stream);
}

void OpenCLDeviceAPI::StreamSync(DLDevice dev, TVMFFIStreamHandle stream) {
  TVM_OPENCL_CALL(clFinish, Require("synchronize", dev.device_id)->Queue(dev.device_id, stream));
}

OpenCLDeviceAPI* OpenCLDeviceAPI::Global() {
  static auto* inst = new OpenCLDeviceAPI();  // must outlive the process (DeviceAPI::Register)
  return inst;
}

}  // namespace tvm_backend_opencl
