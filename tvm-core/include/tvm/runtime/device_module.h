/*!
 * \file tvm/runtime/device_module.h
 * \brief What every device backend shares: the serialized device-module format, the
 *        launch-parameter convention and the generic fallback module.
 *
 * Serialized format (all integers little-endian u64, strings/bytes length-prefixed):
 *   magic "TVMDEVM2" | fmt: str | function map | payload: bytes | sources: u64 n, n x (fmt: str,
 *   text: str) | checksum: CRC-32 (as u64) of every byte before it
 * function map = u64 n, n x (name: str, u64 nargs, nargs x dtype: str, u64 ntags, ntags x tag: str)
 * Parsing never trusts a length, and checks the checksum first: changed, corrupted or truncated
 * bytes raise ValueError.
 */
#ifndef TVM_RUNTIME_DEVICE_MODULE_H_
#define TVM_RUNTIME_DEVICE_MODULE_H_

#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/runtime/base.h>
#include <tvm/runtime/device_api.h>

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tvm {
namespace runtime {

/*!
 * \brief Where `s` stops being UTF-8 text (s.size() if never): a byte that starts no character,
 *  a cut or overlong sequence, a UTF-16 surrogate or a code point past U+10FFFF; without
 *  `controls`, a control character (other than none) too. Messages that quote text, and
 *  drivers that compile it, need text.
 */
inline size_t FirstNonUtf8(const std::string& s, bool controls = true) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    if (len == 0 || i + len > s.size()) return i;
    if (len == 1 && !controls && (c < 0x20 || c == 0x7f)) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return i;
    }
    unsigned char next = len > 1 ? static_cast<unsigned char>(s[i + 1]) : 0;
    if ((len == 2 && c < 0xc2) || (c == 0xe0 && next < 0xa0) || (c == 0xed && next >= 0xa0) ||
        (c == 0xf0 && next < 0x90) || (c == 0xf4 && next >= 0x90) || c > 0xf4) {
      return i;
    }
    i += len;
  }
  return s.size();
}

struct FunctionInfo;

/*!
 * \brief An integer expression over a kernel's scalar arguments, as code generators write buffer
 *  sizes, launch bounds and loop bounds: integers, "$k" (integer scalar argument k of the same
 *  call, as the kernel receives it: wrapped to its arg type's width), "+", "-", "*", "/" and "%"
 *  (floor division and modulo, as TIR's floordiv and floormod), "min(a,b)", "max(a,b)" and
 *  parentheses, with the usual precedence and no spaces; e.g. "$3*128", "($0+255)/256",
 *  "4*$2+260". Parsed once; evaluated with each step saturated at the int64 range.
 */
class ArgExpression {
 public:
  /*! \brief `text` for kernel `info`; invalid (nothing to evaluate) when it is not an expression
   *  of this form over integer scalar arguments of `info`, or longer or deeper than a code
   *  generator writes (4096 characters, 64 nested parentheses). */
  TVM_RUNTIME_DLL static ArgExpression Parse(const FunctionInfo& info, const std::string& text);
  /*! \brief Whether Parse understood the text. */
  bool valid() const { return !steps_.empty(); }
  /*! \brief The text it was parsed from. */
  const std::string& text() const { return text_; }
  /*! \brief Whether it is one integer (`*value` gets it). */
  bool IsConstant(int64_t* value) const {
    if (steps_.size() != 1 || steps_[0].op != 'c') return false;
    *value = steps_[0].value;
    return true;
  }
  /*!
   * \brief Its value for call `args` into `*value`; false when unknown: invalid, an argument that
   *  is no integer, or a division by zero. With `magnitudes` each argument counts as its
   *  absolute value, which bounds a sum of products with non-negative constants (a loop bound)
   *  from above whatever the signs (a negative as 0 did not: -300 * -300 is 90000, not 0).
   */
  TVM_RUNTIME_DLL bool Evaluate(ffi::PackedArgs args, int64_t* value,
                                bool magnitudes = false) const;

  /*! \brief The most values an evaluation holds at once (Parse refuses deeper expressions). */
  static constexpr size_t kMaxStack = 160;

 private:
  /*! \brief One step of the postfix form: op 'c' pushes `value`, '$' argument `value` (of `bits`
   *  and signedness, as the kernel receives it); '+', '-', '*', '/', '%', 'm' (min) and 'M'
   *  (max) combine the top two values. */
  struct Step {
    char op;
    int64_t value;
    int bits = 64;
    bool is_unsigned = false;
  };
  friend class ArgExpressionParser;
  std::vector<Step> steps_;
  std::string text_;
};

