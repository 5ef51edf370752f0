/*!
 * \file tvm/runtime/device_api.h
 * \brief The DeviceAPI abstraction and its per-device-type registry.
 *
 * The core registers the CPU DeviceAPI; each backend DSO registers its own from TVMBackendInit.
 */
#ifndef TVM_RUNTIME_DEVICE_API_H_
#define TVM_RUNTIME_DEVICE_API_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/base.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tvm {
namespace runtime {

/*!
 * \brief Device attributes queried through DeviceAPI::GetAttr.
 * Keys: "exist", "name", "max_threads_per_block", "warp_size", "max_shared_memory_per_block",
 * "compute_version", "multi_processor_count", "max_clock_rate", "total_global_memory",
 * "api_version", "driver_version", "max_thread_dimensions", and "unavailable_reason" (why no
 * device of this type is usable, "" when one is; shown by `python -m tvm.backend`).
 * An unknown key returns None.
 */
/*! \brief One device's attributes by key, read from the driver once (when the device is found). */
using AttributeList = std::vector<std::pair<std::string, ffi::Any>>;

/*! \brief The value of `key` in `attrs`, None when the list has no such key. */
inline ffi::Any FindAttribute(const AttributeList& attrs, const std::string& key) {
  for (const auto& [name, value] : attrs) {
    if (name == key) return value;
  }
  return ffi::Any();
}

class TVM_RUNTIME_DLL DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  /*! \brief Value of attribute `key` for `dev`, or None when the backend has no such attribute. */
  virtual ffi::Any GetAttr(DLDevice dev, const std::string& key) = 0;
  /*! \brief Allocate `nbytes` on `dev` with at least `alignment`. Throws on failure. */
  virtual void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) = 0;
  /*! \brief Free memory from AllocDataSpace. */
  virtual void FreeDataSpace(DLDevice dev, void* ptr) = 0;
  /*!
   * \brief Copy `nbytes` between two buffers, at least one of which lives on this API's devices.
   * Either side may be kDLCPU. `stream` is the stream to order the copy on (may be null).
   */
  virtual void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                              size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                              TVMFFIStreamHandle stream) = 0;
  /*! \brief Create a new stream, or null when the device has a single implicit queue. */
  virtual TVMFFIStreamHandle CreateStream(DLDevice dev) { return nullptr; }
  /*! \brief Free a stream from CreateStream; by default (a device without streams) any handle
   *  but null is refused with a ValueError. */
  virtual void FreeStream(DLDevice dev, TVMFFIStreamHandle stream);
  /*! \brief Wait until all work queued on `stream` (null: the default stream) has finished. */
  virtual void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) = 0;

  /*! \brief The current stream of `dev` in tvm-ffi's per-thread stream table. */
  static TVMFFIStreamHandle CurrentStream(DLDevice dev) {
    return TVMFFIEnvGetStream(dev.device_type, dev.device_id);
  }
  /*!
   * \brief The DeviceAPI registered for `device_type`.
   * \param allow_missing Return null instead of throwing when none is registered.
   */
  static DeviceAPI* Get(int device_type, bool allow_missing = false);
  /*! \brief Register (or replace) the DeviceAPI of `device_type`; `api` must outlive the process.
   */
  static void Register(int device_type, DeviceAPI* api);
};

/*!
 * \brief A DeviceAPI whose memory is host memory: the CPU, emulated devices, a processor under a
 *  simulator that shares memory with the host. Allocation is aligned host memory, copies are
 *  memmove (a device side must lie inside a live allocation: LiveBytesFrom), there are no
 *  streams. Attributes come from a table (plus "exist" from the count).
 *
 * \code
 * static HostMemoryDeviceAPI api("example", 1, {{"name", ffi::String("example-cpu-device")},
 *                                               {"max_threads_per_block", int64_t{256}}});
 * DeviceAPI::Register(DeviceTypeOf("example"), &api);
 * \endcode
 */
class TVM_RUNTIME_DLL HostMemoryDeviceAPI : public DeviceAPI {
 public:
  /*!
   * \param name The device's name in messages ("example").
   * \param num_devices How many devices exist (ids 0 .. num_devices - 1).
   * \param attrs Attribute values of every device, by key.
   */
  HostMemoryDeviceAPI(std::string name, int num_devices, AttributeList attrs);
  ffi::Any GetAttr(DLDevice dev, const std::string& key) override;
  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) override;
  /*! \brief Frees memory from AllocDataSpace; a pointer it did not return (freed already,
   *  foreign, inside an allocation) is reported on stderr and left alone, never freed. */
  void FreeDataSpace(DLDevice dev, void* ptr) override;
  /*! \brief Copies bytes; the side on this device (not the CPU, whose memory may come from
   *  anywhere) must lie inside LiveBytesFrom, else ValueError. */
  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) override;
  /*! \brief The bytes from `ptr` to the end of the live allocation holding it; 0 when `ptr` is
   *  in none. A subclass with its own allocator (AllocDataSpace) answers for its memory. Kernel
   *  launches check their buffer arguments with it too (CheckBufferBytes). */
  virtual size_t LiveBytesFrom(const void* ptr) const;
  /*! \brief A host-memory device makes no streams: freeing any handle but null is refused. */
  void FreeStream(DLDevice dev, TVMFFIStreamHandle stream) override;
  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) override;

 protected:
  /*! \brief Throws ValueError naming the device when `dev` does not exist. */
  void CheckDevice(DLDevice dev) const;
  /*! \brief ValueError unless [ptr + offset, ptr + offset + nbytes) is live memory of this device
   *  (`role`: "source" or "destination"). */
  void CheckCopyRange(const void* ptr, size_t offset, size_t nbytes, const char* role) const;

 private:
  std::string name_;
  int num_devices_;
  AttributeList attrs_;
};

/*!
 * \brief Human-readable name of a device type: the name its backend registered ("example"),
 *        else the DLPack name ("cuda", "opencl", ...).
 */
TVM_RUNTIME_DLL std::string DeviceTypeName(int device_type);

/*!
 * \brief The device type that the backend's activation registered for device `name`
 *        (`ctx.register_device(name)` in Python, before `ctx.load_runtime`); -1 when none.
 *        A vendor's backend whose type the core handed out reads it here in TVMBackendInit.
 */
TVM_RUNTIME_DLL int DeviceTypeOf(const std::string& name);

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_DEVICE_API_H_
