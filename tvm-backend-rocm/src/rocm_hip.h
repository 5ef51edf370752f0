/*!
 * \file rocm_hip.h
 * \brief The slice of the HIP runtime API this backend uses, declared here (not taken from
 *        ROCm's headers) so the DSO builds without ROCm; libamdhip64 is opened at backend init.
 *
 * The numeric values are HIP's stable ABI (hipDeviceAttribute_t as numbered since ROCm 5.0).
 * No struct of HIP's is used: hipDeviceProp_t changed its layout between releases.
 */
#ifndef TVM_BACKEND_ROCM_HIP_H_
#define TVM_BACKEND_ROCM_HIP_H_

#include <tvm/runtime/driver_loader.h>
#include <tvm/runtime/gpu_driver.h>

#include <cstddef>
#include <string>

namespace tvm_backend_rocm {

using hipError_t = int;
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipStream_t;
using hipModule_t = ihipModule_t*;
using hipFunction_t = ihipModuleSymbol_t*;
using hipStream_t = ihipStream_t*;

constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorDeinitialized = 4;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;

constexpr int hipDeviceAttributeClockRate = 5;
constexpr int hipDeviceAttributeComputeCapabilityMajor = 23;
constexpr int hipDeviceAttributeMaxBlockDimX = 26;  // Y = 27, Z = 28
constexpr int hipDeviceAttributeMaxGridDimX = 29;   // Y = 30, Z = 31
constexpr int hipDeviceAttributeMaxThreadsPerBlock = 56;
constexpr int hipDeviceAttributeComputeCapabilityMinor = 61;
constexpr int hipDeviceAttributeMultiprocessorCount = 63;
constexpr int hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
constexpr int hipDeviceAttributeWarpSize = 87;

constexpr int hipMemcpyDefault = 4;  // the runtime tells host from device memory itself
constexpr unsigned hipStreamDefault = 0;
// hipModuleLaunchKernel's `extra`: a packed argument buffer.
inline void* const kLaunchParamBufferPointer = reinterpret_cast<void*>(0x01);
inline void* const kLaunchParamBufferSize = reinterpret_cast<void*>(0x02);
inline void* const kLaunchParamEnd = reinterpret_cast<void*>(0x03);

#define TVM_HIP_SYMBOLS(X)                                                                      \
  X(hipInit, "hipInit", hipError_t(unsigned))                                                   \
  X(hipDriverGetVersion, "hipDriverGetVersion", hipError_t(int*))                               \
  X(hipGetErrorName, "hipGetErrorName", const char*(hipError_t))                                \
  X(hipGetErrorString, "hipGetErrorString", const char*(hipError_t))                            \
  X(hipGetDeviceCount, "hipGetDeviceCount", hipError_t(int*))                                   \
  X(hipSetDevice, "hipSetDevice", hipError_t(int))                                              \
  X(hipDeviceGetName, "hipDeviceGetName", hipError_t(char*, int, int))                          \
  X(hipDeviceGetAttribute, "hipDeviceGetAttribute", hipError_t(int*, int, int))                 \
  X(hipDeviceTotalMem, "hipDeviceTotalMem", hipError_t(size_t*, int))                           \
  X(hipMalloc, "hipMalloc", hipError_t(void**, size_t))                                         \
  X(hipFree, "hipFree", hipError_t(void*))                                                      \
  X(hipMemcpyAsync, "hipMemcpyAsync", hipError_t(void*, const void*, size_t, int, hipStream_t)) \
  X(hipStreamCreateWithFlags, "hipStreamCreateWithFlags", hipError_t(hipStream_t*, unsigned))   \
  X(hipStreamDestroy, "hipStreamDestroy", hipError_t(hipStream_t))                              \
  X(hipStreamSynchronize, "hipStreamSynchronize", hipError_t(hipStream_t))                      \
  X(hipModuleLoadData, "hipModuleLoadData", hipError_t(hipModule_t*, const void*))              \
  X(hipModuleUnload, "hipModuleUnload", hipError_t(hipModule_t))                                \
  X(hipModuleGetFunction, "hipModuleGetFunction",                                               \
    hipError_t(hipFunction_t*, hipModule_t, const char*))                                       \
  X(hipModuleLaunchKernel, "hipModuleLaunchKernel",                                             \
    hipError_t(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,       \
               unsigned, hipStream_t, void**, void**))

/*! \brief HIP entry points, resolved by name from libamdhip64. */
TVM_DRIVER_TABLE(HIPAPI, TVM_HIP_SYMBOLS);

/*! \brief Opens libamdhip64 (or $TVM_ROCM_LIBRARY) and calls hipInit; "" or why not. */
std::string LoadHIP();
/*! \brief The resolved table (valid after LoadHIP returned ""). */
const HIPAPI& HIP();
/*! \brief The runtime's verbs for the kit (GPUDeviceAPI, GPUKernelModule). */
tvm::runtime::GPUDriver& ROCm();

}  // namespace tvm_backend_rocm

#endif  // TVM_BACKEND_ROCM_HIP_H_
