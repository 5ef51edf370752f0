/*!
 * \file cuda_driver.h
 * \brief The slice of the CUDA driver API this backend uses, declared here (not taken from the
 *        toolkit's cuda.h) so the DSO builds on machines without the CUDA toolkit.
 *
 * libcuda.so.1 (or the library named by TVM_CUDA_DRIVER) is opened with the core's driver loader
 * in TVMBackendInit. The numeric values below are part of the driver's stable ABI.
 */
#ifndef TVM_BACKEND_CUDA_CUDA_DRIVER_H_
#define TVM_BACKEND_CUDA_CUDA_DRIVER_H_

#include <tvm/runtime/driver_loader.h>
#include <tvm/runtime/gpu_driver.h>

#include <cstddef>
#include <string>

namespace tvm_backend_cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): driver ABI type
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;

// CUdevice_attribute values.
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;  // Y = 3, Z = 4
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;   // Y = 6, Z = 7
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute.
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
// CUpointer_attribute.
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
// CUstream_flags.
constexpr unsigned CU_STREAM_DEFAULT = 0;
// CUjit_option.
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// Driver entry points, resolved from libcuda.so.1: table field, exported symbol, signature.
// Versioned names (_v2) are the ABI the driver has exported since CUDA 4/11.
#define TVM_CUDA_DRIVER_SYMBOLS(X)                                                             \
  X(cuInit, "cuInit", CUresult(unsigned))                                                      \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult(int*))                                  \
  X(cuGetErrorName, "cuGetErrorName", CUresult(CUresult, const char**))                        \
  X(cuGetErrorString, "cuGetErrorString", CUresult(CUresult, const char**))                    \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult(int*))                                      \
  X(cuDeviceGet, "cuDeviceGet", CUresult(CUdevice*, int))                                      \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult(char*, int, CUdevice))                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult(int*, int, CUdevice))               \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult(size_t*, CUdevice))                      \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult(CUcontext*, CUdevice))      \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", CUresult(CUcontext*))                                  \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult(CUcontext))                                   \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult(CUdeviceptr*, size_t))                               \
  X(cuMemFree, "cuMemFree_v2", CUresult(CUdeviceptr))                                          \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                                 \
    CUresult(CUdeviceptr, const void*, size_t, CUstream))                                      \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult(void*, CUdeviceptr, size_t, CUstream)) \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                                 \
    CUresult(CUdeviceptr, CUdeviceptr, size_t, CUstream))                                      \
  X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync",                                                    \
    CUresult(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))                \
  X(cuPointerGetAttribute, "cuPointerGetAttribute", CUresult(void*, int, CUdeviceptr))         \
  X(cuStreamCreate, "cuStreamCreate", CUresult(CUstream*, unsigned))                           \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult(CUstream))                                 \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult(CUstream))                            \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                                  \
    CUresult(CUmodule*, const void*, unsigned, int*, void**))                                  \
  X(cuModuleUnload, "cuModuleUnload", CUresult(CUmodule))                                      \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult(CUfunction*, CUmodule, const char*))  \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult(CUfunction, int, int))                  \
  X(cuLaunchKernel, "cuLaunchKernel",                                                          \
    CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
             CUstream, void**, void**))

/*! \brief Driver entry points, resolved by name from libcuda.so.1. */
TVM_DRIVER_TABLE(DriverAPI, TVM_CUDA_DRIVER_SYMBOLS);

/*!
 * \brief Open libcuda.so.1 (or $TVM_CUDA_DRIVER), resolve the table and call cuInit(0).
 * \return "" on success, else why the driver cannot be used (shown to users).
 */
std::string LoadDriver();

/*! \brief The resolved table; only valid after LoadDriver() returned "". */
const DriverAPI& Driver();

/*! \brief The driver's verbs for the kit (GPUDeviceAPI, GPUKernelModule); after LoadDriver(). */
tvm::runtime::GPUDriver& CUDA();

}  // namespace tvm_backend_cuda

#endif  // TVM_BACKEND_CUDA_CUDA_DRIVER_H_
