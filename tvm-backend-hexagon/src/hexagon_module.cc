/*!
 * \file hexagon_module.cc
 * \brief Device modules of kind "hexagon" (payload: a static Hexagon executable, format "elf")
 *        and TVMBackendInit.
 *
 * Each module owns one simulator process, started on its first launch; launches are
 * synchronous (the reply comes when the kernel has finished), so the device needs no streams.
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/runtime/base.h>
#include <tvm/runtime/device_module.h>

#include <memory>
#include <string>
#include <vector>

#include "hexagon_memory.h"
#include "hexagon_simulator.h"

namespace tvm_backend_hexagon {
namespace {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceModuleSpec;
using tvm::runtime::FunctionInfo;
using tvm::runtime::KernelArgKind;
using tvm::runtime::LaunchConfig;

constexpr int64_t kMaxThreadsPerBlock = 1024;
// Shared memory per block: the target kind's max_shared_memory_per_block (a launch may size it)
constexpr int64_t kMaxSharedMemory = 256 * 1024;

std::string& SimulatorCommand() {
  static std::string qemu;
  return qemu;
}

/*! \brief Arena offset of buffer argument `i`, a hexagon tensor or a raw device pointer. */
int64_t BufferOffset(const FunctionInfo& info, ffi::PackedArgs args, size_t i) {
  const auto* api = static_cast<const tvm::runtime::HostMemoryDeviceAPI*>(
      tvm::runtime::DeviceAPI::Get(kDeviceType));
  const void* data = tvm::runtime::LiveHostBuffer(*api, "hexagon", info, args, i);
  int64_t offset = Arena::Get().OffsetOf(data, 0);
  if (offset < 0) {
    TVM_FFI_THROW(ValueError) << "hexagon kernel " << info.name << ": argument " << i
                              << " is not in hexagon device memory (allocate it on "
                              << "tvm.hexagon(0))";
  }
  return offset;
}

class HexagonModuleObj final : public tvm::runtime::KernelModuleBase {
 public:
  explicit HexagonModuleObj(DeviceModuleSpec spec) : KernelModuleBase("hexagon", std::move(spec)) {
    if (spec_.fmt != "elf") {
      TVM_FFI_THROW(ValueError) << "hexagon module: unsupported payload format '" << spec_.fmt
                                << "' (expected 'elf', a static Hexagon executable)";
    }
    for (const FunctionInfo& info : spec_.functions) {
      kinds_.push_back(tvm::runtime::ParseKernelArgTypes(info));
    }
    simulator_ = std::make_unique<Simulator>(spec_.payload, SimulatorCommand(),
                                             static_cast<uint32_t>(spec_.functions.size()));
  }

 protected:
  void Launch(size_t index, ffi::PackedArgs args) final {
    const FunctionInfo& info = spec_.functions[index];
    if (spec_.payload.empty()) {
      TVM_FFI_THROW(RuntimeError)
          << "hexagon kernel " << info.name << ": this module holds the generated C but no "
          << "executable: it was compiled where the pip package ziglang was missing. pip install "
          << "'ziglang==0.17.1' and compile it again";
    }
    LaunchConfig cfg = LaunchConfig::Decode(info, args);
    tvm::runtime::CheckLaunchTensors(info, args, kDeviceType, true);
    if (cfg.empty()) return;
    int64_t threads = cfg.ThreadsPerBlock();
    if (threads > kMaxThreadsPerBlock) {
      TVM_FFI_THROW(ValueError) << "hexagon kernel " << info.name << ": " << threads
                                << " threads per block exceed " << kMaxThreadsPerBlock;
    }
    if (cfg.grid[0] * cfg.grid[1] > (int64_t{1} << 62) / cfg.grid[2]) {  // each is < 2^31
      TVM_FFI_THROW(ValueError) << "hexagon kernel " << info.name << ": a grid of " << cfg.grid[0]
                                << " x " << cfg.grid[1] << " x " << cfg.grid[2]
                                << " blocks is more than 2^62 blocks";
    }
    Arena::Get().CheckThisProcess();  // a forked child would write into its parent's tensors
    size_t n = info.arg_types.size();
    std::vector<uint64_t> slots(n, 0);
    std::vector<int64_t> offsets(n, -1);
    for (size_t i = 0; i < n; ++i) {
      if (kinds_[index][i] == KernelArgKind::kPointer) {
        offsets[i] = BufferOffset(info, args, i);
      } else {
        tvm::runtime::PackScalarArgument(kinds_[index][i], args[i], &slots[i]);
      }
    }
    if (cfg.dyn_shmem_bytes > kMaxSharedMemory) {
      TVM_FFI_THROW(ValueError) << "hexagon kernel " << info.name << ": " << cfg.dyn_shmem_bytes
                                << " bytes of dynamic shared memory exceed " << kMaxSharedMemory;
    }
    LaunchHeader header{};
    header.kernel = static_cast<uint32_t>(index);
    header.dyn_shmem = static_cast<uint32_t>(cfg.dyn_shmem_bytes);
    for (int d = 0; d < 3; ++d) {
      header.grid[d] = cfg.grid[d];
      header.block[d] = cfg.block[d];
    }
    simulator_->Launch(header, std::move(slots), offsets, info.name);
  }

 private:
  std::vector<std::vector<KernelArgKind>> kinds_;
  std::unique_ptr<Simulator> simulator_;
};

int HexagonBackendInit(char* err, int err_len) {
  std::string why;
  std::string qemu = FindSimulator(&why);
  if (qemu.empty()) return tvm::runtime::BackendInitFailed(err, err_len, why);
  SimulatorCommand() = qemu;
  MaxSimulators();  // a bad setting makes the runtime unavailable with the reason, as the others
  RegisterDeviceAPI(qemu.substr(qemu.rfind('/') + 1));
  tvm::runtime::RegisterDeviceModuleClass<HexagonModuleObj>("hexagon");
  return 0;
}

}  // namespace
}  // namespace tvm_backend_hexagon

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_hexagon::HexagonBackendInit)
