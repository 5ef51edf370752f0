/*!
 * \file device_module.cc
 * \brief The one serializer for device modules, launch-argument decoding and the fallback module.
 */
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/code_image.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_module.h>
#include <tvm/runtime/disk_cache.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace tvm {
namespace runtime {

namespace {
constexpr char kMagic[] = "TVMDEVM2";
constexpr size_t kMagicLen = 8;
constexpr size_t kChecksumLen = 8;  // trailing CRC-32 (as u64) of every byte before it

class Writer {
 public:
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void Str(const std::string& s) {
    U64(s.size());
    out_.append(s);
  }
  void Raw(const char* data, size_t n) { out_.append(data, n); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  /*! \brief Reads the first `size` bytes of `data` (all of them by default). */
  explicit Reader(const std::string& data) : Reader(data, data.size()) {}
  Reader(const std::string& data, size_t size) : data_(data), size_(size) {}
  uint64_t U64(const char* what) {
    Need(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return v;
  }
  std::string Str(const char* what) {
    uint64_t n = U64(what);
    Need(n, what);
    std::string s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }

  /*! \brief Str of a name, type or tag: UTF-8 text without control characters (messages quote
   *  it, and bytes that are not text would turn the error about it into a decoding error). */
  std::string Name(const char* what) {
    std::string s = Str(what);
    size_t bad = FirstNonUtf8(s, /*controls=*/false);
    if (bad < s.size()) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", static_cast<unsigned char>(s[bad]));
      Fail(what, std::string("holds the byte ") + hex + " at its position " + std::to_string(bad) +
                     ", which is no UTF-8 text");
    }
    return s;
  }

  /*! \brief A count of items each at least `min_item_bytes` long; rejects impossible counts. */
  uint64_t Count(const char* what, uint64_t min_item_bytes) {
    uint64_t n = U64(what);
    if (min_item_bytes > 0 && n > (size_ - pos_) / min_item_bytes) {
      Fail(what, "count " + std::to_string(n) + " exceeds the remaining bytes");
    }
    return n;
  }
  void Need(uint64_t n, const char* what) {
    if (n > size_ - pos_) {
      Fail(what, "needs " + std::to_string(n) + " bytes but only " + std::to_string(size_ - pos_) +
                     " remain");
    }
  }
  void Skip(size_t n) { pos_ += n; }
  bool AtEnd() const { return pos_ == size_; }
  [[noreturn]] void Fail(const char* what, const std::string& msg) {
    TVM_FFI_THROW(ValueError) << "corrupted device module bytes: " << what << " at offset " << pos_
                              << " " << msg << " (total " << size_ << " bytes)";
    TVM_FFI_UNREACHABLE();
  }

 private:
  const std::string& data_;
  size_t size_;
  size_t pos_ = 0;
};
}  // namespace

void ParseLaunchTags(FunctionInfo* info);
void ParseBufferArgs(FunctionInfo* info);

namespace {
std::string TagWithBound(const FunctionInfo& f, size_t i) {
  bool bound = i < f.launch_bounds.size() && f.launch_bounds[i].valid();
  return bound ? f.launch_param_tags[i] + ":" + f.launch_bounds[i].text() : f.launch_param_tags[i];
}
}  // namespace

std::string DeviceModuleSpec::Serialize() const {
  Writer w;
  w.Raw(kMagic, kMagicLen);
  w.Str(fmt);
  w.U64(functions.size());
  for (const FunctionInfo& f : functions) {
    w.Str(f.name);
    w.U64(f.arg_types.size());
    for (const std::string& t : f.arg_types) w.Str(t);
    w.U64(f.launch_param_tags.size());
    for (size_t i = 0; i < f.launch_param_tags.size(); ++i) w.Str(TagWithBound(f, i));
  }
  w.Str(payload);
  w.U64(sources.size());
  for (const auto& kv : sources) {
    w.Str(kv.first);
    w.Str(kv.second);
  }
  std::string out = w.Take();
  disk_cache::detail::PutU64(&out, disk_cache::Crc32(out));
  return out;
}

namespace {
/*! \brief How many bytes precede the checksum, once the magic and the checksum match. */
size_t CheckedBodySize(const std::string& bytes) {
  Reader rr(bytes);
  rr.Need(kMagicLen + kChecksumLen, "magic");
  if (std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    if (std::memcmp(bytes.data(), "TVMDEVM", kMagicLen - 1) == 0) {
      rr.Fail("magic", "is \"" + bytes.substr(0, kMagicLen) +
                           "\", a format this runtime does not read (it reads \"" + kMagic +
                           "\"): export the library again with this version");
    }
    rr.Fail("magic",
            "is not \"" + std::string(kMagic) + "\": these bytes are not a TVM device module");
  }
  size_t body = bytes.size() - kChecksumLen;
  if (disk_cache::detail::GetU64(bytes, body) != disk_cache::Crc32(bytes.data(), body)) {
    TVM_FFI_THROW(ValueError) << "corrupted device module bytes: the checksum does not match the "
                              << bytes.size() << " bytes (they changed after they were written); "
                              << "export the library again";
  }
  return body;
}
}  // namespace

DeviceModuleSpec DeviceModuleSpec::Deserialize(const std::string& bytes) {
  Reader rr(bytes, CheckedBodySize(bytes));
  rr.Skip(kMagicLen);
  DeviceModuleSpec spec;
  spec.fmt = rr.Name("format");
  uint64_t nfunc = rr.Count("function count", 24);
  spec.functions.reserve(nfunc);
  for (uint64_t i = 0; i < nfunc; ++i) {
    FunctionInfo f;
    f.name = rr.Name("function name");
    if (f.name.empty()) rr.Fail("function name", "is empty");
    uint64_t nargs = rr.Count("argument count", 8);
    for (uint64_t k = 0; k < nargs; ++k) f.arg_types.push_back(rr.Name("argument dtype"));
    uint64_t ntags = rr.Count("launch tag count", 8);
    for (uint64_t k = 0; k < ntags; ++k) f.launch_param_tags.push_back(rr.Name("launch tag"));
    try {
      ParseLaunchTags(&f);
    } catch (const ffi::Error& err) {
      rr.Fail("launch tag", err.message());
    }
    ParseBufferArgs(&f);
    spec.functions.push_back(std::move(f));
  }
  spec.payload = rr.Str("payload");
  uint64_t nsrc = rr.Count("source count", 16);
  for (uint64_t i = 0; i < nsrc; ++i) {
    std::string k = rr.Name("source format");
    std::string v = rr.Str("source text");
    spec.sources.emplace_back(std::move(k), std::move(v));
  }
  if (!rr.AtEnd()) rr.Fail("end", "has trailing bytes");
  return spec;
}

std::string DeviceModuleSpec::Source(const std::string& want) const {
  for (const auto& kv : sources) {
    if (want.empty() || kv.first == want) return kv.second;
  }
  if (want == fmt) return payload;
  return "";
}

const FunctionInfo* DeviceModuleSpec::Find(const std::string& name) const {
  for (const FunctionInfo& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

int LaunchTagAxis(const std::string& tag) {
  char axis = 0;
  if (tag.size() == 10 && tag.compare(0, 9, "blockIdx.") == 0) axis = tag[9];
  if (tag.size() == 11 && tag.compare(0, 10, "threadIdx.") == 0) axis = tag[10];
  return (axis == 'x' || axis == 'y' || axis == 'z') ? axis - 'x' : -1;
}

/*! \brief Splits the ":<expression>" suffixes off `info`'s launch tags into launch_bounds and
 *  checks the tags: each known, none twice, each bound an ArgExpression. */
void ParseLaunchTags(FunctionInfo* info) {
  size_t n = info->launch_param_tags.size();
  info->launch_bounds.assign(n, ArgExpression());
  for (size_t i = 0; i < n; ++i) {
    std::string& tag = info->launch_param_tags[i];
    size_t colon = tag.find(':');
    if (colon == std::string::npos) continue;
    std::string text = tag.substr(colon + 1);
    ArgExpression bound = ArgExpression::Parse(*info, text);
    if (!bound.valid()) {
      TVM_FFI_THROW(ValueError) << "kernel " << info->name << ": launch tag '" << tag
                                << "' has a malformed bound (expected '<tag>:<expression>' of "
                                   "integers and integer scalar arguments $k)";
    }
    info->launch_bounds[i] = std::move(bound);
    tag.resize(colon);
  }
  const auto& tags = info->launch_param_tags;
  for (size_t i = 0; i < tags.size(); ++i) {
    if (tags[i] != "dyn_shmem" && LaunchTagAxis(tags[i]) < 0) {
      TVM_FFI_THROW(ValueError) << "kernel " << info->name << ": unknown launch tag '" << tags[i]
                                << "' (expected blockIdx.x/y/z, threadIdx.x/y/z or dyn_shmem)";
    }
    for (size_t j = 0; j < i; ++j) {
      if (tags[j] == tags[i]) {
        TVM_FFI_THROW(ValueError) << "kernel " << info->name << ": launch tag '" << tags[i]
                                  << "' appears twice (launch parameters " << j << " and " << i
                                  << ")";
      }
    }
  }
}

namespace {
/*! \brief A scalar argument of an integer type narrower than 64 bits must fit it (a kernel whose
 *  int64 indices were narrowed to int32 takes its sizes as int32). */
void CheckScalarArgument(const FunctionInfo& info, size_t index, ffi::AnyView value) {
  const BufferArgType& type = info.buffer_args[index];
  const std::string& dtype = info.arg_types[index];
  if (type.least > type.most) {  // not an integer: a float must be a number
    bool is_float = dtype.rfind("float", 0) == 0 || dtype.rfind("bfloat", 0) == 0;
    if (is_float && !value.try_cast<double>().has_value()) {
      TVM_FFI_THROW(TypeError) << "kernel " << info.name << ": argument " << index << " is "
                               << dtype << ", got a value of type " << value.GetTypeKey()
                               << "; pass a number";
    }
    return;
  }
  auto v = value.try_cast<int64_t>();
  if (!v.has_value()) {
    TVM_FFI_THROW(TypeError) << "kernel " << info.name << ": argument " << index << " is "
                             << info.arg_types[index] << ", got a value of type "
                             << value.GetTypeKey() << "; pass an integer";
  }
  if (*v >= type.least && *v <= type.most) return;
  TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << index << " is "
                            << info.arg_types[index] << ", got " << *v
                            << ", which is outside its range [" << type.least << ", " << type.most
                            << "]";
}
}  // namespace

LaunchConfig LaunchConfig::Decode(const FunctionInfo& info, ffi::PackedArgs args) {
  size_t nexpect = info.arg_types.size() + info.launch_param_tags.size();
  if (static_cast<size_t>(args.size()) != nexpect) {
    TVM_FFI_THROW(TypeError) << "kernel " << info.name << " expects " << info.arg_types.size()
                             << " arguments and " << info.launch_param_tags.size()
                             << " launch parameters, got " << args.size() << " values";
  }
  for (size_t i = 0; i < info.buffer_args.size(); ++i) CheckScalarArgument(info, i, args[i]);
  LaunchConfig cfg;
  size_t base = info.arg_types.size();
  for (size_t i = 0; i < info.launch_param_tags.size(); ++i) {
    const std::string& tag = info.launch_param_tags[i];
    auto given = args[base + i].try_cast<int64_t>();
    if (!given.has_value()) {
      TVM_FFI_THROW(TypeError) << "kernel " << info.name << ": launch parameter " << tag
                               << " (argument " << base + i
                               << ") must be an integer, got a value of "
                               << "type " << args[base + i].GetTypeKey();
    }
    int64_t v = *given;
    int axis = LaunchTagAxis(tag);
    int64_t bound = 0;
    bool bounded = i < info.launch_bounds.size() && info.launch_bounds[i].Evaluate(args, &bound);
    if (tag == "dyn_shmem") {
      if (v < 0 || v > kMaxLaunchValue) {
        TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": dynamic shared memory of " << v
                                  << " bytes is out of range";
      }
      if (bounded && v < bound) {
        TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": dynamic shared memory of " << v
                                  << " bytes is less than the " << bound
                                  << " bytes its code uses for these arguments";
      }
      cfg.dyn_shmem_bytes = v;
      continue;
    }
    if (axis < 0) {
      TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": unknown launch tag '" << tag << "'";
    }
    if (v < 0 || v > kMaxLaunchValue) {
      TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": launch extent " << tag << " = " << v
                                << " is out of range [0, " << kMaxLaunchValue << "]";
    }
    if (bounded && v > std::max<int64_t>(bound, 0)) {  // an empty launch is never refused
      int64_t constant = 0;
      TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": launch extent " << tag << " = " << v
                                << " exceeds " << bound
                                << (info.launch_bounds[i].IsConstant(&constant)
                                        ? ", the extent it was compiled for"
                                        : ", the extent its code was written for with these "
                                          "arguments")
                                << " (more would index past its buffers)";
    }
    (tag[0] == 'b' ? cfg.grid : cfg.block)[axis] = v;
  }
  return cfg;
}

/*! \brief Parse "handle:<dtype>:<size>" or a scalar type (see BufferArgType); anything not
 * understood is left unknown. */
BufferArgType ParseBufferArgType(const FunctionInfo& info, const std::string& type) {
  static const std::unordered_map<std::string, std::pair<int64_t, int64_t>> narrow_integers = {
      {"int8", {INT8_MIN, INT8_MAX}},    {"int16", {INT16_MIN, INT16_MAX}},
      {"int32", {INT32_MIN, INT32_MAX}}, {"uint8", {0, UINT8_MAX}},
      {"bool", {0, UINT8_MAX}},          {"uint16", {0, UINT16_MAX}},
      {"uint32", {0, UINT32_MAX}}};
  BufferArgType out;
  auto range = narrow_integers.find(type);
  if (range != narrow_integers.end()) std::tie(out.least, out.most) = range->second;
  if (!IsBufferArgType(type) || type.size() <= 7) return out;
  size_t colon = type.find(':', 7);
  std::string dtype = type.substr(7, colon == std::string::npos ? std::string::npos : colon - 7);
  if (!dtype.empty()) {
    try {
      out.dtype = ffi::StringToDLDataType(dtype);
    } catch (const ffi::Error&) {
      out.dtype = DLDataType{0xff, 0, 0};
    }
  }
  if (colon == std::string::npos) return out;
  out.size = ArgExpression::Parse(info, type.substr(colon + 1));
  return out;
}

LoopIterationBound ParseLoopIterationBound(const FunctionInfo& info, const std::string& text) {
  LoopIterationBound out;
  if (text == "?") out.kind = LoopIterationBound::kUnknown;
  if (text.empty() || text == "?") return out;
  out.expr = ArgExpression::Parse(info, text);
  out.kind = out.expr.valid() ? LoopIterationBound::kExpression : LoopIterationBound::kNone;
  return out;
}

void CheckLoopIterationBound(const char* kind, const FunctionInfo& info,
                             const LoopIterationBound& bound, ffi::PackedArgs args,
                             const std::string& device_name) {
  constexpr int64_t kLlvmpipeLoopLimit = 65535;  // LP_MAX_TGSI_LOOP_ITERATIONS, shared by all loops
  if (bound.kind == LoopIterationBound::kNone || device_name.compare(0, 8, "llvmpipe") != 0) return;
  if (bound.kind == LoopIterationBound::kUnknown) {  // trip counts read from memory: say so once
    static std::mutex mu;
    static std::set<std::string> warned;
    std::lock_guard<std::mutex> lock(mu);
    if (warned.insert(std::string(kind) + "/" + info.name).second) {
      std::fprintf(stderr,
                   "[tvm %s] warning: kernel %s runs loops whose trip counts cannot be bounded "
                   "before the launch (read from memory, or arguments subtracted or divided by), "
                   "so its iterations per thread are not checked; device '%s' (Mesa's llvmpipe) "
                   "stops a thread after %lld loop iterations without an error\n",
                   kind, info.name.c_str(), device_name.c_str(),
                   static_cast<long long>(kLlvmpipeLoopLimit));
    }
    return;
  }
  int64_t most = 0;
  if (!bound.expr.Evaluate(args, &most, /*magnitudes=*/true) || most < kLlvmpipeLoopLimit) {
    return;
  }
  TVM_FFI_THROW(RuntimeError)
      << kind << " kernel " << info.name << ": one thread may run up to " << most
      << " loop iterations with these arguments, but device '" << device_name
      << "' (Mesa's llvmpipe) stops a thread after " << kLlvmpipeLoopLimit
      << " loop iterations without an error, so the results would be wrong. Bind more of the "
         "loops to threads (less serial work per thread), or use another driver";
}

void ParseBufferArgs(FunctionInfo* info) {
  info->buffer_args.clear();
  for (const std::string& t : info->arg_types)
    info->buffer_args.push_back(ParseBufferArgType(*info, t));
}

namespace {
uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(half);
}

uint16_t FloatToBF16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
}  // namespace

KernelArgKind ParseKernelArgType(const FunctionInfo& info, size_t index) {
  static const std::unordered_map<std::string, KernelArgKind> table = {
      {"int8", KernelArgKind::kI8},       {"int16", KernelArgKind::kI16},
      {"int32", KernelArgKind::kI32},     {"int64", KernelArgKind::kI64},
      {"uint8", KernelArgKind::kU8},      {"bool", KernelArgKind::kU8},
      {"uint16", KernelArgKind::kU16},    {"uint32", KernelArgKind::kU32},
      {"uint64", KernelArgKind::kU64},    {"float16", KernelArgKind::kF16},
      {"bfloat16", KernelArgKind::kBF16}, {"float32", KernelArgKind::kF32},
      {"float64", KernelArgKind::kF64}};
  const std::string& type = info.arg_types.at(index);
  if (IsBufferArgType(type)) return KernelArgKind::kPointer;
  auto it = table.find(type);
  if (it == table.end()) {
    TVM_FFI_THROW(TypeError) << "kernel " << info.name << ": argument " << index
                             << " has unsupported type '" << type << "'";
  }
  return it->second;
}

size_t PackScalarArgument(KernelArgKind kind, const ffi::AnyView& v, void* slot) {
  auto put = [slot](auto x) {
    std::memcpy(slot, &x, sizeof(x));
    return sizeof(x);
  };
  switch (kind) {
    case KernelArgKind::kI8:
      return put(static_cast<int8_t>(v.cast<int64_t>()));
    case KernelArgKind::kU8:
      return put(static_cast<uint8_t>(v.cast<int64_t>()));
    case KernelArgKind::kI16:
      return put(static_cast<int16_t>(v.cast<int64_t>()));
    case KernelArgKind::kU16:
      return put(static_cast<uint16_t>(v.cast<int64_t>()));
    case KernelArgKind::kI32:
      return put(static_cast<int32_t>(v.cast<int64_t>()));
    case KernelArgKind::kU32:
      return put(static_cast<uint32_t>(v.cast<int64_t>()));
    case KernelArgKind::kI64:
      return put(v.cast<int64_t>());
    case KernelArgKind::kU64:
      return put(static_cast<uint64_t>(v.cast<int64_t>()));
    case KernelArgKind::kF16:
      return put(FloatToHalfBits(static_cast<float>(v.cast<double>())));
    case KernelArgKind::kBF16:
      return put(FloatToBF16Bits(static_cast<float>(v.cast<double>())));
    case KernelArgKind::kF32:
      return put(static_cast<float>(v.cast<double>()));
    case KernelArgKind::kF64:
      return put(v.cast<double>());
    case KernelArgKind::kPointer:
      return 0;
  }
  return 0;
}

int CheckLaunchTensors(const FunctionInfo& info, ffi::PackedArgs args, int device_type,
                       bool same_device) {
  int dev_id = -1;
  size_t nargs = std::min(info.arg_types.size(), static_cast<size_t>(args.size()));
  for (size_t i = 0; i < nargs; ++i) {
    if (!IsBufferArgType(info.arg_types[i])) continue;
    auto t = args[i].try_cast<DLTensor*>();
    if (!t.has_value()) continue;
    DLDevice d = (*t)->device;
    bool pinned = same_device && dev_id >= 0;
    if (d.device_type != device_type || (pinned && d.device_id != dev_id)) {
      std::string want = DeviceTypeName(device_type);
      TVM_FFI_THROW(ValueError) << want << " kernel " << info.name << ": argument " << i
                                << " is a tensor on " << DeviceTypeName(d.device_type) << ":"
                                << d.device_id << ", expected "
                                << (pinned ? want + ":" + std::to_string(dev_id) : "one on " + want)
                                << " (the device the kernel is launched on)";
    }
    CheckBufferArgument(info, i, *t, args);
    if (dev_id < 0) dev_id = d.device_id;
  }
  return dev_id;
}

void CheckBufferArgument(const FunctionInfo& info, size_t index, const DLTensor* t,
                         ffi::PackedArgs args) {
  if (!ffi::IsContiguous(*t)) {
    TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << index
                              << " is a non-contiguous tensor view; device kernels index compact "
                                 "row-major buffers (make it contiguous first)";
  }
  if (index >= info.buffer_args.size()) return;
  const BufferArgType& want = info.buffer_args[index];
  if (want.dtype.code != 0xff &&
      (t->dtype.code != want.dtype.code || t->dtype.bits != want.dtype.bits ||
       t->dtype.lanes != want.dtype.lanes)) {
    TVM_FFI_THROW(TypeError) << "kernel " << info.name << ": argument " << index
                             << " must be a buffer of " << ffi::DLDataTypeToString(want.dtype)
                             << ", got a tensor of " << ffi::DLDataTypeToString(t->dtype);
  }
  int64_t need = 0;
  // unknown (no size, a division by zero) or negative: not a size to judge
  if (!want.size.Evaluate(args, &need) || need < 0) return;
  int64_t have = 1;
  for (int i = 0; i < t->ndim; ++i) have *= t->shape[i];
  if (need > have) {
    TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << index << " holds "
                              << have << " elements, the kernel accesses " << need
                              << " for these arguments";
  }
}

void CheckBufferBytes(const FunctionInfo& info, size_t index, ffi::PackedArgs args,
                      uint64_t available) {
  if (index >= info.buffer_args.size()) return;
  const BufferArgType& want = info.buffer_args[index];
  int64_t need = 0;
  if (want.dtype.code == 0xff || !want.size.Evaluate(args, &need) || need <= 0) return;
  uint64_t element = (static_cast<uint64_t>(want.dtype.bits) * want.dtype.lanes + 7) / 8;
  uint64_t elements = static_cast<uint64_t>(need);
  if (element != 0 && elements > available / element) {
    TVM_FFI_THROW(ValueError) << "kernel " << info.name << ": argument " << index << " is "
                              << available << " bytes of device memory, the kernel accesses "
                              << need << " elements of " << ffi::DLDataTypeToString(want.dtype)
                              << " for these arguments";
  }
}

void* LiveHostBuffer(const HostMemoryDeviceAPI& api, const char* kind, const FunctionInfo& info,
                     ffi::PackedArgs args, size_t index) {
  BufferArgument arg = BufferArgumentOf(kind, info, args, index);
  void* address = arg.address();
  size_t live = api.LiveBytesFrom(address);
  uint64_t tensor_bytes = arg.tensor != nullptr ? ffi::GetDataSize(*arg.tensor) : 0;
  // a raw pointer outside the live memory counts as 0 bytes: refused below if the kernel reads any
  // (an empty buffer's pointer is such a pointer: its allocation holds no bytes)
  if (live == 0 && tensor_bytes != 0) {
    TVM_FFI_THROW(ValueError) << kind << " kernel " << info.name << ": argument " << index
                              << " is not in live " << kind << " device memory (allocate it on "
                              << "the " << kind << " device)";
  }
  if (tensor_bytes > live) {
    TVM_FFI_THROW(ValueError) << kind << " kernel " << info.name << ": argument " << index
                              << " is a tensor of " << tensor_bytes
                              << " bytes, but its memory holds " << live;
  }
  CheckBufferBytes(info, index, args, live);
  return address;
}

ffi::Bytes DeviceModuleBase::SaveToBytes() const { return ffi::Bytes(spec_.Serialize()); }

namespace {
/*! \brief Whether `bytes` is text Python decodes: well-formed UTF-8 (no overlong forms or
 *  surrogates) without NUL bytes. */
bool IsText(const std::string& bytes) {
  const size_t n = bytes.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t extra = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : 3;
    if (c == 0 || (c >= 0x80 && c < 0xC2) || c > 0xF4 || extra > n - 1 - i) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(bytes[i + k]) & 0xC0) != 0x80) return false;
    }
    unsigned char next = extra > 0 ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    if ((c == 0xE0 && next < 0xA0) || (c == 0xED && next >= 0xA0) || (c == 0xF0 && next < 0x90) ||
        (c == 0xF4 && next >= 0x90)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}
}  // namespace

ffi::String DeviceModuleBase::InspectSource(const ffi::String& format) const {
  std::string want(format);
  bool payload_is_text = IsText(spec_.payload);
  if (want.empty() || want == kind_) {  // the first text: a source, else a text payload
    if (!spec_.sources.empty()) return ffi::String(spec_.sources.front().second);
    return ffi::String(payload_is_text ? spec_.payload : "");
  }
  for (const auto& kv : spec_.sources) {
    if (kv.first == want) return ffi::String(kv.second);
  }
  if (want == spec_.fmt && payload_is_text) return ffi::String(spec_.payload);
  std::ostringstream formats;
  for (const auto& kv : spec_.sources) formats << "'" << kv.first << "', ";
  bool payload_named = std::any_of(spec_.sources.begin(), spec_.sources.end(),
                                   [&](const auto& kv) { return kv.first == spec_.fmt; });
  if (payload_is_text && !payload_named) formats << "'" << spec_.fmt << "', ";
  std::string known = formats.str();
  known = known.empty() ? "none" : known.substr(0, known.size() - 2);
  if (want == spec_.fmt) {
    TVM_FFI_THROW(ValueError) << "the '" << want << "' code of this " << kind_
                              << " module is binary (" << spec_.payload.size()
                              << " bytes), not text; inspect_source shows its "
                              << "text formats: " << known;
  }
  TVM_FFI_THROW(ValueError) << "this " << kind_ << " module has no format '" << want
                            << "'; inspect_source shows its text formats: " << known
                            << " ('' is the first)";
}

ffi::Array<ffi::String> DeviceModuleBase::GetWriteFormats() const {
  ffi::Array<ffi::String> out;
  for (const auto& kv : spec_.sources) out.push_back(kv.first);
  return out;
}

namespace {
class FallbackModuleObj : public DeviceModuleBase {
 public:
  FallbackModuleObj(std::string kind, DeviceModuleSpec spec, std::string reason)
      : DeviceModuleBase(std::move(kind), std::move(spec)), reason_(std::move(reason)) {}

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    const FunctionInfo* info = spec_.Find(std::string(name));
    if (info == nullptr) return std::nullopt;
    std::string msg = "cannot run " + kind_ + " kernel '" + info->name + "': this is a fallback " +
                      kind_ + " module (code generated, but no runtime to run it). " + reason_;
    return ffi::Function::FromPacked(
        [msg](ffi::PackedArgs, ffi::Any*) { TVM_FFI_THROW(RuntimeError) << msg; });
  }
  int GetPropertyMask() const final { return ffi::Module::kBinarySerializable; }

