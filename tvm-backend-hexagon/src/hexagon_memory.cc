/*!
 * \file hexagon_memory.cc
 * \brief The shared-memory arena and the hexagon DeviceAPI on it.
 */
#include "hexagon_memory.h"

#include "hexagon_simulator.h"

#include <sys/mman.h>
#include <tvm/ffi/error.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/env_setting.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tvm_backend_hexagon {
namespace ffi = tvm::ffi;

namespace {
constexpr size_t kMinAlignment = 128;
constexpr size_t kDefaultMegabytes = 1024;
// The guest is a 32-bit process: its C library maps less than 2 GiB at once.
constexpr size_t kMaxMegabytes = 2047;

size_t ArenaBytes() {
  int64_t mb = tvm::runtime::IntegerSetting("TVM_HEXAGON_MEMORY_MB", kDefaultMegabytes, 1,
                                            kMaxMegabytes, "a number of megabytes");
  return static_cast<size_t>(mb) << 20;
}
}  // namespace

Arena& Arena::Get() {
  static Arena* arena = new Arena();  // never destroyed: tensors may outlive static destructors
  return *arena;
}

Arena::Arena() : size_(ArenaBytes()) {
  fd_ = static_cast<int>(memfd_create("tvm-hexagon-device-memory", MFD_CLOEXEC));
  if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    TVM_FFI_THROW(RuntimeError) << "hexagon: cannot create " << (size_ >> 20)
                                << " MiB of shared device memory: " << std::strerror(errno);
  }
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    TVM_FFI_THROW(RuntimeError) << "hexagon: cannot map the device memory: "
                                << std::strerror(errno);
  }
  base_ = static_cast<char*>(p);
  free_[0] = size_;
}

void Arena::CheckThisProcess() const {
  if (Forked()) {
    TVM_FFI_THROW(RuntimeError) << "hexagon: " << tvm::runtime::ForkedChildMessage("Hexagon");
  }
}

void* Arena::Allocate(size_t nbytes, size_t alignment) {
  CheckThisProcess();
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  if (alignment & (alignment - 1)) {
    TVM_FFI_THROW(ValueError) << "hexagon: alignment " << alignment << " is not a power of two";
  }
  size_t want = nbytes == 0 ? alignment : (nbytes + alignment - 1) / alignment * alignment;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    size_t start = (it->first + alignment - 1) / alignment * alignment;
    size_t end = it->first + it->second;
    if (start > end || end - start < want) continue;
    size_t block = it->first;
    free_.erase(it);
    if (start > block) free_[block] = start - block;
    if (end > start + want) free_[start + want] = end - start - want;
    used_[start] = want;
    return base_ + start;
  }
  TVM_FFI_THROW(RuntimeError) << "hexagon: out of device memory allocating " << nbytes
                              << " bytes (the device has " << (size_ >> 20)
                              << " MiB; set TVM_HEXAGON_MEMORY_MB, up to " << kMaxMegabytes
                              << ", before the first allocation)";
}

void Arena::Free(void* ptr) {
  if (ptr == nullptr || Forked()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = used_.find(static_cast<size_t>(static_cast<char*>(ptr) - base_));
  if (it == used_.end()) {
    TVM_FFI_THROW(ValueError) << "hexagon: " << ptr << " is not hexagon device memory";
  }
  auto [offset, bytes] = *it;
  used_.erase(it);
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + bytes) {
    bytes += next->second;
    free_.erase(next);
  }
  auto prev = free_.lower_bound(offset);
  if (prev != free_.begin() && (--prev)->first + prev->second == offset) {
    prev->second += bytes;
  } else {
    free_[offset] = bytes;
  }
}

int64_t Arena::OffsetOf(const void* ptr, size_t nbytes) const {
  const char* p = static_cast<const char*>(ptr);
  if (p < base_ || p > base_ + size_ || nbytes > static_cast<size_t>(base_ + size_ - p)) return -1;
  return p - base_;
}

size_t Arena::LiveBytesFrom(const void* ptr) {
  const char* p = static_cast<const char*>(ptr);
  if (p < base_ || p >= base_ + size_) return 0;
  size_t offset = p - base_;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = used_.upper_bound(offset);  // the first allocation after it
  if (it == used_.begin()) return 0;
  --it;
  return offset < it->first + it->second ? it->first + it->second - offset : 0;
}

namespace {

/*! \brief The host-memory device of the kit, with its memory in the arena. */
class HexagonDeviceAPI final : public tvm::runtime::HostMemoryDeviceAPI {
 public:
  using HostMemoryDeviceAPI::HostMemoryDeviceAPI;
  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) final {
    CheckDevice(dev);
    return Arena::Get().Allocate(nbytes, alignment);
  }
  void FreeDataSpace(DLDevice, void* ptr) final { Arena::Get().Free(ptr); }
  size_t LiveBytesFrom(const void* ptr) const final { return Arena::Get().LiveBytesFrom(ptr); }
  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final {
    // a forked child shares the arena with its parent: a copy would change the parent's tensors
    Arena::Get().CheckThisProcess();
    HostMemoryDeviceAPI::CopyDataFromTo(from, from_offset, to, to_offset, nbytes, dev_from, dev_to,
                                        stream);
  }
};

}  // namespace

void RegisterDeviceAPI(const std::string& simulator) {
  static HexagonDeviceAPI api("hexagon", 1,
                              {{"name", ffi::String("Hexagon v66 with HVX (" + simulator + ")")},
                               {"max_threads_per_block", int64_t{1024}},
                               {"warp_size", int64_t{1}},
                               {"max_shared_memory_per_block", int64_t{256 * 1024}},
                               {"compute_version", ffi::String("v66")},
                               {"multi_processor_count", static_cast<int64_t>(HardwareThreads())},
                               {"total_global_memory", static_cast<int64_t>(ArenaBytes())},
                               {"unavailable_reason", ffi::String("")}});
  tvm::runtime::DeviceAPI::Register(kDeviceType, &api);
}

}  // namespace tvm_backend_hexagon
