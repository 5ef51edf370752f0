/*!
 * \file tvm/runtime/program_driver.h
 * \brief A HandleDriver that builds its code images at run time from source text (OpenCL C), and
 *        the device module of such a driver.
 *
 * The backend implements four verbs (build a source, take a binary, give a built image's binary
 * back, and what a binary depends on besides its source); the kit decides where each image comes
 * from: a binary the module carries, then the on-disk ProgramCache, then the source (whose binary
 * is then stored), and it reports a failed build with the compiler's log.
 *
 * Globals of backend "<kind>": "<kind>.ProgramBinary"(source, device_id) -> bytes (the binary of
 * `source` built for that device, through the cache like any build, sealed with a CRC-32 so that
 * a damaged copy never reaches the driver), "<kind>.ProgramCacheInfo"()
 * and "<kind>.Discovered"() (whether the devices were looked for yet).
 */
#ifndef TVM_RUNTIME_PROGRAM_DRIVER_H_
#define TVM_RUNTIME_PROGRAM_DRIVER_H_

#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/disk_cache.h>
#include <tvm/runtime/handle_driver.h>
#include <tvm/runtime/lazy_discovery.h>
#include <tvm/runtime/program_cache.h>

#include <string>
#include <utility>
#include <vector>

namespace tvm {
namespace runtime {

/*!
 * \brief A HandleDriver whose devices `Found` discovers once, on first use (LazyDiscovery), and
 *        whose code images are programs built from source on each device.
 *
 * `Found` is default-constructible by LazyDiscovery, has `std::string Discover()` and a vector
 * `devices` whose entries carry the device's `AttributeList attributes`.
 */
template <typename Found>
class ProgramDriver : public HandleDriver {
 public:
  using DeviceInfo = typename decltype(Found::devices)::value_type;

  /*! \brief As HandleDriver's; the program cache is ProgramCache(kind). */
  ProgramDriver(int device_type, std::string kind, std::string label, std::string fix)
      : HandleDriver(device_type, kind, label, fix),
        discovery_(label, fix),
        cache_(new ProgramCache(kind)) {}  // never deleted: its info function holds it

  /*! \brief What a binary built for `dev_id` depends on besides its source (the device, the
   *  driver's version, the build options): part of the cache key. */
  virtual std::string BuildIdentity(int dev_id) = 0;
  /*! \brief Throws a clear error when `source` (of `kernel`) needs what `dev_id` lacks. */
  virtual void CheckSource(int dev_id, const std::string& source, const std::string& kernel) {}
  /*! \brief Builds `source` for `dev_id` into `*image`: the status, and the compiler's log in
   *  `*log` when the build fails (or which call failed, when there is no log). */
  virtual int BuildSource(int dev_id, const std::string& source, void** image,
                          std::string* log) = 0;
  /*! \brief The image of `binary` built for `dev_id`, or null when the device refuses it. */
  virtual void* BuildBinary(int dev_id, const std::string& binary) = 0;
  /*! \brief The binary of a built image, "" when the driver gives none. */
  virtual std::string BinaryOf(void* image) = 0;

  std::string UnavailableReason() final {
    std::string why;
    discovery_.TryGet(&why);
    return why;
  }
  int DeviceCount() final {
    Found* found = discovery_.TryGet();
    return found == nullptr ? 0 : static_cast<int>(found->devices.size());
  }
  ffi::Any Attribute(int dev_id, const std::string& key) override {
    return FindAttribute(Device(dev_id).attributes, key);
  }

  /*! \brief Device `id` (discovering the devices on first use; throws when it does not exist). */
  const DeviceInfo& Device(int id) {
    Found* found = discovery_.TryGet();
    if (found == nullptr || id < 0 || id >= static_cast<int>(found->devices.size())) {
      Require("use", id);  // throws: no device, or not this one
    }
    return found->devices[id];
  }

  /*!
   * \brief The image of `source` on `dev_id`: the stored binary of an earlier build where the
   *        device takes it, else built from source (and its binary stored).
   * \param kernel Names the program in errors (its first kernel).
   */
  void* Build(int dev_id, const std::string& source, const std::string& kernel) {
    CheckSource(dev_id, source, kernel);
    return BuildChecked(dev_id, source, kernel);
  }

