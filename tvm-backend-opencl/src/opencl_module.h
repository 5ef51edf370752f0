/*!
 * \file opencl_module.h
 * \brief Device modules of kind "opencl": OpenCL C programs built per device on first launch.
 *
 * Formats: "cl" (payload = OpenCL C source) and "clbin" (payload = a program binary for the
 * device it was built on; when a device rejects it, the ("opencl", source) entry is built instead).
 *
 * Calling convention of a kernel function: the kernel arguments (buffers as cl_mem handles passed
 * as opaque pointers, or as OpenCL tensors; scalars by value, float16/bfloat16 scalars as float32)
 * followed by the launch arguments that LaunchConfig::Decode reads. Global size = grid * block,
 * local size = block. With a "dyn_shmem" launch tag the kernel takes one extra trailing
 * `__local` pointer argument of that many bytes.
 */
#ifndef TVM_BACKEND_OPENCL_OPENCL_MODULE_H_
#define TVM_BACKEND_OPENCL_OPENCL_MODULE_H_

#include <tvm/ffi/extra/module.h>
#include <tvm/runtime/device_module.h>

#include <string>

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

/*! \brief Build `source` for device `device_id` and return the program binary the platform gives.
 */
std::string BuildProgramBinary(const std::string& source, int device_id);

/*! \brief Register ffi.Module.create.opencl, ffi.Module.load_from_bytes.opencl and helpers. */
void RegisterModuleFunctions();

}  // namespace tvm_backend_opencl

#endif  // TVM_BACKEND_OPENCL_OPENCL_MODULE_H_
