/*!
 * \file tvm/runtime/driver_loader.h
 * \brief A device driver library opened at run time: its entry points are declared once, as a
 *        list, and resolved with dlopen/dlsym, so a backend DSO builds without the vendor's SDK
 *        and loads on machines without the driver (it then reports why).
 *
 * \code
 * // name in the table, exported symbol, signature
 * #define CUDA_DRIVER_SYMBOLS(X)                     \
 *   X(cuInit, "cuInit", CUresult(unsigned))          \
 *   X(cuMemAlloc, "cuMemAlloc_v2", CUresult(CUdeviceptr*, size_t))
 * TVM_DRIVER_TABLE(DriverAPI, CUDA_DRIVER_SYMBOLS);
 *
 * DriverAPI api;
 * std::string why = tvm::runtime::LoadDriver(
 *     &api, {{"libcuda.so.1"}, "TVM_CUDA_DRIVER", "no NVIDIA driver on this machine",
 *            "it is too old or not NVIDIA's driver"});
 * \endcode
 *
 * The library is the one named by the environment variable when that is set (and then only that
 * one), else the first of the sonames that loads. It stays loaded for the process's lifetime.
 */
#ifndef TVM_RUNTIME_DRIVER_LOADER_H_
#define TVM_RUNTIME_DRIVER_LOADER_H_

#include <dlfcn.h>
#include <tvm/ffi/error.h>

#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tvm {
namespace runtime {

/*! \brief Where a driver comes from and what to say when it cannot be used. */
struct DriverSpec {
  /*! \brief Sonames tried in order ("libcuda.so.1"). */
  std::vector<std::string> sonames;
  /*! \brief Environment variable naming one library path to use instead (may be empty). */
  std::string env_var;
  /*! \brief Added to "<soname> not found" ("no NVIDIA driver on this machine"; may be empty). */
  std::string absent;
  /*! \brief Why a library lacking entry points is refused ("OpenCL 1.2 or newer is required"). */
  std::string too_old;
};

namespace detail {
template <typename F>
void ResolveInto(void* handle, const char* symbol, F* slot, std::string* missing) {
  void* sym = dlsym(handle, symbol);
  if (sym == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
  }
  *slot = reinterpret_cast<F>(sym);
}
}  // namespace detail

namespace detail {
/*! \brief The library the user named in `spec.env_var`, or "" when none is named. */
inline std::string ChosenLibrary(const DriverSpec& spec) {
  const char* chosen = spec.env_var.empty() ? nullptr : std::getenv(spec.env_var.c_str());
  return chosen != nullptr ? chosen : "";
}

/*! \brief The driver's name in messages: its first soname. */
inline std::string DriverName(const DriverSpec& spec) {
  return spec.sonames.empty() ? std::string("the driver library") : spec.sonames[0];
}
}  // namespace detail

/*!
 * \brief Opens the driver library of `spec` (`chosen`: the library the user named, or "").
 * \param why Set to the reason when none loads.
 * \return The handle, or null.
 */
inline void* OpenDriverLibrary(const DriverSpec& spec, const std::string& chosen,
                               std::string* why) {
  if (!chosen.empty()) {
    if (void* handle = dlopen(chosen.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* err = dlerror();
    *why =
        spec.env_var + "=" + chosen + " cannot be loaded (" + (err ? err : "dlopen failed") + ")";
    return nullptr;
  }
  std::string first_error;
  for (const std::string& name : spec.sonames) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* err = dlerror();
    if (first_error.empty()) first_error = err ? err : "dlopen failed";
  }
  *why = detail::DriverName(spec) + " not found" + (spec.absent.empty() ? "" : ": " + spec.absent) +
         " (" + first_error + ")";
  return nullptr;
}

/*!
 * \brief Opens the driver of `spec` and resolves every entry of `table` (a TVM_DRIVER_TABLE).
 * \return "" on success, else why the driver cannot be used (shown to users).
 */
template <typename Table>
std::string LoadDriver(Table* table, const DriverSpec& spec) {
  std::string why, chosen = detail::ChosenLibrary(spec);
  void* handle = OpenDriverLibrary(spec, chosen, &why);
  if (handle == nullptr) return why;
  std::string missing = table->Resolve(handle);
  if (missing.empty()) return "";
  if (!chosen.empty()) {  // the library the user named is the one that lacks it
    return spec.env_var + "=" + chosen + " lacks " + missing + ": it is not " +
           detail::DriverName(spec) + " or a library that provides its API; unset " + spec.env_var +
           " or point it at one";
  }
  return detail::DriverName(spec) + " lacks " + missing +
         (spec.too_old.empty() ? "" : ": " + spec.too_old);
}

/*!
 * \brief The process's one table of a driver (a TVM_DRIVER_TABLE): loaded by the backend's init,
 *        handed out to every driver call after that.
 *
 * \code
 * LoadedDriver<Api>& OpenCL() { static auto* d = new LoadedDriver<Api>(spec); return *d; }
 * std::string why = OpenCL().Load();   // at init: "" or the reason
 * OpenCL().Get().clFinish(queue);      // later: throws RuntimeError if Load never succeeded
 * \endcode
 */
template <typename Table>
class LoadedDriver {
 public:
  explicit LoadedDriver(DriverSpec spec) : spec_(std::move(spec)) {}

  /*! \brief Loads the table unless already loaded; "" on success, else why it cannot be. */
  std::string Load() {
    if (loaded_) return "";
    Table table{};
    std::string why = LoadDriver(&table, spec_);
    if (!why.empty()) return why;
    table_ = table;
    loaded_ = true;
    return "";
  }

  /*! \brief The table; throws RuntimeError before a successful Load. */
  const Table& Get() const {
    if (!loaded_) {
      TVM_FFI_THROW(RuntimeError) << "the driver library " << spec_.sonames.front()
                                  << " is not loaded (the backend was not initialised)";
    }
    return table_;
  }

 private:
  DriverSpec spec_;
  Table table_{};
  bool loaded_ = false;
};

}  // namespace runtime
}  // namespace tvm

#define TVM_DRIVER_TABLE_FIELD(name, symbol, ...) std::add_pointer_t<__VA_ARGS__> name = nullptr;
#define TVM_DRIVER_TABLE_RESOLVE(name, symbol, ...) \
  ::tvm::runtime::detail::ResolveInto(handle, symbol, &name, &missing);

/*!
 * \brief Declares `struct Name` with one function pointer per entry of `SYMBOLS(X)` (each
 *        `X(field, "exported symbol", signature)`) and `std::string Resolve(void* handle)`, which
 *        fills them and returns the symbols that are missing ("" when none).
 */
#define TVM_DRIVER_TABLE(Name, SYMBOLS) \
  struct Name {                         \
    SYMBOLS(TVM_DRIVER_TABLE_FIELD)     \
    std::string Resolve(void* handle) { \
      std::string missing;              \
      SYMBOLS(TVM_DRIVER_TABLE_RESOLVE) \
      return missing;                   \
    }                                   \
  }

#endif  // TVM_RUNTIME_DRIVER_LOADER_H_
