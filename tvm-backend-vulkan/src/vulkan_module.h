/*!
 * \file vulkan_module.h
 * \brief Device modules of kind "vulkan": one SPIR-V binary (format "spirv") holding every kernel
 *        as an OpEntryPoint GLCompute named after it; a VkShaderModule per device on first
 *        launch, a VkPipeline per (kernel, workgroup size).
 *
 * Calling convention of a kernel function (what the Python emitter produces):
 *  - buffer argument k (counting buffer arguments only, in parameter order) is descriptor set 0,
 *    binding k, a storage buffer: a Vulkan tensor (its byte_offset becomes the descriptor offset)
 *    or a raw VulkanBuffer handle;
 *  - scalar arguments (int32, uint32, float32, int64, uint64, float64) form one block in
 *    parameter order, each at the previous end rounded up to its own size: the push constants, or
 *    when the block takes more than 128 bytes a uniform buffer at descriptor set 0, binding
 *    (number of buffer arguments), filled from a per-submission arena (MakeLayout decides);
 *  - then the launch arguments LaunchConfig::Decode reads: blockIdx extents are the
 *    vkCmdDispatch group counts, threadIdx extents the workgroup size, given to the pipeline as
 *    the uint32 specialization constants SpecId 0, 1, 2 (x, y, z); "dyn_shmem" (bytes of a
 *    kernel's launch-sized shared array) is SpecId 3, rounded up (SharedArrayBucket) so that
 *    launches of many sizes share a few pipelines; 32 for kernels without such an array.
 */
#ifndef TVM_BACKEND_VULKAN_VULKAN_MODULE_H_
#define TVM_BACKEND_VULKAN_VULKAN_MODULE_H_

#include <tvm/ffi/extra/module.h>
#include <tvm/runtime/device_module.h>

#include <string>

namespace tvm_backend_vulkan {

/*! \brief Register ffi.Module.create.vulkan, ffi.Module.load_from_bytes.vulkan and the
 *  "vulkan.*" global functions. */
void RegisterModuleFunctions();

}  // namespace tvm_backend_vulkan

#endif  // TVM_BACKEND_VULKAN_VULKAN_MODULE_H_