 private:
  std::string reason_;
};

std::vector<std::string> StrList(const ffi::Any& v) {
  std::vector<std::string> out;
  for (const ffi::Any& x : v.cast<ffi::Array<ffi::Any>>()) out.push_back(x.cast<ffi::String>());
  return out;
}
}  // namespace

ffi::Module MakeFallbackModule(const std::string& kind, DeviceModuleSpec spec,
                               const std::string& reason) {
  return ffi::Module(ffi::make_object<FallbackModuleObj>(kind, std::move(spec), reason));
}

DeviceModuleSpec SpecFromCreateArgs(ffi::PackedArgs args) {
  if (args.size() != 4) {
    TVM_FFI_THROW(TypeError)
        << "device module factory expects (fmt, functions, payload, sources), got " << args.size()
        << " arguments";
  }
  DeviceModuleSpec spec;
  spec.fmt = args[0].cast<ffi::String>();
  for (const ffi::Any& f : args[1].cast<ffi::Array<ffi::Any>>()) {
    auto items = f.cast<ffi::Array<ffi::Any>>();
    if (items.size() != 3)
      TVM_FFI_THROW(TypeError) << "function entry must be [name, arg_types, tags]";
    FunctionInfo info;
    info.name = items[0].cast<ffi::String>();
    info.arg_types = StrList(items[1]);
    info.launch_param_tags = StrList(items[2]);
    ParseLaunchTags(&info);
    ParseBufferArgs(&info);
    spec.functions.push_back(std::move(info));
  }
  if (auto b = args[2].try_cast<ffi::Bytes>()) {
    spec.payload = std::string(b->data(), b->size());
  } else {
    spec.payload = args[2].cast<ffi::String>();
  }
  for (const ffi::Any& s : args[3].cast<ffi::Array<ffi::Any>>()) {
    auto kv = StrList(s);
    if (kv.size() != 2) TVM_FFI_THROW(TypeError) << "source entry must be [fmt, text]";
    spec.sources.emplace_back(kv[0], kv[1]);
  }
  return spec;
}

