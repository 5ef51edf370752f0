/*!
 * \file tvm/runtime/launch_limits.h
 * \brief A device's launch limits (grid and block extents, threads and dynamic shared memory per
 *        block), read once per device, and the check of a launch against them: past them a driver
 *        truncates an extent or fails with an opaque error. Both runtime kits use it.
 */
#ifndef TVM_RUNTIME_LAUNCH_LIMITS_H_
#define TVM_RUNTIME_LAUNCH_LIMITS_H_

#include <tvm/ffi/error.h>
#include <tvm/runtime/device_module.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace tvm {
namespace runtime {

/*! \brief Launch limits of one device (kMaxLaunchValue where the driver sets none). */
struct LaunchLimits {
  std::array<int64_t, 3> grid{kMaxLaunchValue, kMaxLaunchValue, kMaxLaunchValue};
  std::array<int64_t, 3> block{kMaxLaunchValue, kMaxLaunchValue, kMaxLaunchValue};
  int64_t threads_per_block = kMaxLaunchValue;
  int64_t shared_bytes = kMaxLaunchValue;
  bool shared_opt_in = false;  // shared_bytes is an opt-in limit above the default one
};

/*! \brief The limits of up to `kDevices` devices, each read once (driver queries are not free). */
template <int kDevices>
class LaunchLimitsCache {
 public:
  /*! \brief Device `dev_id`'s limits, calling `read` on its first use. */
  const LaunchLimits& Get(int dev_id, const std::function<LaunchLimits()>& read) {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<LaunchLimits>& slot = limits_.at(dev_id);
    if (slot == nullptr) slot = std::make_unique<LaunchLimits>(read());
    return *slot;
  }

 private:
  std::mutex mu_;
  std::array<std::unique_ptr<LaunchLimits>, kDevices> limits_;
};

/*! \brief ValueError naming kernel `info`, the extent and the limit when `cfg` exceeds `lim` on
 *  the device `where` ("cuda(0)"). */
inline void CheckLaunchLimits(const std::string& kind, const FunctionInfo& info,
                              const LaunchConfig& cfg, const LaunchLimits& lim,
                              const std::string& where) {
  static const char* kAxis[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    if (cfg.grid[a] > lim.grid[a]) {
      TVM_FFI_THROW(ValueError) << kind << " kernel " << info.name << ": grid extent blockIdx."
                                << kAxis[a] << " = " << cfg.grid[a] << " exceeds the limit "
                                << lim.grid[a] << " of " << where;
    }
    if (cfg.block[a] > lim.block[a]) {
      TVM_FFI_THROW(ValueError) << kind << " kernel " << info.name << ": block extent threadIdx."
                                << kAxis[a] << " = " << cfg.block[a] << " exceeds the limit "
                                << lim.block[a] << " of " << where;
    }
  }
  int64_t threads = cfg.ThreadsPerBlock();
  if (threads > lim.threads_per_block) {
    TVM_FFI_THROW(ValueError) << kind << " kernel " << info.name << ": block (" << cfg.block[0]
                              << ", " << cfg.block[1] << ", " << cfg.block[2] << ") has " << threads
                              << " threads, more than the limit " << lim.threads_per_block
                              << " threads per block of " << where;
  }
  if (cfg.dyn_shmem_bytes > lim.shared_bytes) {
    TVM_FFI_THROW(ValueError) << kind << " kernel " << info.name << ": " << cfg.dyn_shmem_bytes
                              << " bytes of dynamic shared memory exceed the limit "
                              << lim.shared_bytes << " bytes per block"
                              << (lim.shared_opt_in ? " (opt-in)" : "") << " of " << where;
  }
}

/*!
 * \brief The size a pipeline specialized for a launch-sized shared array (a SPIR-V specialization
 *  or WGSL override constant) is built for: `bytes` rounded up to a power of two (at least 32, so
 *  the array holds an element), or `bytes` itself where that would pass `room` (the device's
 *  limit less the declared shared memory): launches of many sizes share a few pipelines.
 */
inline int64_t SharedArrayBucket(int64_t bytes, int64_t room) {
  int64_t bucket = 32;
  while (bucket < bytes) bucket <<= 1;
  return bucket <= room ? bucket : std::max<int64_t>(bytes, 32);
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_LAUNCH_LIMITS_H_
