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
// Status codes: name, value (one list gives the constants and ErrorString's names).
#define TVM_OPENCL_STATUS_CODES(X)                     \
  X(CL_SUCCESS, 0)                                     \
  X(CL_DEVICE_NOT_FOUND, -1)                           \
  X(CL_DEVICE_NOT_AVAILABLE, -2)                       \
  X(CL_COMPILER_NOT_AVAILABLE, -3)                     \
  X(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4)              \
  X(CL_OUT_OF_RESOURCES, -5)                           \
  X(CL_OUT_OF_HOST_MEMORY, -6)                         \
  X(CL_PROFILING_INFO_NOT_AVAILABLE, -7)               \
  X(CL_MEM_COPY_OVERLAP, -8)                           \
  X(CL_BUILD_PROGRAM_FAILURE, -11)                     \
  X(CL_MAP_FAILURE, -12)                               \
  X(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13)              \
  X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14) \
  X(CL_COMPILE_PROGRAM_FAILURE, -15)                   \
  X(CL_LINKER_NOT_AVAILABLE, -16)                      \
  X(CL_LINK_PROGRAM_FAILURE, -17)                      \
  X(CL_INVALID_VALUE, -30)                             \
  X(CL_INVALID_DEVICE_TYPE, -31)                       \
  X(CL_INVALID_PLATFORM, -32)                          \
  X(CL_INVALID_DEVICE, -33)                            \
  X(CL_INVALID_CONTEXT, -34)                           \
  X(CL_INVALID_QUEUE_PROPERTIES, -35)                  \
  X(CL_INVALID_COMMAND_QUEUE, -36)                     \
  X(CL_INVALID_HOST_PTR, -37)                          \
  X(CL_INVALID_MEM_OBJECT, -38)                        \
  X(CL_INVALID_BINARY, -42)                            \
  X(CL_INVALID_BUILD_OPTIONS, -43)                     \
  X(CL_INVALID_PROGRAM, -44)                           \
  X(CL_INVALID_PROGRAM_EXECUTABLE, -45)                \
  X(CL_INVALID_KERNEL_NAME, -46)                       \
  X(CL_INVALID_KERNEL_DEFINITION, -47)                 \
  X(CL_INVALID_KERNEL, -48)                            \
  X(CL_INVALID_ARG_INDEX, -49)                         \
  X(CL_INVALID_ARG_VALUE, -50)                         \
  X(CL_INVALID_ARG_SIZE, -51)                          \
  X(CL_INVALID_KERNEL_ARGS, -52)                       \
  X(CL_INVALID_WORK_DIMENSION, -53)                    \
  X(CL_INVALID_WORK_GROUP_SIZE, -54)                   \
  X(CL_INVALID_WORK_ITEM_SIZE, -55)                    \
  X(CL_INVALID_GLOBAL_OFFSET, -56)                     \
  X(CL_INVALID_EVENT_WAIT_LIST, -57)                   \
  X(CL_INVALID_EVENT, -58)                             \
  X(CL_INVALID_OPERATION, -59)                         \
  X(CL_INVALID_BUFFER_SIZE, -61)                       \
  X(CL_INVALID_GLOBAL_WORK_SIZE, -63)                  \
  X(CL_INVALID_PROPERTY, -64)                          \
  X(CL_PLATFORM_NOT_FOUND_KHR, -1001)
#define TVM_OPENCL_STATUS_CONSTANT(name, value) constexpr cl_int name = value;
TVM_OPENCL_STATUS_CODES(TVM_OPENCL_STATUS_CONSTANT)
#undef TVM_OPENCL_STATUS_CONSTANT

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
 * \brief Load the ICD loader and resolve every entry point (the library stays loaded).
 * \return "" on success, else why ("libOpenCL.so.1 not found: ...").
 */
std::string Load();

/*! \brief The table after a successful Load (throws RuntimeError before). */
const Api& Get();

/*! \brief "CL_INVALID_VALUE (-30)" for an error code. */
std::string ErrorString(cl_int code);

}  // namespace cl
}  // namespace tvm_backend_opencl

#endif  // TVM_BACKEND_OPENCL_CL_API_H_