/*! \brief What an argument type says, parsed once: for a buffer ("handle[:<dtype>[:<size>]]")
 *  its element dtype and size, for an integer scalar narrower than 64 bits its range. */
struct BufferArgType {
  /*! \brief Element dtype; code 0xff when the type names none. */
  DLDataType dtype{0xff, 0, 0};
  /*! \brief The minimum element count (invalid when no size is given or it is not understood). */
  ArgExpression size;
  /*! \brief The values an integer scalar of fewer than 64 bits can take ("int32": a narrowed
   *  int64 size); least > most for every other type. */
  int64_t least = 0, most = -1;
};

/*! \brief One kernel of a device module. */
struct FunctionInfo {
  std::string name;
  /*!
   * \brief Type of each kernel argument: a scalar dtype ("int32", "float32", ...) or, for a
   *  buffer, "handle" optionally followed by ":<element dtype>" and ":<minimum elements>" (an
   *  ArgExpression; see CheckBufferArgument), e.g. "handle:float32:$3*128".
   */
  std::vector<std::string> arg_types;
  /*!
   * \brief Meaning of the trailing launch arguments, in order: "blockIdx.x".."z",
   * "threadIdx.x".."z" and "dyn_shmem" (dynamic shared memory bytes).
   */
  std::vector<std::string> launch_param_tags;
  /*!
   * \brief Per launch argument, an ArgExpression it is checked against (invalid: not checked):
   *  for a grid or block extent the most it may be, the extent the kernel's code was written for
   *  (more would index past its buffers); for "dyn_shmem" the fewest bytes the kernel uses.
   *  Serialized as a ":<expression>" suffix of the tag ("threadIdx.x:256",
   *  "blockIdx.x:($2+255)/256", "dyn_shmem:$2*4").
   */
  std::vector<ArgExpression> launch_bounds;
  /*!
   * \brief arg_types parsed for CheckBufferArgument and LaunchConfig::Decode (one entry per
   *  argument). Filled where infos are built (Deserialize, SpecFromCreateArgs); not serialized.
   */
  std::vector<BufferArgType> buffer_args;
};

/*! \brief Everything a device module is made of, independent of backend. */
struct DeviceModuleSpec {
  /*! \brief Payload format: "cubin", "ptx", "cl", "spirv", "so", ... */
  std::string fmt;
  std::vector<FunctionInfo> functions;
  /*! \brief The binary (or source) the backend runtime loads. */
  std::string payload;
  /*! \brief (format, text) pairs shown by inspect_source, e.g. ("cuda", "..."), ("ptx", "..."). */
  std::vector<std::pair<std::string, std::string>> sources;

  /*! \brief Serialize to the format above. */
  TVM_RUNTIME_DLL std::string Serialize() const;
  /*! \brief Parse; throws ValueError naming the problem on corrupted input. */
  TVM_RUNTIME_DLL static DeviceModuleSpec Deserialize(const std::string& bytes);
  /*! \brief The source of format `fmt` ("" = the first one), or "" when absent. */
  TVM_RUNTIME_DLL std::string Source(const std::string& fmt) const;
  /*! \brief Kernel `name`, or null. */
  TVM_RUNTIME_DLL const FunctionInfo* Find(const std::string& name) const;
};

/*! \brief True for a buffer argument type: "handle" or "handle:...". */
inline bool IsBufferArgType(const std::string& type) {
  return type.compare(0, 6, "handle") == 0 && (type.size() == 6 || type[6] == ':');
}

/*!
 * \brief Checks tensor `t` passed for buffer argument `index` of a call to kernel `info` (a raw
 *  device pointer cannot be checked; host code passes those). The tensor must be compact
 *  (row-major contiguous: kernels index a flat buffer); when the argument type carries them, its
 *  element dtype must match and it must hold at least the minimum number of elements (an
 *  ArgExpression of the call's scalar arguments, parsed once into info.buffer_args). Throws
 * TypeError (dtype) or ValueError (layout, size) naming the kernel and the argument.
 */
TVM_RUNTIME_DLL void CheckBufferArgument(const FunctionInfo& info, size_t index, const DLTensor* t,
                                         ffi::PackedArgs args);

