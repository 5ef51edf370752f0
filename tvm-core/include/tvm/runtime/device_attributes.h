/*!
 * \file tvm/runtime/device_attributes.h
 * \brief DeviceAPI::GetAttr for drivers that answer integer attribute queries (CUDA's
 *        cuDeviceGetAttribute, HIP's hipDeviceGetAttribute): one table per backend of the
 *        driver's attribute codes instead of a chain of ifs.
 */
#ifndef TVM_RUNTIME_DEVICE_ATTRIBUTES_H_
#define TVM_RUNTIME_DEVICE_ATTRIBUTES_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/string.h>

#include <optional>
#include <string>
#include <utility>

namespace tvm {
namespace runtime {

/*! \brief The driver's codes for the attributes GetAttr answers (-1: the driver has none). */
struct IntegerAttributeCodes {
  int max_threads_per_block = -1;
  int warp_size = -1;
  int max_shared_memory_per_block = -1;
  int max_shared_memory_per_block_optin = -1;
  int multi_processor_count = -1;
  int max_clock_rate = -1;
  int compute_capability_major = -1;
  int compute_capability_minor = -1;
  int max_block_dim[3] = {-1, -1, -1};
  int max_grid_dim[3] = {-1, -1, -1};  // launch limits only (no GetAttr key)

  /*! \brief Block and grid dimension codes numbered x, y, z from `block_x` and `grid_x`, as
   *  CUDA's and HIP's attribute enums number them. */
  void SetDimensions(int block_x, int grid_x) {
    for (int a = 0; a < 3; ++a) {
      max_block_dim[a] = block_x + a;
      max_grid_dim[a] = grid_x + a;
    }
  }
};

/*!
 * \brief The value of `key` from the integer attributes `query(code)` reads for one device:
 *  the scalar keys above, "compute_version" ("major.minor") and "max_thread_dimensions" (an
 *  array of three). nullopt when `key` is none of them (or the driver has no code for it), so the
 *  caller answers the keys that need other driver calls (name, memory, versions).
 */
template <typename Query>
std::optional<ffi::Any> IntegerDeviceAttribute(const std::string& key,
                                               const IntegerAttributeCodes& codes, Query query) {
  const std::pair<const char*, int> scalars[] = {
      {"max_threads_per_block", codes.max_threads_per_block},
      {"warp_size", codes.warp_size},
      {"max_shared_memory_per_block", codes.max_shared_memory_per_block},
      {"max_shared_memory_per_block_optin", codes.max_shared_memory_per_block_optin},
      {"multi_processor_count", codes.multi_processor_count},
      {"max_clock_rate", codes.max_clock_rate}};
  for (const auto& [name, code] : scalars) {
    if (key == name) return code < 0 ? std::nullopt : std::optional<ffi::Any>(query(code));
  }
  if (key == "compute_version" && codes.compute_capability_major >= 0) {
    return ffi::Any(ffi::String(std::to_string(query(codes.compute_capability_major)) + "." +
                                std::to_string(query(codes.compute_capability_minor))));
  }
  if (key == "max_thread_dimensions" && codes.max_block_dim[0] >= 0) {
    return ffi::Any(ffi::Array<int64_t>{query(codes.max_block_dim[0]),
                                        query(codes.max_block_dim[1]),
                                        query(codes.max_block_dim[2])});
  }
  return std::nullopt;
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_DEVICE_ATTRIBUTES_H_
