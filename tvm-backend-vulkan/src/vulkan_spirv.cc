/*!
 * \file vulkan_spirv.cc
 * \brief SPIR-V structure checks and the optional SPIRV-Tools validation.
 */
#include "vulkan_spirv.h"

#include <dlfcn.h>
#include <tvm/ffi/error.h>
#include <tvm/runtime/driver_loader.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace tvm_backend_vulkan {

namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpString = 7;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kOpExtension = 10;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kCapabilitySignedZeroInfNanPreserve = 4466;
constexpr uint32_t kExecutionModeSignedZeroInfNanPreserve = 4461;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kExecutionModelGLCompute = 5;
/*! \brief SPIR-V 1.3: the newest version Vulkan 1.1 accepts. */
constexpr uint32_t kMaxSpirvVersion = 0x00010300;

/*! \brief The literal string operand of instruction `what` starting at words[begin], within
 *  [begin, end). */
std::string LiteralString(const std::vector<uint32_t>& words, size_t begin, size_t end,
                          const char* what) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    for (int b = 0; b < 4; ++b) {
      char c = static_cast<char>((words[i] >> (8 * b)) & 0xff);
      if (c == '\0') return out;
      out.push_back(c);
    }
  }
  TVM_FFI_THROW(ValueError) << "malformed SPIR-V: the string of an " << what
                            << " is not terminated";
}

// ---- the slice of SPIRV-Tools' C API (libspirv.h) used here -----------------------------------
struct SpvPosition {
  size_t line, column, index;
};
struct SpvDiagnostic {
  SpvPosition position;
  char* error;
  bool is_text_source;
};
using SpvContext = struct SpvContextOpaque*;
constexpr int kSpvEnvVulkan11 = 18;  // SPV_ENV_VULKAN_1_1
constexpr int kSpvSuccess = 0;

#define TVM_SPIRV_TOOLS_SYMBOLS(X)                             \
  X(spvContextCreate, "spvContextCreate", SpvContext(int))     \
  X(spvContextDestroy, "spvContextDestroy", void(SpvContext))  \
  X(spvValidateBinary, "spvValidateBinary",                    \
    int(SpvContext, const uint32_t*, size_t, SpvDiagnostic**)) \
  X(spvDiagnosticDestroy, "spvDiagnosticDestroy", void(SpvDiagnostic*))

TVM_DRIVER_TABLE(SpirvTools, TVM_SPIRV_TOOLS_SYMBOLS);

/*! \brief cmeel.prefix/lib/libSPIRV-Tools-shared.so in the ancestors of this DSO's folder. */
std::vector<std::string> CandidatePaths() {
  std::vector<std::string> out;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&CandidatePaths), &info) != 0 && info.dli_fname != nullptr) {
    std::string dir = info.dli_fname;
    for (int up = 0; up < 5; ++up) {
      size_t slash = dir.rfind('/');
      if (slash == std::string::npos) break;
      dir = dir.substr(0, slash);
      out.push_back(dir + "/cmeel.prefix/lib/libSPIRV-Tools-shared.so");
    }
  }
  out.push_back("libSPIRV-Tools-shared.so");
  return out;
}

struct Validator {
  SpirvTools tools{};
  SpvContext context = nullptr;
  std::string path;
  std::string why;
};

/*! \brief The validator, loaded once (never unloaded). */
Validator* GetValidator() {
  static Validator* v = [] {
    auto* out = new Validator();
    std::vector<std::string> candidates = CandidatePaths();
    const char* env = std::getenv("TVM_SPIRV_TOOLS_LIBRARY");
    for (const std::string& path : candidates) {
      tvm::runtime::DriverSpec spec{{path}, "TVM_SPIRV_TOOLS_LIBRARY", "", ""};
      std::string why = tvm::runtime::LoadDriver(&out->tools, spec);
      if (why.empty()) {
        out->path = env != nullptr && *env != '\0' ? env : path;
        out->context = out->tools.spvContextCreate(kSpvEnvVulkan11);
        if (out->context == nullptr) out->why = "spvContextCreate failed";
        return out;
      }
      out->why = why;
      if (env != nullptr && *env != '\0') break;  // the variable names the only library tried
    }
    return out;
  }();
  return v;
}

}  // namespace

std::vector<uint32_t> SpirvWords(const std::string& payload) {
  if (payload.size() % 4 != 0) {
    TVM_FFI_THROW(ValueError) << "the vulkan module's payload is not SPIR-V: its " << payload.size()
                              << " bytes are not a whole number of 32-bit words";
  }
  std::vector<uint32_t> words(payload.size() / 4);
  if (!words.empty()) std::memcpy(words.data(), payload.data(), payload.size());
  return words;
}