/*!
 * \brief Checks buffer argument `index` of a call to kernel `info` against the memory behind it:
 *  `available` bytes from where the kernel's view starts, as the backend's record of the
 *  allocation says (a raw pointer has no shape to check; a tensor's shape is no proof of its
 *  allocation either). Throws ValueError naming the kernel and the argument when the kernel
 *  accesses more for these arguments (its arg type's minimum elements times the element size).
 */
TVM_RUNTIME_DLL void CheckBufferBytes(const FunctionInfo& info, size_t index, ffi::PackedArgs args,
                                      uint64_t available);

/*!
 * \brief A kernel's upper bound on the loop passes one thread makes, as a code generator writes
 *  it (tvm.codegen.device_module.loop_bound): an ArgExpression, in practice a sum of products of
 *  integers and "$k" terms (the value of scalar argument k), e.g. "4*$2+260", or "?" when the
 *  loops' trip counts cannot be bounded (read from memory; an argument subtracted, which may be
 *  negative, or divided by). Parsed once per kernel by ParseLoopIterationBound.
 */
struct LoopIterationBound {
  /*! \brief kNone: nothing to check (no bound written, or one this runtime does not understand). */
  enum Kind { kNone, kUnknown, kExpression } kind = kNone;
  /*! \brief The bound (kExpression): a sum of products with non-negative constants. */
  ArgExpression expr;
};

/*! \brief Parse the bound `text` written for kernel `info` ("" gives kNone). */
TVM_RUNTIME_DLL LoopIterationBound ParseLoopIterationBound(const FunctionInfo& info,
                                                           const std::string& text);

/*!
 * \brief Refuses a launch of kernel `info` (of module kind `kind`) on device `device_name` when
 *  one thread may run more loop iterations than the device's driver allows (a negative "$k"
 *  argument counts as 0: such loops run zero times; products and sums saturate at INT64_MAX).
 *  Mesa's llvmpipe (behind lavapipe, and WebGPU or OpenGL on it) silently ends a shader thread
 *  after 65535 loop iterations in all; other drivers have no such limit. A kUnknown bound gets one
 *  warning per kernel there. Throws RuntimeError naming the kernel, the bound, the limit and the
 *  fix.
 */
TVM_RUNTIME_DLL void CheckLoopIterationBound(const char* kind, const FunctionInfo& info,
                                             const LoopIterationBound& bound, ffi::PackedArgs args,
                                             const std::string& device_name);

/*!
 * \brief Checks every tensor passed for a buffer argument of a launch of kernel `info` and picks
 *  the launch device: each tensor must be on `device_type` (and, with `same_device`, on the
 *  device of the first one) and pass CheckBufferArgument. Returns the device id of the first
 *  tensor, or -1 when the buffers are all raw pointers (the backend locates those, or uses 0).
 *  Throws ValueError naming the kernel, the argument, where it is and where it should be.
 */
TVM_RUNTIME_DLL int CheckLaunchTensors(const FunctionInfo& info, ffi::PackedArgs args,
                                       int device_type, bool same_device);

/*! \brief A buffer argument of a launch: a tensor, or a raw device pointer (or address). */
struct BufferArgument {
  void* data = nullptr;              // the tensor's data, or the pointer itself
  uint64_t byte_offset = 0;          // the tensor's byte_offset (0 for a pointer)
  const DLTensor* tensor = nullptr;  // null for a pointer
  /*! \brief Where the kernel's buffer starts. */
  void* address() const { return static_cast<char*>(data) + byte_offset; }
};

/*!
 * \brief Argument `index` of a launch of `info` as a buffer; TypeError "<kind> kernel <name>:
 *  argument <index> must be a tensor or a device pointer, got <type>" for anything else.
 */
inline BufferArgument BufferArgumentOf(const char* kind, const FunctionInfo& info,
                                       ffi::PackedArgs args, size_t index) {
  BufferArgument out;
  if (auto t = args[index].try_cast<DLTensor*>()) {
    out.tensor = *t;
    out.data = (*t)->data;
    out.byte_offset = (*t)->byte_offset;
  } else if (auto p = args[index].try_cast<void*>()) {
    out.data = *p;
  } else if (auto v = args[index].try_cast<int64_t>()) {
    out.data = reinterpret_cast<void*>(static_cast<uintptr_t>(*v));
  } else {
    TVM_FFI_THROW(TypeError) << kind << " kernel " << info.name << ": argument " << index
                             << " must be a tensor or a device pointer, got "
                             << args[index].GetTypeKey();
  }
  return out;
}

