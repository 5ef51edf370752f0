/*!
 * \file tvm/runtime/program_cache.h
 * \brief A backend's on-disk cache of the programs its driver builds at run time (the binary of
 *        a source built for one device), so that later processes load the binary instead of
 *        compiling again.
 *
 * Backend "<name>" keeps its entries in disk_cache::Dir("<name>") ($TVM_CACHE_DIR/<name>), or in
 * $TVM_<NAME>_CACHE_DIR; TVM_<NAME>_CACHE=0 (or off, false, no) turns the cache off. Entries carry
 * disk_cache's integrity header, so a truncated or foreign file never reaches the driver; a binary
 * the driver refuses (another driver version) counts as rejected and is rebuilt from source. The
 * counts are published as the global function "<name>.ProgramCacheInfo" (dir, hits, stores,
 * rejected).
 */
#ifndef TVM_RUNTIME_PROGRAM_CACHE_H_
#define TVM_RUNTIME_PROGRAM_CACHE_H_

#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/disk_cache.h>
#include <tvm/runtime/env_setting.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

namespace tvm {
namespace runtime {

class ProgramCache {
 public:
  /*! \brief The cache of backend `name` ("opencl": TVM_OPENCL_CACHE, TVM_OPENCL_CACHE_DIR). */
  explicit ProgramCache(std::string name) : name_(std::move(name)) {
    env_prefix_ = "TVM_" + name_;
    std::transform(env_prefix_.begin(), env_prefix_.end(), env_prefix_.begin(),
                   [](unsigned char c) { return std::toupper(c); });
  }

  /*! \brief The folder of the entries, or "" when the cache is off. */
  std::string Folder() const {
    if (!BooleanSetting((env_prefix_ + "_CACHE").c_str(), true)) return "";
    std::string dir = Env("_CACHE_DIR");
    return dir.empty() ? disk_cache::Dir(name_) : disk_cache::ExpandHome(dir);
  }

  /*! \brief The entry of `identity` (everything the binary depends on: source, options, device,
   *  driver version), "" when the cache is off. */
  std::string PathOf(const std::string& identity, const std::string& extension) const {
    std::string dir = Folder();
    return dir.empty() ? "" : dir + "/" + disk_cache::Key(identity) + extension;
  }

  /*!
   * \brief Hands the binary stored at `path` to `accept` (the driver's load: true when it took
   *        it). True on a hit; false when there is no usable entry (a corrupted one, or one that
   *        `accept` refused, counts as rejected): the caller then builds from source and Stores.
   */
  template <typename Accept>
  bool Load(const std::string& path, Accept accept) {
    std::string binary;
    bool corrupted = false;
    if (path.empty()) return false;
    if (disk_cache::Read(path, &binary, &corrupted) && accept(binary)) {
      ++hits_;
      return true;
    }
    if (corrupted || !binary.empty()) ++rejected_;
    return false;
  }

  /*! \brief Stores `binary` at `path` (nothing when the cache is off or the binary is empty). */
  void Store(const std::string& path, const std::string& binary) {
    if (disk_cache::Write(path, binary)) ++stores_;
  }

  /*! \brief Publishes the counts as the global function "<name>.ProgramCacheInfo" (which holds
   *  this object: create it with `new` and never delete it, as a backend's other globals). */
  void RegisterInfo() {
    auto info = [this]() {
      ffi::Map<ffi::String, ffi::Any> out;
      out.Set("dir", ffi::String(Folder()));
      out.Set("hits", hits_.load());
      out.Set("stores", stores_.load());
      out.Set("rejected", rejected_.load());
      return out;
    };
    ffi::Function::SetGlobal(name_ + ".ProgramCacheInfo", ffi::Function::FromTyped(info), true);
  }

 private:
  std::string Env(const char* suffix) const {
    const char* v = std::getenv((env_prefix_ + suffix).c_str());
    return v != nullptr ? v : "";
  }

  std::string name_, env_prefix_;
  std::atomic<int64_t> hits_{0}, stores_{0}, rejected_{0};
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_PROGRAM_CACHE_H_
