/*!
 * \file cuda_driver.h
 * \brief The slice of the CUDA driver API this backend uses, declared here (not taken from the
 *        toolkit's cuda.h) so the DSO builds on machines without the CUDA toolkit.
 *
 * libcuda.so.1 is opened with dlopen() in TVMBackendInit; every entry point is resolved into a
 * function table. The numeric values below are part of the driver's stable ABI.
 */
#ifndef TVM_BACKEND_CUDA_CUDA_DRIVER_H_
#define TVM_BACKEND_CUDA_CUDA_DRIVER_H_

#include <cstddef>
#include <string>

namespace tvm_cuda {

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
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
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
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
// CUjit_option.
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

/*! \brief Driver entry points, resolved by name from libcuda.so.1. */
struct DriverAPI {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
};

/*!
 * \brief Open libcuda.so.1, resolve the table and call cuInit(0).
 * \return "" on success, else why the driver cannot be used (shown to users).
 */
std::string LoadDriver();

/*! \brief The resolved table; only valid after LoadDriver() returned "". */
const DriverAPI& Driver();

/*! \brief "CUDA_ERROR_X (description)" for a CUresult. */
std::string ErrorString(CUresult r);

/*! \brief Throws RuntimeError "<what> failed: CUDA_ERROR_X (...)" when r != CUDA_SUCCESS. */
void Check(CUresult r, const char* what);

/*! \brief The primary context of device `dev_id`, retained once and made current on this thread. */
CUcontext SetDevice(int dev_id);

/*! \brief Number of CUDA devices. */
int DeviceCount();

/*! \brief Most devices this backend addresses (per-device tables are this long; SetDevice checks).
 */
constexpr int kMaxDevices = 64;

/*! \brief Driver attribute `attr` (CU_DEVICE_ATTRIBUTE_*) of `dev`; throws naming the call on
 * failure. */
int DeviceAttribute(CUdevice dev, int attr);

}  // namespace tvm_cuda

#define TVM_CUDA_CALL(expr) ::tvm_cuda::Check((expr), #expr)

#endif  // TVM_BACKEND_CUDA_CUDA_DRIVER_H_