/*!
 * \brief Buffer argument `index` of a launch of `info` on a device whose memory is host memory
 *  (`api`, a HostMemoryDeviceAPI): its address, once checked to lie in live memory of the device
 *  that holds the tensor and what the kernel accesses for these arguments (CheckBufferBytes).
 *  ValueError naming the kernel otherwise; a raw pointer outside live memory (null, an empty
 *  allocation's) passes only where the kernel accesses nothing for these arguments.
 */
TVM_RUNTIME_DLL void* LiveHostBuffer(const HostMemoryDeviceAPI& api, const char* kind,
                                     const FunctionInfo& info, ffi::PackedArgs args, size_t index);

/*!
 * \brief How one kernel argument travels to the device: a pointer (any "handle..." type), or a
 *  scalar of exactly the C type its arg type names ("int8" ... "uint64", "bool" as one byte,
 *  "float16"/"bfloat16" as their 2-byte bit patterns, "float32", "float64"). Every backend packs
 *  an arg type the same way; a kernel whose parameter is a float for a float16 value says
 *  "float32".
 */
enum class KernelArgKind {
  kPointer,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64
};

/*! \brief The kind of argument `index` of `info`; TypeError naming the kernel for an unknown type.
 */
TVM_RUNTIME_DLL KernelArgKind ParseKernelArgType(const FunctionInfo& info, size_t index);

/*! \brief ParseKernelArgType of every argument of `info`, in order (parse once per module). */
inline std::vector<KernelArgKind> ParseKernelArgTypes(const FunctionInfo& info) {
  std::vector<KernelArgKind> kinds;
  for (size_t i = 0; i < info.arg_types.size(); ++i) kinds.push_back(ParseKernelArgType(info, i));
  return kinds;
}

/*!
 * \brief Bytes an argument of `kind` occupies as its C type (what PackScalarArgument writes; 8 for
 *  a pointer): also its alignment in a packed argument buffer or struct.
 */
inline size_t KernelArgBytes(KernelArgKind kind) {
  switch (kind) {
    case KernelArgKind::kI8:
    case KernelArgKind::kU8:
      return 1;
    case KernelArgKind::kI16:
    case KernelArgKind::kU16:
    case KernelArgKind::kF16:
    case KernelArgKind::kBF16:
      return 2;
    case KernelArgKind::kI32:
    case KernelArgKind::kU32:
    case KernelArgKind::kF32:
      return 4;
    default:
      return 8;
  }
}

/*!
 * \brief Writes scalar `value` into `slot` (8 bytes) as `kind` expects; returns the bytes written
 *  (0 for kPointer, which callers pass themselves).
 */
TVM_RUNTIME_DLL size_t PackScalarArgument(KernelArgKind kind, const ffi::AnyView& value,
                                          void* slot);

/*! \brief Largest launch extent or dynamic shared memory size accepted (fits every API's int). */
constexpr int64_t kMaxLaunchValue = (int64_t{1} << 31) - 1;

/*! \brief 0/1/2 for blockIdx.x/y/z and threadIdx.x/y/z, -1 for any other tag. */
TVM_RUNTIME_DLL int LaunchTagAxis(const std::string& tag);

/*! \brief Grid/block dims and dynamic shared memory decoded from a kernel's launch arguments. */
struct LaunchConfig {
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t dyn_shmem_bytes = 0;

  /*!
   * \brief Threads per block: the product of the block's extents, or INT64_MAX where it overflows
   *  (each extent may be up to kMaxLaunchValue), so that a message names the real count.
   */
  int64_t ThreadsPerBlock() const {
    int64_t threads = 1;
    for (int64_t b : block) {
      if (b != 0 && threads > INT64_MAX / b) return INT64_MAX;
      threads *= b;
    }
    return threads;
  }

  /*! \brief True when some extent is 0 (e.g. a symbolic size of 0): the launch does nothing. */
  bool empty() const {
    for (int i = 0; i < 3; ++i) {
      if (grid[i] == 0 || block[i] == 0) return true;
    }
    return false;
  }

