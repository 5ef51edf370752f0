/*!
 * \file metal_runtime.mm
 * \brief libtvm_runtime_metal on macOS: the kDLMetal DeviceAPI (buffers in shared storage, one
 *        command queue per device) and "metal" device modules (MSL compiled with
 *        newLibraryWithSource when first used on a device, one pipeline per kernel, dispatched
 *        with dispatchThreadgroups and waited for).
 *
 * Launch arguments follow the code generator (tvm_backend_metal/codegen.py): buffers at
 * [[buffer(0..k-1)]] in parameter order, then every scalar packed into one struct (natural
 * alignment) at [[buffer(k)]].
 */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/runtime/base.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/device_module.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace tvm_backend_metal {
namespace {

namespace ffi = tvm::ffi;
using tvm::runtime::DeviceModuleSpec;
using tvm::runtime::FunctionInfo;
using tvm::runtime::KernelArgKind;
using tvm::runtime::LaunchConfig;

/*! \brief The Metal devices and a command queue for each, found once. */
struct Devices {
  std::vector<id<MTLDevice>> devices;
  std::vector<id<MTLCommandQueue>> queues;

  static Devices& Get() {
    static Devices* d = [] {
      auto* out = new Devices();
      @autoreleasepool {
        NSArray<id<MTLDevice>>* all = MTLCopyAllDevices();
        for (id<MTLDevice> dev in all) {
          out->devices.push_back(dev);
          out->queues.push_back([dev newCommandQueue]);
        }
      }
      return out;
    }();
    return *d;
  }

  id<MTLDevice> At(int id) {
    if (id < 0 || id >= static_cast<int>(devices.size())) {
      TVM_FFI_THROW(ValueError) << "metal(" << id << ") does not exist: this Mac has "
                                << devices.size() << " Metal device(s)";
    }
    return devices[id];
  }
};

/*! \brief Device memory is an MTLBuffer in shared storage; its contents pointer is the handle. */
class BufferTable {
 public:
  void Add(void* ptr, id<MTLBuffer> buf) {
    std::lock_guard<std::mutex> lock(mu_);
    table_.emplace_back(ptr, buf);
  }
  id<MTLBuffer> Find(const void* ptr, size_t* offset) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [base, buf] : table_) {
      const char* b = static_cast<const char*>(base);
      if (ptr >= base && static_cast<const char*>(ptr) < b + [buf length]) {
        *offset = static_cast<const char*>(ptr) - b;
        return buf;
      }
    }
    return nil;
  }
  void Remove(void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < table_.size(); ++i) {
      if (table_[i].first == ptr) {
        table_.erase(table_.begin() + i);
        return;
      }
    }
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<void*, id<MTLBuffer>>> table_;
};

BufferTable& Buffers() {
  static BufferTable* t = new BufferTable();
  return *t;
}

class MetalDeviceAPI final : public tvm::runtime::DeviceAPI {
 public:
  ffi::Any GetAttr(DLDevice dev, const std::string& key) final {
    Devices& all = Devices::Get();
    int n = static_cast<int>(all.devices.size());
    if (key == "exist") return dev.device_id >= 0 && dev.device_id < n;
    if (dev.device_id < 0 || dev.device_id >= n) return ffi::Any();
    id<MTLDevice> d = all.devices[dev.device_id];
    if (key == "name") return ffi::String([[d name] UTF8String]);
    if (key == "max_threads_per_block") return static_cast<int64_t>([d maxThreadsPerThreadgroup].width);
    if (key == "warp_size") return int64_t{32};
    if (key == "max_shared_memory_per_block") return static_cast<int64_t>([d maxThreadgroupMemoryLength]);
    if (key == "total_global_memory") return static_cast<int64_t>([d recommendedMaxWorkingSetSize]);
    if (key == "unavailable_reason") return ffi::String("");
    return ffi::Any();
  }

  void* AllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment) final {
    id<MTLBuffer> buf = [Devices::Get().At(dev.device_id) newBufferWithLength:(nbytes ? nbytes : 1)
                                                                      options:MTLResourceStorageModeShared];
    if (buf == nil) {
      TVM_FFI_THROW(RuntimeError) << "Metal: allocating " << nbytes << " bytes on metal("
                                  << dev.device_id << ") failed";
    }
    void* ptr = [buf contents];
    Buffers().Add(ptr, buf);
    return ptr;
  }

  void FreeDataSpace(DLDevice dev, void* ptr) final { Buffers().Remove(ptr); }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice dev_from, DLDevice dev_to,
                      TVMFFIStreamHandle stream) final {
    // Shared storage: the memory is the host's once the queue is idle.
    StreamSync(dev_from.device_type == kDLMetal ? dev_from : dev_to, stream);
    std::memcpy(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset,
                nbytes);
  }

  void StreamSync(DLDevice dev, TVMFFIStreamHandle stream) final {
    @autoreleasepool {
      id<MTLCommandBuffer> cb = [Devices::Get().queues.at(dev.device_id) commandBuffer];
      [cb commit];
      [cb waitUntilCompleted];
    }
  }
};

class MetalModuleObj final : public tvm::runtime::KernelModuleBase {
 public:
  explicit MetalModuleObj(DeviceModuleSpec spec) : KernelModuleBase("metal", std::move(spec)) {
    if (spec_.fmt != "metal") {
      TVM_FFI_THROW(ValueError) << "metal module: unsupported payload format '" << spec_.fmt
                                << "' (expected 'metal', MSL source)";
    }
    pipelines_.resize(spec_.functions.size());
  }

