/*!
 * \file hexagon_memory.h
 * \brief Device memory of the hexagon backend: one arena of shared memory (a memfd) mapped into
 *        this process and into every simulator process, so kernels read and write tensors
 *        without copies. Tensors are host pointers into the arena; a kernel receives the guest
 *        address of the same bytes.
 */
#ifndef TVM_BACKEND_HEXAGON_MEMORY_H_
#define TVM_BACKEND_HEXAGON_MEMORY_H_

#include <tvm/runtime/fork_guard.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace tvm_backend_hexagon {

/*! \brief DLPack's device type of Hexagon (kDLHexagon). */
constexpr int kDeviceType = 16;

/*! \brief The arena: created on first use, TVM_HEXAGON_MEMORY_MB megabytes (default 1024). */
class Arena {
 public:
  /*! \brief The process-wide arena (created on first call; throws if the memfd cannot be made). */
  static Arena& Get();
  /*! \brief `nbytes` of device memory aligned to at least 128 bytes (HVX vectors); throws when
   *  the arena is full, naming its size and the variable that sets it. */
  void* Allocate(size_t nbytes, size_t alignment);
  /*! \brief Return memory from Allocate (null is ignored, and so is all in a forked child: the
   *  memory is the parent's). */
  void Free(void* ptr);
  /*! \brief Throws RuntimeError in a child forked after the arena was made: its memory is
   *  shared with the parent, whose allocations this process cannot see. */
  void CheckThisProcess() const;
  /*! \brief Whether this process is a child forked after the arena was made. */
  bool Forked() const { return made_in_.Stale(); }
  /*! \brief Offset of `ptr` in the arena when [ptr, ptr + nbytes) lies inside it, else -1. */
  int64_t OffsetOf(const void* ptr, size_t nbytes) const;
  /*! \brief The bytes from `ptr` to the end of the live allocation holding it; 0 when no live
   *  allocation holds it. */
  size_t LiveBytesFrom(const void* ptr);
  int fd() const { return fd_; }
  size_t size() const { return size_; }

 private:
  Arena();
  int fd_ = -1;
  char* base_ = nullptr;
  size_t size_ = 0;
  std::mutex mu_;
  std::map<size_t, size_t> free_;  // offset -> bytes, coalesced
  std::map<size_t, size_t> used_;  // offset -> bytes
  tvm::runtime::ForkGuard made_in_;
};

/*! \brief Registers the hexagon DeviceAPI (the core's host-memory device on the arena). */
void RegisterDeviceAPI(const std::string& simulator);

}  // namespace tvm_backend_hexagon

#endif  // TVM_BACKEND_HEXAGON_MEMORY_H_