  /*!
   * \brief Decode the trailing launch arguments of a call to kernel `info`.
   * Checks the argument count (TypeError) and every value: integer scalars inside the range of
   * their arg type (an "int32" may be an int64 size a target without int64 narrowed), extents in
   * [0, kMaxLaunchValue] (0 makes the launch empty()), known tags, dyn_shmem in range
   * (ValueError naming the kernel).
   */
  TVM_RUNTIME_DLL static LaunchConfig Decode(const FunctionInfo& info, ffi::PackedArgs args);
};

/*!
 * \brief Base class for device modules: kind, function map, SaveToBytes and inspect_source come
 *        from the spec, so real and fallback modules of a kind serialize byte-identically.
 */
class TVM_RUNTIME_DLL DeviceModuleBase : public ffi::ModuleObj {
 public:
  DeviceModuleBase(std::string kind, DeviceModuleSpec spec)
      : kind_(std::move(kind)), spec_(std::move(spec)) {}
  const char* kind() const override { return kind_.c_str(); }
  int GetPropertyMask() const override {
    return ffi::Module::kBinarySerializable | ffi::Module::kRunnable;
  }
  ffi::Bytes SaveToBytes() const override;
  ffi::String InspectSource(const ffi::String& format) const override;
  ffi::Array<ffi::String> GetWriteFormats() const override;
  const DeviceModuleSpec& spec() const { return spec_; }

 protected:
  std::string kind_;
  DeviceModuleSpec spec_;
};

/*!
 * \brief A device module whose functions launch its kernels: GetFunction finds kernel `name` in
 *        the spec and returns a function that keeps the module alive and calls
 *        Launch(index in spec().functions, args). A backend implements Launch only.
 */
class KernelModuleBase : public DeviceModuleBase {
 public:
  using DeviceModuleBase::DeviceModuleBase;
  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    for (size_t i = 0; i < spec_.functions.size(); ++i) {
      if (spec_.functions[i].name != name) continue;
      ffi::ObjectPtr<ffi::Object> keep_alive = ffi::GetObjectPtr<ffi::Object>(this);
      return ffi::Function::FromPacked(
          [this, keep_alive, i](ffi::PackedArgs args, ffi::Any*) { Launch(i, args); });
    }
    return std::nullopt;
  }

 protected:
  /*! \brief Launch kernel `index` (of spec().functions) with the call's arguments. */
  virtual void Launch(size_t index, ffi::PackedArgs args) = 0;

  /*! \brief ValueError unless the payload format is one of `formats`. */
  void CheckFormat(std::initializer_list<const char*> formats) const {
    std::string expected;
    size_t i = 0;
    for (const char* f : formats) {
      if (spec_.fmt == f) return;
      if (i > 0) expected += i + 1 == formats.size() ? " or " : ", ";
      expected += f;
      ++i;
    }
    TVM_FFI_THROW(ValueError) << kind() << " module: unsupported payload format '" << spec_.fmt
                              << "' (expected " << expected << ")";
  }
};

/*!
 * \brief The generic fallback module: same kind and bytes as the real one, but every function
 *        raises RuntimeError with `reason` (why the runtime is unavailable and what to install).
 */
TVM_RUNTIME_DLL ffi::Module MakeFallbackModule(const std::string& kind, DeviceModuleSpec spec,
                                               const std::string& reason);

/*!
 * \brief Builds a spec from the arguments of `ffi.Module.create.<kind>`:
 *        (fmt: str, functions: list of [name, [arg dtypes], [launch tags]], payload: bytes,
 *         sources: list of [fmt, text]).
 */
TVM_RUNTIME_DLL DeviceModuleSpec SpecFromCreateArgs(ffi::PackedArgs args);

/*!
 * \brief Registers `ffi.Module.create.<kind>` (the code generators' factory) and
 *        `ffi.Module.load_from_bytes.<kind>` (the loader of exported libraries); both build the
 *        module with `make` from the spec they decode. A backend calls this in TVMBackendInit.
 */
TVM_RUNTIME_DLL void RegisterDeviceModuleKind(const std::string& kind,
                                              std::function<ffi::Module(DeviceModuleSpec)> make);

/*! \brief RegisterDeviceModuleKind for a module class constructed from its spec. */
template <typename ModuleObj>
void RegisterDeviceModuleClass(const std::string& kind) {
  RegisterDeviceModuleKind(kind, [](DeviceModuleSpec spec) {
    return ffi::Module(ffi::make_object<ModuleObj>(std::move(spec)));
  });
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_DEVICE_MODULE_H_
