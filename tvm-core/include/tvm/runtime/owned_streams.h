/*!
 * \file tvm/runtime/owned_streams.h
 * \brief The streams a DeviceAPI created, per device, so that FreeStream and StreamSync refuse a
 *        handle they do not own: destroying or syncing a foreign handle (one another library
 *        still uses, or a stale integer) is undefined behaviour in every GPU driver.
 *
 * \code
 * OwnedStreams streams_;
 * TVMFFIStreamHandle CreateStream(DLDevice dev) { ... streams_.Add(dev, s); return s; }
 * void FreeStream(DLDevice dev, TVMFFIStreamHandle s) { if (s) { streams_.Remove(dev, s);
 * destroy(s); } } void StreamSync(DLDevice dev, TVMFFIStreamHandle s) { streams_.CheckSyncable(dev,
 * s); sync(s); }
 * \endcode
 */
#ifndef TVM_RUNTIME_OWNED_STREAMS_H_
#define TVM_RUNTIME_OWNED_STREAMS_H_

#include <tvm/ffi/error.h>
#include <tvm/runtime/device_api.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace tvm {
namespace runtime {

class OwnedStreams {
 public:
  /*! \brief Record a stream CreateStream made on `dev`. */
  void Add(DLDevice dev, TVMFFIStreamHandle stream) {
    std::lock_guard<std::mutex> lock(mu_);
    streams_[Key(dev)].insert(stream);
  }

  /*! \brief Forget a stream FreeStream is about to destroy; ValueError when it is not one of
   *  `dev`'s (or was freed already). */
  void Remove(DLDevice dev, TVMFFIStreamHandle stream) {
    std::lock_guard<std::mutex> lock(mu_);
    if (streams_[Key(dev)].erase(stream) == 0) {
      TVM_FFI_THROW(ValueError) << "FreeStream: " << stream << " is not a stream created by "
                                << "CreateStream on " << Name(dev) << " (or it was freed already)";
    }
  }

  /*! \brief ValueError unless `stream` is the default stream (null), the current stream of `dev`
   *  in tvm-ffi's stream table (which another library such as PyTorch may have set), or one of
   *  the streams made on `dev`. */
  void CheckSyncable(DLDevice dev, TVMFFIStreamHandle stream) {
    if (stream == nullptr || stream == DeviceAPI::CurrentStream(dev)) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (streams_[Key(dev)].count(stream) == 0) {
      TVM_FFI_THROW(ValueError) << "StreamSync: " << stream << " is neither the default stream, "
                                << "the current stream of " << Name(dev)
                                << " nor a stream created by CreateStream on it";
    }
  }

 private:
  static std::pair<int, int> Key(DLDevice dev) { return {dev.device_type, dev.device_id}; }
  static std::string Name(DLDevice dev) {
    return DeviceTypeName(dev.device_type) + "(" + std::to_string(dev.device_id) + ")";
  }
  std::mutex mu_;
  std::map<std::pair<int, int>, std::set<TVMFFIStreamHandle>> streams_;
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_OWNED_STREAMS_H_