 protected:
  void Launch(size_t index, ffi::PackedArgs args) final {
    const FunctionInfo& info = spec_.functions[index];
    LaunchConfig cfg = LaunchConfig::Decode(info, args);
    int dev_id = tvm::runtime::CheckLaunchTensors(info, args, kDLMetal, true);
    if (dev_id < 0) dev_id = 0;
    if (cfg.empty()) return;
    id<MTLComputePipelineState> pipeline = Pipeline(index, dev_id);
    @autoreleasepool {
      id<MTLCommandBuffer> cb = [Devices::Get().queues.at(dev_id) commandBuffer];
      id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder];
      [enc setComputePipelineState:pipeline];
      std::vector<char> scalars;
      NSUInteger binding = 0;
      for (size_t i = 0; i < info.arg_types.size(); ++i) {
        KernelArgKind kind = tvm::runtime::ParseKernelArgType(info, i);
        if (kind == KernelArgKind::kPointer) {
          const void* ptr = nullptr;
          if (auto t = args[i].try_cast<DLTensor*>()) {
            ptr = static_cast<const char*>((*t)->data) + (*t)->byte_offset;
          } else {
            ptr = args[i].cast<void*>();
          }
          size_t offset = 0;
          id<MTLBuffer> buf = Buffers().Find(ptr, &offset);
          if (buf == nil) {
            TVM_FFI_THROW(ValueError) << "metal kernel " << info.name << ": argument " << i
                                      << " is not Metal device memory";
          }
          [enc setBuffer:buf offset:offset atIndex:binding++];
          continue;
        }
        size_t n = tvm::runtime::KernelArgBytes(kind);
        size_t at = (scalars.size() + n - 1) / n * n;
        scalars.resize(at + n);
        uint64_t bits = 0;
        tvm::runtime::PackScalarArgument(kind, args[i], &bits);
        std::memcpy(scalars.data() + at, &bits, n);
      }
      if (!scalars.empty()) [enc setBytes:scalars.data() length:scalars.size() atIndex:binding];
      [enc dispatchThreadgroups:MTLSizeMake(cfg.grid[0], cfg.grid[1], cfg.grid[2])
          threadsPerThreadgroup:MTLSizeMake(cfg.block[0], cfg.block[1], cfg.block[2])];
      [enc endEncoding];
      [cb commit];
      [cb waitUntilCompleted];
      if ([cb error] != nil) {
        TVM_FFI_THROW(RuntimeError) << "Metal: kernel " << info.name << " failed: "
                                    << [[[cb error] localizedDescription] UTF8String];
      }
    }
  }

 private:
  id<MTLComputePipelineState> Pipeline(size_t index, int dev_id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& per_device = pipelines_[index];
    if (per_device.size() <= static_cast<size_t>(dev_id)) per_device.resize(dev_id + 1, nil);
    if (per_device[dev_id] != nil) return per_device[dev_id];
    id<MTLDevice> device = Devices::Get().At(dev_id);
    if (libraries_.size() <= static_cast<size_t>(dev_id)) libraries_.resize(dev_id + 1, nil);
    if (libraries_[dev_id] == nil) {
      NSError* error = nil;
      MTLCompileOptions* options = [MTLCompileOptions new];
      options.fastMathEnabled = NO;  // the precision the other backends give
      NSString* source = [NSString stringWithUTF8String:spec_.payload.c_str()];
      libraries_[dev_id] = [device newLibraryWithSource:source options:options error:&error];
      if (libraries_[dev_id] == nil) {
        TVM_FFI_THROW(RuntimeError) << "Metal rejected the generated MSL: "
                                    << [[error localizedDescription] UTF8String];
      }
    }
    const std::string& name = spec_.functions[index].name;
    id<MTLFunction> fn = [libraries_[dev_id] newFunctionWithName:[NSString stringWithUTF8String:name.c_str()]];
    if (fn == nil) TVM_FFI_THROW(RuntimeError) << "Metal: kernel " << name << " is not in the library";
    NSError* error = nil;
    per_device[dev_id] = [device newComputePipelineStateWithFunction:fn error:&error];
    if (per_device[dev_id] == nil) {
      TVM_FFI_THROW(RuntimeError) << "Metal: no pipeline for kernel " << name << ": "
                                  << [[error localizedDescription] UTF8String];
    }
    return per_device[dev_id];
  }

  std::mutex mu_;
  std::vector<id<MTLLibrary>> libraries_;
  std::vector<std::vector<id<MTLComputePipelineState>>> pipelines_;
};

int MetalBackendInit(char* err, int err_len) {
  if (Devices::Get().devices.empty()) {
    return tvm::runtime::BackendInitFailed(err, err_len, "this Mac reports no Metal device");
  }
  static MetalDeviceAPI* api = new MetalDeviceAPI();
  tvm::runtime::DeviceAPI::Register(kDLMetal, api);
  tvm::runtime::RegisterDeviceModuleClass<MetalModuleObj>("metal");
  return 0;
}

}  // namespace
}  // namespace tvm_backend_metal

TVM_BACKEND_DEFINE_ENTRY(tvm_backend_metal::MetalBackendInit)
