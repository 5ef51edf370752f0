/*!
 * \file program_cache.h
 * \brief On-disk cache of OpenCL program binaries, so that a program built from source once is
 *        loaded as a binary by later processes (where the platform offers binaries).
 *
 * The core's disk cache (tvm/runtime/disk_cache.h: $TVM_CACHE_DIR/opencl by the same rules as
 * every TVM cache, entries with an integrity check); $TVM_OPENCL_CACHE_DIR names another folder
 * and TVM_OPENCL_CACHE=0 turns it off. Entries are keyed by a hash of the source, the build
 * options and the device's identity (platform, name, version, driver version). Every failure
 * (unwritable folder, corrupted or stale entry) falls back to building from source: a corrupted
 * entry never reaches the driver.
 */
#ifndef TVM_BACKEND_OPENCL_PROGRAM_CACHE_H_
#define TVM_BACKEND_OPENCL_PROGRAM_CACHE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "opencl_workspace.h"

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

/*! \brief The cache folder, or "" when the cache is off. */
std::string CacheDir();
/*! \brief The file holding the binary of `source` built with `options` for `dev` ("" when off). */
std::string CachePath(const std::string& source, const std::string& options, const DeviceInfo& dev);
/*! \brief Read a cached binary; false when absent or unreadable. */
bool CacheLoad(const std::string& path, std::string* binary);
/*! \brief Write a binary (atomically, best effort: never throws). */
void CacheStore(const std::string& path, const std::string& binary);
/*! \brief The binary of a built single-device program, or "" when the platform gives none. */
std::string ProgramBinaryOf(cl_program prog);

/*! \brief Counters for tests and diagnostics. */
struct CacheStats {
  std::atomic<int64_t> hits{0};
  std::atomic<int64_t> stores{0};
  std::atomic<int64_t> rejected{
      0};  // entries the device refused (stale or corrupted): rebuilt from source
};
CacheStats& GlobalCacheStats();

}  // namespace tvm_backend_opencl

#endif  // TVM_BACKEND_OPENCL_PROGRAM_CACHE_H_
