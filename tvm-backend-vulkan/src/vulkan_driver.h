/*!
 * \file vulkan_driver.h
 * \brief The Vulkan entry points this backend uses, resolved from libvulkan.so.1 (the Khronos
 *        loader) with dlopen/dlsym at backend init, so the DSO links no Vulkan library and loads
 *        on machines without one (it then reports why).
 *
 * Built with VK_NO_PROTOTYPES: the headers give the types and the PFN_* signatures only. The
 * loader exports every core Vulkan 1.0/1.1 function; extension functions
 * (vkCmdPushDescriptorSetKHR) are resolved per device with vkGetDeviceProcAddr.
 */
#ifndef TVM_BACKEND_VULKAN_VULKAN_DRIVER_H_
#define TVM_BACKEND_VULKAN_VULKAN_DRIVER_H_

#include <tvm/ffi/error.h>
#include <tvm/runtime/driver_loader.h>
#include <vulkan/vulkan.h>

#include <string>
#include <type_traits>

namespace tvm_backend_vulkan {

/*! \brief The function type of Vulkan entry point `name` (its PFN_ type without the pointer). */
#define TVM_VK_SIG(name) std::remove_pointer_t<PFN_##name>
/*! \brief One table entry: the field and the exported symbol share the Vulkan name. */
#define TVM_VK_ENTRY(X, name) X(name, #name, TVM_VK_SIG(name))

// Loader exports used by this backend (Vulkan 1.0 core plus the 1.1 core queries).
#define TVM_VULKAN_SYMBOLS(X)                               \
  TVM_VK_ENTRY(X, vkGetInstanceProcAddr)                    \
  TVM_VK_ENTRY(X, vkEnumerateInstanceVersion)               \
  TVM_VK_ENTRY(X, vkCreateInstance)                         \
  TVM_VK_ENTRY(X, vkEnumeratePhysicalDevices)               \
  TVM_VK_ENTRY(X, vkGetPhysicalDeviceProperties)            \
  TVM_VK_ENTRY(X, vkGetPhysicalDeviceProperties2)           \
  TVM_VK_ENTRY(X, vkGetPhysicalDeviceFeatures2)             \
  TVM_VK_ENTRY(X, vkGetPhysicalDeviceQueueFamilyProperties) \
  TVM_VK_ENTRY(X, vkGetPhysicalDeviceMemoryProperties)      \
  TVM_VK_ENTRY(X, vkEnumerateDeviceExtensionProperties)     \
  TVM_VK_ENTRY(X, vkCreateDevice)                           \
  TVM_VK_ENTRY(X, vkGetDeviceProcAddr)                      \
  TVM_VK_ENTRY(X, vkGetDeviceQueue)                         \
  TVM_VK_ENTRY(X, vkCreateBuffer)                           \
  TVM_VK_ENTRY(X, vkDestroyBuffer)                          \
  TVM_VK_ENTRY(X, vkGetBufferMemoryRequirements)            \
  TVM_VK_ENTRY(X, vkAllocateMemory)                         \
  TVM_VK_ENTRY(X, vkFreeMemory)                             \
  TVM_VK_ENTRY(X, vkBindBufferMemory)                       \
  TVM_VK_ENTRY(X, vkMapMemory)                              \
  TVM_VK_ENTRY(X, vkCreateShaderModule)                     \
  TVM_VK_ENTRY(X, vkDestroyShaderModule)                    \
  TVM_VK_ENTRY(X, vkCreateDescriptorSetLayout)              \
  TVM_VK_ENTRY(X, vkDestroyDescriptorSetLayout)             \
  TVM_VK_ENTRY(X, vkCreatePipelineLayout)                   \
  TVM_VK_ENTRY(X, vkDestroyPipelineLayout)                  \
  TVM_VK_ENTRY(X, vkCreateComputePipelines)                 \
  TVM_VK_ENTRY(X, vkDestroyPipeline)                        \
  TVM_VK_ENTRY(X, vkCreateDescriptorPool)                   \
  TVM_VK_ENTRY(X, vkDestroyDescriptorPool)                  \
  TVM_VK_ENTRY(X, vkResetDescriptorPool)                    \
  TVM_VK_ENTRY(X, vkAllocateDescriptorSets)                 \
  TVM_VK_ENTRY(X, vkUpdateDescriptorSets)                   \
  TVM_VK_ENTRY(X, vkCreateCommandPool)                      \
  TVM_VK_ENTRY(X, vkDestroyCommandPool)                     \
  TVM_VK_ENTRY(X, vkAllocateCommandBuffers)                 \
  TVM_VK_ENTRY(X, vkBeginCommandBuffer)                     \
  TVM_VK_ENTRY(X, vkEndCommandBuffer)                       \
  TVM_VK_ENTRY(X, vkCmdBindPipeline)                        \
  TVM_VK_ENTRY(X, vkCmdBindDescriptorSets)                  \
  TVM_VK_ENTRY(X, vkCmdPushConstants)                       \
  TVM_VK_ENTRY(X, vkCmdDispatch)                            \
  TVM_VK_ENTRY(X, vkCmdPipelineBarrier)                     \
  TVM_VK_ENTRY(X, vkQueueSubmit)                            \
  TVM_VK_ENTRY(X, vkCreateFence)                            \
  TVM_VK_ENTRY(X, vkDestroyFence)                           \
  TVM_VK_ENTRY(X, vkGetFenceStatus)                         \
  TVM_VK_ENTRY(X, vkWaitForFences)                          \
  TVM_VK_ENTRY(X, vkResetFences)

/*! \brief Function pointers resolved from the loader; all non-null after a successful Load. */
TVM_DRIVER_TABLE(DriverTable, TVM_VULKAN_SYMBOLS);

/*!
 * \brief dlopen the Vulkan loader (or the library named by TVM_VULKAN_LIBRARY) and resolve every
 *        entry point; creates no instance.
 * \return "" on success, else why Vulkan cannot be used at all (shown to users).
 */
std::string LoadDriver();

/*! \brief The table after a successful LoadDriver (throws RuntimeError before). */
const DriverTable& Vk();

/*! \brief "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)" for a VkResult. */
std::string ResultString(VkResult result);

/*! \brief Throws RuntimeError "Vulkan error: <call> failed with <result>" unless `result` is
 *         VK_SUCCESS. */
void CheckResult(VkResult result, const char* call);

}  // namespace tvm_backend_vulkan

/*! \brief Call a Vulkan function returning VkResult; a failure raises RuntimeError naming it. */
#define TVM_VULKAN_CALL(func, ...) \
  ::tvm_backend_vulkan::CheckResult(::tvm_backend_vulkan::Vk().func(__VA_ARGS__), #func)

#endif  // TVM_BACKEND_VULKAN_VULKAN_DRIVER_H_
