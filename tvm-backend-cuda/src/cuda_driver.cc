/*!
 * \file cuda_driver.cc
 * \brief Loading the driver, error strings and primary-context handling.
 */
#include "cuda_driver.h"

#include <tvm/ffi/error.h>

#include <array>
#include <mutex>

namespace tvm_backend_cuda {

namespace {
DriverAPI g_api{};
bool g_loaded = false;
int g_count = 0;

std::mutex g_ctx_mu;
std::array<CUcontext, kMaxDevices> g_primary{};

}  // namespace

std::string LoadDriver() {
  if (g_loaded) return "";
  DriverAPI api{};
  std::string why = tvm::runtime::LoadDriver(&api, {{"libcuda.so.1"},
                                                    "TVM_CUDA_DRIVER",
                                                    "no NVIDIA driver on this machine",
                                                    "it is too old or not NVIDIA's driver"});
  if (!why.empty()) return why;
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

}  // namespace tvm_backend_cuda