  /*! \brief Build for a `source` CheckSource has accepted. */
  void* BuildChecked(int dev_id, const std::string& source, const std::string& kernel) {
    std::string path =
        cache_->PathOf("tvm-" + kind() + "-program-v3\n" + BuildIdentity(dev_id) + '\n' + source,
                       "." + kind() + "bin");
    void* image = nullptr;
    if (cache_->Load(path, [&](const std::string& bin) {
          return (image = BuildBinary(dev_id, bin)) != nullptr;
        })) {
      return image;
    }
    std::string log;
    int status = BuildSource(dev_id, source, &image, &log);
    if (status != 0) {
      ffi::Any attribute = Attribute(dev_id, "name");
      auto name = attribute.try_cast<ffi::String>();
      TVM_FFI_THROW(RuntimeError) << "building the " << label() << " program of kernel '" << kernel
                                  << "' for " << DeviceLabel(dev_id)
                                  << (name.has_value() ? " ('" + std::string(*name) + "')" : "")
                                  << " failed with " << ErrorString(status) << ". Build log:\n"
                                  << (log.empty() ? "(empty build log)" : log);
    }
    cache_->Store(path, BinaryOf(image));
    return image;
  }

  /*! \brief Registers the globals named in the file comment. */
  void RegisterGlobals() {
    cache_->RegisterInfo();
    auto binary = [this](ffi::String source, int dev_id) {
      void* image = Build(dev_id, source, "<program>");
      std::string bytes = BinaryOf(image);
      ReleaseImage(image);
      if (bytes.empty()) {
        TVM_FFI_THROW(RuntimeError) << DeviceLabel(dev_id) << " offers no program binary";
      }
      return ffi::Bytes(disk_cache::Seal(bytes));
    };
    ffi::Function::SetGlobal(kind() + ".ProgramBinary", ffi::Function::FromTyped(binary), true);
    ffi::Function::SetGlobal(kind() + ".Discovered",
                             ffi::Function::FromTyped([this] { return discovery_.discovered(); }),
                             true);
  }

 private:
  LazyDiscovery<Found> discovery_;
  ProgramCache* cache_;
};

/*!
 * \brief The device module of a ProgramDriver. Payload formats: `source_format` (the payload is
 *        the source) and `binary_format` (a binary of "<kind>.ProgramBinary", tried first when
 *        its seal is intact; the source must come along as the spec's source entry named after
 *        the kind or `source_format`, so that devices which refuse the binary, or a binary that
 *        is damaged or was not sealed, build the source).
 */
template <typename Driver>
class ProgramKernelModule : public HandleKernelModule {
 public:
  ProgramKernelModule(Driver* driver, DeviceModuleSpec spec, const char* source_format,
                      const char* binary_format)
      : HandleKernelModule(driver, std::move(spec), {source_format, binary_format}),
        driver_(driver),
        binary_(spec_.fmt == binary_format) {
    source_ = binary_ ? "" : spec_.payload;
    for (const auto& kv : spec_.sources) {
      if (binary_ && source_.empty() && (kv.first == kind() || kv.first == source_format)) {
        source_ = kv.second;
      }
    }
    if (binary_ && source_.empty()) {
      TVM_FFI_THROW(ValueError) << "a module of kind '" << kind() << "' in format '"
                                << binary_format << "' must also carry its source as ('" << kind()
                                << "', text), so that other devices can rebuild it";
    }
  }

 private:
  void* BuildImage(int dev_id) final {
    std::string kernel = spec_.functions.empty() ? "<program>" : spec_.functions[0].name;
    driver_->CheckSource(dev_id, source_, kernel);
    std::string binary;  // only an intact binary of ProgramBinary reaches the driver
    if (binary_ && disk_cache::Unseal(spec_.payload, &binary)) {
      if (void* image = driver_->BuildBinary(dev_id, binary)) return image;
    }
    return driver_->BuildChecked(dev_id, source_, kernel);
  }

  Driver* driver_;
  bool binary_;
  std::string source_;
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_PROGRAM_DRIVER_H_
