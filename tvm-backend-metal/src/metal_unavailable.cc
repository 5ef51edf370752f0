/*!
 * \file metal_unavailable.cc
 * \brief libtvm_runtime_metal where Metal does not exist (every platform but macOS): its init
 *        says so and registers nothing, so the core's fallback module stands for "metal" modules
 *        (same bytes: exported libraries carry the MSL to a Mac).
 */
#include <tvm/runtime/base.h>

namespace tvm_backend_metal {
namespace {
int MetalBackendInit(char* err, int err_len) {
  return tvm::runtime::BackendInitFailed(
      err, err_len,
      "Metal exists only on macOS: this build generates MSL and exports it, and the exported "
      "library runs on a Mac with tvm-backend-metal installed");
}
}  // namespace
}  // namespace tvm_backend_metal

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_metal::MetalBackendInit)