std::vector<uint32_t> ForFloatControls(const std::vector<uint32_t>& words, uint32_t preserved) {
  auto kept_mode = [&](size_t i) {
    uint32_t bits = words[i + 3];
    return (bits == 16 && (preserved & 1u)) || (bits == 32 && (preserved & 2u)) ||
           (bits == 64 && (preserved & 4u));
  };
  std::vector<uint32_t> out(words.begin(), words.begin() + std::min<size_t>(5, words.size()));
  bool any_kept = false;
  for (size_t i = 5; i < words.size(); i += words[i] >> 16) {
    uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (opcode == kOpExecutionMode && count == 4 &&
        words[i + 2] == kExecutionModeSignedZeroInfNanPreserve) {
      if (!kept_mode(i)) continue;
      any_kept = true;
    }
    out.insert(out.end(), words.begin() + i, words.begin() + i + count);
  }
  if (any_kept) return out;
  // The capability goes; the extension too unless another of its capabilities (DenormPreserve
  // 4464 to RoundingModeRTZ 4468) stays.
  bool other_controls = false;
  for (size_t i = 5; i < out.size(); i += out[i] >> 16) {
    bool control = (out[i] & 0xffff) == kOpCapability && (out[i] >> 16) == 2 &&
                   out[i + 1] >= 4464 && out[i + 1] <= 4468;
    if (control && out[i + 1] != kCapabilitySignedZeroInfNanPreserve) other_controls = true;
  }
  std::vector<uint32_t> bare(out.begin(), out.begin() + std::min<size_t>(5, out.size()));
  for (size_t i = 5; i < out.size(); i += out[i] >> 16) {
    uint32_t count = out[i] >> 16, opcode = out[i] & 0xffff;
    bool capability =
        opcode == kOpCapability && count == 2 && out[i + 1] == kCapabilitySignedZeroInfNanPreserve;
    bool extension =
        !other_controls && opcode == kOpExtension && count >= 2 &&
        LiteralString(out, i + 1, i + count, "OpExtension") == "SPV_KHR_float_controls";
    if (!capability && !extension)
      bare.insert(bare.end(), out.begin() + i, out.begin() + i + count);
  }
  return bare;
}

SpirvSummary ParseSpirv(const std::vector<uint32_t>& words) {
  if (words.size() < 5 || words[0] != kSpirvMagic) {
    TVM_FFI_THROW(ValueError) << "the vulkan module's payload is not SPIR-V (no 0x07230203 magic "
                              << "number and 5-word header)";
  }
  SpirvSummary out;
  out.version = words[1];
  if ((out.version & 0xff0000ff) != 0 || (out.version >> 16) != 1) {
    TVM_FFI_THROW(ValueError) << "malformed SPIR-V: bad version word " << out.version;
  }
  if (out.version > kMaxSpirvVersion) {
    TVM_FFI_THROW(ValueError) << "the vulkan module is SPIR-V 1." << ((out.version >> 8) & 0xff)
                              << ", but this runtime uses Vulkan 1.1, which accepts SPIR-V 1.0 to "
                              << "1.3: emit SPIR-V 1.3";
  }
  if (words[3] == 0 || words[4] != 0) {
    TVM_FFI_THROW(ValueError) << "malformed SPIR-V: bad header (id bound " << words[3]
                              << ", schema " << words[4] << ")";
  }
  for (size_t i = 5; i < words.size();) {
    uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || count > words.size() - i) {
      TVM_FFI_THROW(ValueError) << "malformed SPIR-V: the instruction at word " << i << " (opcode "
                                << opcode << ") has word count " << count
                                << (count == 0 ? "" : ", past the end of the module");
    }
    if (opcode == kOpCapability && count >= 2) out.capabilities.push_back(words[i + 1]);
    if (opcode == kOpEntryPoint && count >= 4 && words[i + 1] == kExecutionModelGLCompute) {
      out.entry_points.push_back(LiteralString(words, i + 3, i + count, "OpEntryPoint"));
    }
    if (opcode == kOpString && count >= 3) {
      std::string text = LiteralString(words, i + 2, i + count, "OpString");
      size_t colon = text.rfind(':');
      for (auto mark : {std::make_pair(kLoopBoundMark, &out.loop_bounds),
                        std::make_pair(kStaticSharedMark, &out.static_shared)}) {
        size_t name_at = std::strlen(mark.first);
        if (text.compare(0, name_at, mark.first) == 0 && colon != std::string::npos &&
            colon >= name_at) {
          mark.second->emplace_back(text.substr(name_at, colon - name_at), text.substr(colon + 1));
        }
      }
    }
    if (opcode == kOpDecorate && count >= 4 && words[i + 2] == kDecorationBinding) {
      out.bindings.push_back(words[i + 3]);
    }
    if (opcode == kOpDecorate && count >= 4 && words[i + 2] == kDecorationDescriptorSet) {
      out.descriptor_sets.push_back(words[i + 3]);
    }
    i += count;
  }
  return out;
}

void ValidateSpirv(const std::vector<uint32_t>& words) {
  Validator* v = GetValidator();
  if (v->context == nullptr) {
    const char* env = std::getenv("TVM_SPIRV_TOOLS_LIBRARY");
    if (env != nullptr && *env != '\0') {  // asked for by name: not silently skipped
      TVM_FFI_THROW(RuntimeError) << "TVM_SPIRV_TOOLS_LIBRARY='" << env << "' cannot validate "
                                  << "SPIR-V: " << v->why
                                  << "; point it at libSPIRV-Tools-shared.so "
                                  << "or unset it (without SPIRV-Tools modules load unvalidated)";
    }
    return;
  }
  static std::mutex mu;  // a context is not documented as thread-safe
  std::lock_guard<std::mutex> lock(mu);
  SpvDiagnostic* diag = nullptr;
  int rc = v->tools.spvValidateBinary(v->context, words.data(), words.size(), &diag);
  std::string message = diag != nullptr && diag->error != nullptr ? diag->error : "";
  size_t index = diag != nullptr ? diag->position.index : 0;
  if (diag != nullptr) v->tools.spvDiagnosticDestroy(diag);
  if (rc != kSpvSuccess) {
    TVM_FFI_THROW(ValueError) << "the vulkan module's SPIR-V is invalid (spirv-val, Vulkan 1.1, "
                              << "at word " << index << "): " << message;
  }
}

std::string SpirvValidatorPath(std::string* why) {
  Validator* v = GetValidator();
  if (v->context == nullptr && why != nullptr) *why = v->why;
  return v->context != nullptr ? v->path : "";
}

}  // namespace tvm_backend_vulkan
