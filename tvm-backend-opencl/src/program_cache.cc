/*!
 * \file program_cache.cc
 * \brief On-disk program-binary cache (see program_cache.h).
 */
#include "program_cache.h"

#include <tvm/runtime/disk_cache.h>

#include <cstdlib>
#include <sstream>

namespace tvm_backend_opencl {

namespace ffi = ::tvm::ffi;
using namespace ::tvm::runtime;  // NOLINT(build/namespaces): the backend implements its interfaces

namespace {
std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}
}  // namespace

CacheStats& GlobalCacheStats() {
  static CacheStats stats;
  return stats;
}

std::string CacheDir() {
  std::string flag = Env("TVM_OPENCL_CACHE");
  if (flag == "0" || flag == "off" || flag == "false" || flag == "no") return "";
  std::string dir = Env("TVM_OPENCL_CACHE_DIR");
  return dir.empty() ? disk_cache::Dir("opencl") : dir;
}

std::string CachePath(const std::string& source, const std::string& options,
                      const DeviceInfo& dev) {
  std::string dir = CacheDir();
  if (dir.empty()) return "";
  std::ostringstream key;
  key << "tvm-opencl-cache-v2\n"
      << dev.platform_name << '\n'
      << dev.name << '\n'
      << dev.version << '\n'
      << dev.driver_version << '\n'
      << options << '\n'
      << source;
  return dir + "/" + disk_cache::Key(key.str()) + ".clbin";
}

bool CacheLoad(const std::string& path, std::string* binary) {
  bool corrupted = false;
  bool ok = disk_cache::Read(path, binary, &corrupted);
  if (corrupted) ++GlobalCacheStats().rejected;
  return ok;
}

void CacheStore(const std::string& path, const std::string& binary) {
  if (disk_cache::Write(path, binary)) ++GlobalCacheStats().stores;
}

std::string ProgramBinaryOf(cl_program prog) {
  size_t size = 0;
  if (Get().clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) !=
          CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string binary(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(&binary[0]);
  if (Get().clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS) {
    return "";
  }
  return binary;
}

}  // namespace tvm_backend_opencl
