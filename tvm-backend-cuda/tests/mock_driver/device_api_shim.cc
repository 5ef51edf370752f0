// Test-only shim: calls the registered CUDA DeviceAPI's StreamSync with an arbitrary handle, which
// no Python entry point can do (runtime.DeviceSync always passes the current stream). Loaded with
// ctypes after `import tvm`, so libtvm_runtime and libtvm_ffi symbols resolve at load time.
#include <tvm/ffi/error.h>
#include <tvm/runtime/device_api.h>

#include <cstdio>

extern "C" int shim_stream_sync(int dev_id, void* stream, char* err, int len) {
  try {
    tvm::runtime::DeviceAPI::Get(kDLCUDA)->StreamSync(DLDevice{kDLCUDA, dev_id}, stream);
    return 0;
  } catch (const tvm::ffi::Error& e) {
    std::snprintf(err, len, "%s: %s", e.kind().c_str(), e.message().c_str());
    return 1;
  }
}
