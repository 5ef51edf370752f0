/*!
 * \file vulkan_init.cc
 * \brief TVMBackendInit of the Vulkan backend: load libvulkan and register; no instance.
 */
#include <tvm/runtime/base.h>
#include <tvm/runtime/device_api.h>

#include <string>

#include "vulkan_device.h"
#include "vulkan_module.h"

namespace tvm_backend_vulkan {
namespace {

/*!
 * \brief Runs at every `import tvm`, so it stays cheap: it only dlopens the Vulkan loader and
 *        resolves the entry points, then registers the DeviceAPI and the module factory/loader.
 *        Without libvulkan it reports the reason and registers nothing, so the core's fallback
 *        module takes over. The instance and devices are created on first use
 *        (VulkanRuntime::TryGlobal); when none is usable, devices do not exist and every
 *        operation raises the reason and the fix.
 */
int VulkanBackendInit(char* err, int err_len) {
  std::string why = VulkanRuntime::Load();
  if (!why.empty()) return tvm::runtime::BackendInitFailed(err, err_len, why);
  tvm::runtime::DeviceAPI::Register(kDLVulkan, GlobalDeviceAPI());
  RegisterModuleFunctions();
  return 0;
}

}  // namespace
}  // namespace tvm_backend_vulkan

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_vulkan::VulkanBackendInit)