void RegisterDeviceModuleKind(const std::string& kind,
                              std::function<ffi::Module(DeviceModuleSpec)> make) {
  ffi::Function::SetGlobal("ffi.Module.create." + kind,
                           ffi::Function::FromPacked([make](ffi::PackedArgs args, ffi::Any* rv) {
                             *rv = make(SpecFromCreateArgs(args));
                           }),
                           /*override=*/true);
  ffi::Function::SetGlobal(
      "ffi.Module.load_from_bytes." + kind, ffi::Function::FromTyped([make](ffi::Bytes bytes) {
        return make(DeviceModuleSpec::Deserialize(std::string(bytes.data(), bytes.size())));
      }),
      /*override=*/true);
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def_packed("runtime.DeviceModuleSerialize",
                  [](ffi::PackedArgs args, ffi::Any* rv) {
                    *rv = ffi::Bytes(SpecFromCreateArgs(args).Serialize());
                  })
      .def("runtime.DeviceModuleDeserialize",
           [](ffi::Bytes bytes) {
             DeviceModuleSpec spec =
                 DeviceModuleSpec::Deserialize(std::string(bytes.data(), bytes.size()));
             ffi::Array<ffi::Any> funcs;
             for (const FunctionInfo& f : spec.functions) {
               ffi::Array<ffi::Any> types(f.arg_types.begin(), f.arg_types.end());
               ffi::Array<ffi::Any> tags;
               for (size_t i = 0; i < f.launch_param_tags.size(); ++i)
                 tags.push_back(TagWithBound(f, i));
               funcs.push_back(ffi::Array<ffi::Any>{ffi::String(f.name), types, tags});
             }
             ffi::Array<ffi::Any> sources;
             for (const auto& kv : spec.sources) {
               sources.push_back(
                   ffi::Array<ffi::Any>{ffi::String(kv.first), ffi::String(kv.second)});
             }
             return ffi::Array<ffi::Any>{ffi::String(spec.fmt), funcs, ffi::Bytes(spec.payload),
                                         sources};
           })
      .def_packed("runtime.FallbackModuleCreate",
                  [](ffi::PackedArgs args, ffi::Any* rv) {
                    // (kind, reason, fmt, functions, payload, sources)
                    if (args.size() != 6) {
                      TVM_FFI_THROW(TypeError)
                          << "runtime.FallbackModuleCreate expects (kind, reason, fmt, functions, "
                             "payload, sources), got "
                          << args.size() << " arguments";
                    }
                    std::string kind = args[0].cast<ffi::String>();
                    std::string reason = args[1].cast<ffi::String>();
                    *rv = MakeFallbackModule(kind, SpecFromCreateArgs(args.Slice(2)), reason);
                  })
      .def("runtime.ModuleSaveToBytes", [](ffi::Module mod) { return mod->SaveToBytes(); })
      .def("runtime.FallbackModuleLoadFromBytes",
           [](ffi::String kind, ffi::String reason, ffi::Bytes bytes) {
             return MakeFallbackModule(
                 kind, DeviceModuleSpec::Deserialize(std::string(bytes.data(), bytes.size())),
                 reason);
           })
      // "" when the bytes are an ELF64 object or CUDA fatbin wholly inside themselves, else why not
      .def("runtime.CodeImageProblem", [](ffi::Bytes image) {
        return code_image::Problem(std::string(image.data(), image.size()));
      });
}

}  // namespace runtime
}  // namespace tvm
