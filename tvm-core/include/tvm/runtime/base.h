/*!
 * \file tvm/runtime/base.h
 * \brief ABI version and export macro shared by libtvm_runtime and every backend DSO.
 *
 * A backend DSO exports `TVMBackendABIVersion()`; the Python loader compares it with
 * `TVMRuntimeABIVersion()` before it calls the backend's `TVMBackendInit()`, so a backend
 * built against another core ABI is refused before any of its code runs.
 */
#ifndef TVM_RUNTIME_BASE_H_
#define TVM_RUNTIME_BASE_H_

#include <tvm/ffi/c_api.h>

/*! \brief Bump whenever DeviceAPI, the device-module helpers or their layouts change. */
#define TVM_RUNTIME_ABI_VERSION 5

#define TVM_RUNTIME_DLL __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif
/*! \brief The ABI version of the loaded libtvm_runtime. */
TVM_RUNTIME_DLL int TVMRuntimeABIVersion();
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
#include <cstdio>
#include <exception>
#include <string>

namespace tvm {
namespace runtime {
/*!
 * \brief What a backend's init returns when its device runtime is unavailable: writes `why`
 *        (e.g. "libcuda.so.1 not found") into the caller's buffer and returns 1.
 */
inline int BackendInitFailed(char* err, int err_len, const std::string& why) {
  if (err != nullptr && err_len > 0)
    std::snprintf(err, static_cast<size_t>(err_len), "%s", why.c_str());
  return 1;
}
}  // namespace runtime
}  // namespace tvm

/*!
 * \brief Declares the two entry points of a backend DSO.
 *
 * \code
 * TVM_BACKEND_DEFINE_ENTRY(MyInit)   // int MyInit(char* err, int err_len) registers everything
 * \endcode
 * `TVMBackendInit` returns 0 on success; otherwise `MyInit` returns
 * `tvm::runtime::BackendInitFailed(err, err_len, reason)`. A C++ exception escaping `MyInit` is
 * caught here and reported the same way: it never crosses the C ABI.
 */
#define TVM_BACKEND_DEFINE_ENTRY(InitFunc)                                                       \
  extern "C" TVM_RUNTIME_DLL int TVMBackendABIVersion() { return TVM_RUNTIME_ABI_VERSION; }      \
  extern "C" TVM_RUNTIME_DLL int TVMBackendInit(char* err, int err_len) {                        \
    try {                                                                                        \
      return InitFunc(err, err_len);                                                             \
    } catch (const std::exception& e) {                                                          \
      return ::tvm::runtime::BackendInitFailed(err, err_len,                                     \
                                               std::string("backend init raised: ") + e.what()); \
    } catch (...) {                                                                              \
      return ::tvm::runtime::BackendInitFailed(err, err_len,                                     \
                                               "backend init raised an unknown C++ exception");  \
    }                                                                                            \
  }
#endif

#endif  // TVM_RUNTIME_BASE_H_
