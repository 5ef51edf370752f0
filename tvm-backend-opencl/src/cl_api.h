/*!
 * \file cl_api.h
 * \brief The small slice of the OpenCL C API this backend uses, declared here so that the DSO
 *        builds with nothing but a C++ compiler (no OpenCL headers, no libOpenCL at link time).
 *
 * Values and signatures follow the Khronos OpenCL 1.2 specification. The entry points are
 * resolved from libOpenCL.so.1 (the ICD loader) with dlopen/dlsym at backend init.
 */
#ifndef TVM_BACKEND_OPENCL_CL_API_H_
#define TVM_BACKEND_OPENCL_CL_API_H_

#include <tvm/runtime/driver_loader.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tvm_backend_opencl {
namespace cl {

// ---- scalar types -------------------------------------------------------------------------
using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_bool = cl_uint;
using cl_bitfield = cl_ulong;
using cl_device_type = cl_bitfield;
using cl_mem_flags = cl_bitfield;
using cl_command_queue_properties = cl_bitfield;
using cl_context_properties = intptr_t;
using cl_platform_info = cl_uint;
using cl_device_info = cl_uint;
using cl_program_info = cl_uint;
using cl_program_build_info = cl_uint;
using cl_kernel_work_group_info = cl_uint;

// ---- opaque handles -------------------------------------------------------------------------
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

// ---- constants ------------------------------------------------------------------------------
constexpr cl_int CL_SUCCESS = 0;
constexpr cl_int CL_BUILD_PROGRAM_FAILURE = -11;
constexpr cl_int CL_PLATFORM_NOT_FOUND_KHR = -1001;
constexpr cl_bool CL_FALSE = 0;
constexpr cl_bool CL_TRUE = 1;

constexpr cl_platform_info CL_PLATFORM_VERSION = 0x0901;
constexpr cl_platform_info CL_PLATFORM_NAME = 0x0902;
constexpr cl_platform_info CL_PLATFORM_VENDOR = 0x0903;

constexpr cl_device_type CL_DEVICE_TYPE_CPU = 1 << 1;
constexpr cl_device_type CL_DEVICE_TYPE_GPU = 1 << 2;
constexpr cl_device_type CL_DEVICE_TYPE_ACCELERATOR = 1 << 3;
constexpr cl_device_type CL_DEVICE_TYPE_ALL = 0xFFFFFFFF;

constexpr cl_device_info CL_DEVICE_TYPE = 0x1000;
constexpr cl_device_info CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002;
constexpr cl_device_info CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS = 0x1003;
constexpr cl_device_info CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004;
constexpr cl_device_info CL_DEVICE_MAX_WORK_ITEM_SIZES = 0x1005;
constexpr cl_device_info CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x100C;
constexpr cl_device_info CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010;
constexpr cl_device_info CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F;
constexpr cl_device_info CL_DEVICE_LOCAL_MEM_SIZE = 0x1023;
constexpr cl_device_info CL_DEVICE_NAME = 0x102B;
constexpr cl_device_info CL_DEVICE_VENDOR = 0x102C;
constexpr cl_device_info CL_DRIVER_VERSION = 0x102D;
constexpr cl_device_info CL_DEVICE_VERSION = 0x102F;
constexpr cl_device_info CL_DEVICE_EXTENSIONS = 0x1030;
constexpr cl_device_info CL_DEVICE_OPENCL_C_VERSION = 0x103D;
/*! \brief Vendor extensions (cl_nv_device_attribute_query, cl_amd_device_attribute_query). */
constexpr cl_device_info CL_DEVICE_WARP_SIZE_NV = 0x4003;
constexpr cl_device_info CL_DEVICE_WAVEFRONT_WIDTH_AMD = 0x4043;

constexpr cl_context_properties CL_CONTEXT_PLATFORM = 0x1084;
constexpr cl_mem_flags CL_MEM_READ_WRITE = 1 << 0;

constexpr cl_program_info CL_PROGRAM_BINARY_SIZES = 0x1165;
constexpr cl_program_info CL_PROGRAM_BINARIES = 0x1166;
constexpr cl_program_build_info CL_PROGRAM_BUILD_LOG = 0x1183;
constexpr cl_kernel_work_group_info CL_KERNEL_LOCAL_MEM_SIZE = 0x11B2;

// ---- entry points ---------------------------------------------------------------------------
using ContextNotify = void (*)(const char*, const void*, size_t, void*);
using ProgramNotify = void (*)(cl_program, void*);

// Entry points resolved from the ICD loader: table field, exported symbol, signature.
#define TVM_OPENCL_SYMBOLS(X)                                                                    \
  X(clGetPlatformIDs, "clGetPlatformIDs", cl_int(cl_uint, cl_platform_id*, cl_uint*))            \
  X(clGetPlatformInfo, "clGetPlatformInfo",                                                      \
    cl_int(cl_platform_id, cl_platform_info, size_t, void*, size_t*))                            \
  X(clGetDeviceIDs, "clGetDeviceIDs",                                                            \
    cl_int(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*))                    \
  X(clGetDeviceInfo, "clGetDeviceInfo",                                                          \
    cl_int(cl_device_id, cl_device_info, size_t, void*, size_t*))                                \
  X(clCreateContext, "clCreateContext",                                                          \
    cl_context(const cl_context_properties*, cl_uint, const cl_device_id*, ContextNotify, void*, \
               cl_int*))                                                                         \
  X(clReleaseContext, "clReleaseContext", cl_int(cl_context))                                    \
  X(clCreateCommandQueue, "clCreateCommandQueue",                                                \
    cl_command_queue(cl_context, cl_device_id, cl_command_queue_properties, cl_int*))            \
  X(clReleaseCommandQueue, "clReleaseCommandQueue", cl_int(cl_command_queue))                    \
  X(clFinish, "clFinish", cl_int(cl_command_queue))                                              \
  X(clCreateBuffer, "clCreateBuffer", cl_mem(cl_context, cl_mem_flags, size_t, void*, cl_int*))  \
  X(clReleaseMemObject, "clReleaseMemObject", cl_int(cl_mem))                                    \
  X(clEnqueueReadBuffer, "clEnqueueReadBuffer",                                                  \
    cl_int(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint, const cl_event*,   \
           cl_event*))                                                                           \
  X(clEnqueueWriteBuffer, "clEnqueueWriteBuffer",                                                \
    cl_int(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint,              \
           const cl_event*, cl_event*))                                                          \
  X(clEnqueueCopyBuffer, "clEnqueueCopyBuffer",                                                  \
    cl_int(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event*,   \
           cl_event*))                                                                           \
  X(clCreateProgramWithSource, "clCreateProgramWithSource",                                      \
    cl_program(cl_context, cl_uint, const char**, const size_t*, cl_int*))                       \
  X(clCreateProgramWithBinary, "clCreateProgramWithBinary",                                      \
    cl_program(cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**,   \
               cl_int*, cl_int*))                                                                \
  X(clBuildProgram, "clBuildProgram",                                                            \
    cl_int(cl_program, cl_uint, const cl_device_id*, const char*, ProgramNotify, void*))         \
  X(clGetProgramInfo, "clGetProgramInfo",                                                        \
    cl_int(cl_program, cl_program_info, size_t, void*, size_t*))                                 \
  X(clGetProgramBuildInfo, "clGetProgramBuildInfo",                                              \
    cl_int(cl_program, cl_device_id, cl_program_build_info, size_t, void*, size_t*))             \
  X(clReleaseProgram, "clReleaseProgram", cl_int(cl_program))                                    \
  X(clCreateKernel, "clCreateKernel", cl_kernel(cl_program, const char*, cl_int*))               \
  X(clReleaseKernel, "clReleaseKernel", cl_int(cl_kernel))                                       \
  X(clSetKernelArg, "clSetKernelArg", cl_int(cl_kernel, cl_uint, size_t, const void*))           \
  X(clGetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo",                                        \
    cl_int(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*, size_t*))          \
  X(clEnqueueNDRangeKernel, "clEnqueueNDRangeKernel",                                            \
    cl_int(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*,    \
           cl_uint, const cl_event*, cl_event*))

/*! \brief Function pointers resolved from the ICD loader; all non-null after a successful Load. */
TVM_DRIVER_TABLE(Api, TVM_OPENCL_SYMBOLS);

/*!
 * \brief Load the ICD loader and resolve every entry point.
 * \param err Set to a reason on failure ("libOpenCL.so.1 not found: ...").
 * \return The table, or null on failure. The library stays loaded for the process lifetime.
 */
const Api* Load(std::string* err);

/*! \brief The table after a successful Load (throws RuntimeError before). */
const Api& Get();

/*! \brief "CL_INVALID_VALUE (-30)" for an error code. */
std::string ErrorString(cl_int code);

}  // namespace cl
}  // namespace tvm_backend_opencl

#endif  // TVM_BACKEND_OPENCL_CL_API_H_
