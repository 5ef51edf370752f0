/*!
 * \file tvm/runtime/buffer_registry.h
 * \brief The live buffers of a backend whose tensors' data pointers are driver objects (OpenCL's
 *        cl_mem, a Vulkan or WebGPU buffer record), not device addresses: a pointer reaches the
 *        driver only after the registry has found it live, so a stale, foreign or corrupted
 *        pointer is a Python exception, never a driver crash. Every such backend uses it.
 */
#ifndef TVM_RUNTIME_BUFFER_REGISTRY_H_
#define TVM_RUNTIME_BUFFER_REGISTRY_H_

#include <tvm/ffi/error.h>
#include <tvm/runtime/fork_guard.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace tvm {
namespace runtime {

/*! \brief A live buffer: its device and the bytes its owner asked for. */
struct HandleBuffer {
  int device_id;
  size_t nbytes;
  unsigned forks = ForkCount();  // the process it was allocated in (tvm/runtime/fork_guard.h)
};

/*! \brief The live buffers of one backend, by data pointer (thread-safe). */
class BufferRegistry {
 public:
  /*!
   * \param kind Tag of warnings on stderr ("opencl").
   * \param label How messages name the driver's buffers ("OpenCL").
   */
  BufferRegistry(std::string kind, std::string label)
      : kind_(std::move(kind)), label_(std::move(label)) {}

  void Add(const void* buffer, int device_id, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu_);
    live_[buffer] = HandleBuffer{device_id, nbytes};
  }

  /*! \brief Forgets `buffer`: true when it was live, else false with a warning on stderr (tensor
   *  destructors free buffers, so this never throws); false, silently, for a buffer the parent of
   *  this forked child allocated (the parent's driver owns it). */
  bool Remove(const void* buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(buffer);
    if (it != live_.end()) {
      bool ours = it->second.forks == ForkCount();
      live_.erase(it);
      return ours;
    }
    std::fprintf(stderr,
                 "[tvm %s] warning: ignoring free of %p: not a live %s buffer allocated by TVM\n",
                 kind_.c_str(), buffer, label_.c_str());
    return false;
  }

  /*! \brief The record of live `buffer`; false for anything else. */
  bool Find(const void* buffer, HandleBuffer* where) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(buffer);
    if (it == live_.end()) return false;
    *where = it->second;
    return true;
  }

  /*! \brief The record of a copy's `role` ("source"), with [offset, offset + nbytes) inside it;
   *  ValueError otherwise. */
  HandleBuffer ForCopy(const void* ptr, size_t offset, size_t nbytes, const char* role) const {
    HandleBuffer buf{};
    if (!Find(ptr, &buf)) {
      TVM_FFI_THROW(ValueError) << "copy " << role << " " << ptr << " is not a live " << label_
                                << " buffer allocated by TVM";
    }
    if (offset > buf.nbytes || nbytes > buf.nbytes - offset) {
      TVM_FFI_THROW(ValueError) << "copy " << role << " range [" << offset << ", "
                                << offset + nbytes << ") is outside its " << buf.nbytes << "-byte "
                                << label_ << " buffer";
    }
    return buf;
  }

  /*! \brief The record of argument `index` of kernel `kernel`; ValueError when it is not live. */
  HandleBuffer ForArgument(const void* ptr, const std::string& kernel, size_t index) const {
    HandleBuffer buf{};
    if (!Find(ptr, &buf)) {
      TVM_FFI_THROW(ValueError) << kind_ << " kernel " << kernel << ": argument " << index << " ("
                                << ptr << ") is not a live " << label_
                                << " buffer allocated by TVM";
    }
    return buf;
  }

  /*! \brief ForCopy's check, then `ptr` as the backend's own buffer record `Record` (for backends
   *  whose data pointers are their records). */
  template <typename Record>
  Record* CopyRecord(const void* ptr, size_t offset, size_t nbytes, const char* role) const {
    ForCopy(ptr, offset, nbytes, role);
    return static_cast<Record*>(const_cast<void*>(ptr));
  }

  /*! \brief ForArgument's check, then `ptr` as the backend's own buffer record `Record`. */
  template <typename Record>
  Record* ArgumentRecord(const void* ptr, const std::string& kernel, size_t index) const {
    ForArgument(ptr, kernel, index);
    return static_cast<Record*>(const_cast<void*>(ptr));
  }

 private:
  std::string kind_;
  std::string label_;
  mutable std::mutex mu_;
  std::unordered_map<const void*, HandleBuffer> live_;
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_BUFFER_REGISTRY_H_
