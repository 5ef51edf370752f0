/*!
 * \file vulkan_driver.cc
 * \brief Resolves the Vulkan entry points from the loader at run time; VkResult names.
 */
#include "vulkan_driver.h"

#include <tvm/ffi/error.h>

#include <utility>

namespace tvm_backend_vulkan {

namespace {

/*! \brief Names of the VkResult codes a compute runtime can meet. */
constexpr std::pair<VkResult, const char*> kResultNames[] = {
    {VK_SUCCESS, "VK_SUCCESS"},
    {VK_NOT_READY, "VK_NOT_READY"},
    {VK_TIMEOUT, "VK_TIMEOUT"},
    {VK_EVENT_SET, "VK_EVENT_SET"},
    {VK_EVENT_RESET, "VK_EVENT_RESET"},
    {VK_INCOMPLETE, "VK_INCOMPLETE"},
    {VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY"},
    {VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY"},
    {VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED"},
    {VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST"},
    {VK_ERROR_MEMORY_MAP_FAILED, "VK_ERROR_MEMORY_MAP_FAILED"},
    {VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT"},
    {VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT"},
    {VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT"},
    {VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER"},
    {VK_ERROR_TOO_MANY_OBJECTS, "VK_ERROR_TOO_MANY_OBJECTS"},
    {VK_ERROR_FORMAT_NOT_SUPPORTED, "VK_ERROR_FORMAT_NOT_SUPPORTED"},
    {VK_ERROR_FRAGMENTED_POOL, "VK_ERROR_FRAGMENTED_POOL"},
    {VK_ERROR_UNKNOWN, "VK_ERROR_UNKNOWN"},
    {VK_ERROR_OUT_OF_POOL_MEMORY, "VK_ERROR_OUT_OF_POOL_MEMORY"},
    {VK_ERROR_INVALID_EXTERNAL_HANDLE, "VK_ERROR_INVALID_EXTERNAL_HANDLE"},
    {VK_ERROR_FRAGMENTATION, "VK_ERROR_FRAGMENTATION"},
    {VK_ERROR_INVALID_SHADER_NV, "VK_ERROR_INVALID_SHADER_NV"},
    {VK_PIPELINE_COMPILE_REQUIRED, "VK_PIPELINE_COMPILE_REQUIRED"},
};

// TVM_VULKAN_LIBRARY names one library (a loader outside the search path); when set it is the
// only one tried, so a wrong path is reported, not silently replaced.
tvm::runtime::LoadedDriver<DriverTable>& Loader() {
  static auto* driver =
      new tvm::runtime::LoadedDriver<DriverTable>({{"libvulkan.so.1", "libvulkan.so"},
                                                   "TVM_VULKAN_LIBRARY",
                                                   "no Vulkan loader on this machine",
                                                   "a Vulkan 1.1 (or newer) loader is required"});
  return *driver;
}
}  // namespace

std::string LoadDriver() { return Loader().Load(); }

const DriverTable& Vk() { return Loader().Get(); }

std::string ResultString(VkResult result) {
  const char* name = "unknown VkResult";
  for (const auto& entry : kResultNames) {
    if (entry.first == result) name = entry.second;
  }
  return std::string(name) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

void CheckResult(VkResult result, const char* call) {
  if (result == VK_SUCCESS) return;
  TVM_FFI_THROW(RuntimeError) << "Vulkan error: " << call << " failed with "
                              << ResultString(result);
}

}  // namespace tvm_backend_vulkan
