/*!
 * \file cuda_driver.cc
 * \brief dlopen("libcuda.so.1"), symbol resolution, error strings and primary-context handling.
 */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <tvm/ffi/error.h>

#include <array>
#include <mutex>

namespace tvm_cuda {

namespace {
DriverAPI g_api{};
bool g_loaded = false;
int g_count = 0;

std::mutex g_ctx_mu;
std::array<CUcontext, kMaxDevices> g_primary{};

template <typename F>
bool Resolve(void* lib, const char* name, F* slot, std::string* missing) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += name;
    return false;
  }
  *slot = reinterpret_cast<F>(sym);
  return true;
}
}  // namespace

std::string LoadDriver() {
  if (g_loaded) return "";
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return std::string("libcuda.so.1 not found: no NVIDIA driver on this machine (") +
           (why ? why : "dlopen failed") + ")";
  }
  std::string missing;
  DriverAPI api{};
  // Versioned names (_v2) are the ABI the driver has exported since CUDA 4/11; the unversioned
  // ones are kept only for source compatibility.
  Resolve(lib, "cuInit", &api.cuInit, &missing);
  Resolve(lib, "cuDriverGetVersion", &api.cuDriverGetVersion, &missing);
  Resolve(lib, "cuGetErrorName", &api.cuGetErrorName, &missing);
  Resolve(lib, "cuGetErrorString", &api.cuGetErrorString, &missing);
  Resolve(lib, "cuDeviceGetCount", &api.cuDeviceGetCount, &missing);
  Resolve(lib, "cuDeviceGet", &api.cuDeviceGet, &missing);
  Resolve(lib, "cuDeviceGetName", &api.cuDeviceGetName, &missing);
  Resolve(lib, "cuDeviceGetAttribute", &api.cuDeviceGetAttribute, &missing);
  Resolve(lib, "cuDeviceTotalMem_v2", &api.cuDeviceTotalMem, &missing);
  Resolve(lib, "cuDevicePrimaryCtxRetain", &api.cuDevicePrimaryCtxRetain, &missing);
  Resolve(lib, "cuCtxGetCurrent", &api.cuCtxGetCurrent, &missing);
  Resolve(lib, "cuCtxSetCurrent", &api.cuCtxSetCurrent, &missing);
  Resolve(lib, "cuMemAlloc_v2", &api.cuMemAlloc, &missing);
  Resolve(lib, "cuMemFree_v2", &api.cuMemFree, &missing);
  Resolve(lib, "cuMemcpyHtoDAsync_v2", &api.cuMemcpyHtoDAsync, &missing);
  Resolve(lib, "cuMemcpyDtoHAsync_v2", &api.cuMemcpyDtoHAsync, &missing);
  Resolve(lib, "cuMemcpyDtoDAsync_v2", &api.cuMemcpyDtoDAsync, &missing);
  Resolve(lib, "cuMemcpyPeerAsync", &api.cuMemcpyPeerAsync, &missing);
  Resolve(lib, "cuPointerGetAttribute", &api.cuPointerGetAttribute, &missing);
  Resolve(lib, "cuStreamCreate", &api.cuStreamCreate, &missing);
  Resolve(lib, "cuStreamDestroy_v2", &api.cuStreamDestroy, &missing);
  Resolve(lib, "cuStreamSynchronize", &api.cuStreamSynchronize, &missing);
  Resolve(lib, "cuModuleLoadDataEx", &api.cuModuleLoadDataEx, &missing);
  Resolve(lib, "cuModuleUnload", &api.cuModuleUnload, &missing);
  Resolve(lib, "cuModuleGetFunction", &api.cuModuleGetFunction, &missing);
  Resolve(lib, "cuFuncSetAttribute", &api.cuFuncSetAttribute, &missing);
  Resolve(lib, "cuLaunchKernel", &api.cuLaunchKernel, &missing);
  if (!missing.empty()) {
    return "libcuda.so.1 is too old or not NVIDIA's driver: missing " + missing;
  }
  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    g_api = api;  // error strings work even when cuInit fails
    return "cuInit failed: " + ErrorString(r) +
           " (the NVIDIA driver is installed but no usable GPU)";
  }
  int count = 0;
  r = api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    return "the NVIDIA driver reports no CUDA device";
  }
  g_api = api;
  g_count = count;
  g_loaded = true;
  return "";
}

const DriverAPI& Driver() { return g_api; }

std::string ErrorString(CUresult r) {
  const char* name = nullptr;
  const char* desc = nullptr;
  if (g_api.cuGetErrorName) g_api.cuGetErrorName(r, &name);
  if (g_api.cuGetErrorString) g_api.cuGetErrorString(r, &desc);
  std::string out = name ? name : "CUresult " + std::to_string(r);
  if (desc) out += std::string(" (") + desc + ")";
  return out;
}

void Check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    TVM_FFI_THROW(RuntimeError) << "CUDA: " << what << " failed: " << ErrorString(r);
  }
}

int DeviceCount() { return g_loaded ? g_count : 0; }

int DeviceAttribute(CUdevice dev, int attr) {
  int v = 0;
  TVM_CUDA_CALL(Driver().cuDeviceGetAttribute(&v, attr, dev));
  return v;
}

CUcontext SetDevice(int dev_id) {
  if (!g_loaded) TVM_FFI_THROW(RuntimeError) << "the CUDA driver is not loaded";
  if (dev_id < 0 || dev_id >= kMaxDevices || dev_id >= DeviceCount()) {
    TVM_FFI_THROW(ValueError) << "cuda(" << dev_id << ") does not exist: this machine has "
                              << DeviceCount() << " CUDA device(s)";
  }
  CUcontext ctx;
  {
    std::lock_guard<std::mutex> lock(g_ctx_mu);
    ctx = g_primary[dev_id];
    if (ctx == nullptr) {
      CUdevice dev;
      Check(g_api.cuDeviceGet(&dev, dev_id), "cuDeviceGet");
      // The primary context is the one the CUDA runtime (and so PyTorch, CuPy) uses: pointers
      // and streams are shared with them.
      Check(g_api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
      g_primary[dev_id] = ctx;
    }
  }
  CUcontext cur = nullptr;
  Check(g_api.cuCtxGetCurrent(&cur), "cuCtxGetCurrent");
  if (cur != ctx) Check(g_api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return ctx;
}

}  // namespace tvm_cuda
