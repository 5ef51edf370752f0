/*!
 * \file program_cache.cc
 * \brief On-disk program-binary cache (see program_cache.h).
 */
#include "program_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace tvm {
namespace runtime {
namespace opencl {

namespace {
/*! \brief 64-bit FNV-1a with a caller-chosen offset basis (two bases give a 128-bit key). */
uint64_t Fnv1a(const std::string& data, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

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
  if (!dir.empty()) return dir;
  // The same rule as every TVM cache (tvm/_cache.py): $TVM_CACHE_DIR/opencl, "0"/"off" disables.
  std::string root = Env("TVM_CACHE_DIR");
  if (root == "0" || root == "off" || root == "none" || root == "false" || root == "no") return "";
  if (!root.empty()) return root + "/opencl";
  std::string xdg = Env("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + "/tvm/opencl";
  std::string home = Env("HOME");
  if (!home.empty()) return home + "/.cache/tvm/opencl";
  return "";
}

std::string CachePath(const std::string& source, const std::string& options,
                      const DeviceInfo& dev) {
  std::string dir = CacheDir();
  if (dir.empty()) return "";
  std::ostringstream key;
  key << "tvm-opencl-cache-v1\n"
      << dev.platform_name << '\n'
      << dev.name << '\n'
      << dev.version << '\n'
      << dev.driver_version << '\n'
      << options << '\n'
      << source;
  std::string k = key.str();
  return dir + "/" + Hex(Fnv1a(k, 0xcbf29ce484222325ULL)) + Hex(Fnv1a(k, 0x84222325cbf29ce4ULL)) +
         ".clbin";
}

bool CacheLoad(const std::string& path, std::string* binary) {
  if (path.empty()) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream data;
  data << in.rdbuf();
  if (!in.good() && !in.eof()) return false;
  *binary = data.str();
  return !binary->empty();
}

void CacheStore(const std::string& path, const std::string& binary) {
  if (path.empty() || binary.empty()) return;
  std::error_code ec;
  std::filesystem::path target(path);
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) return;
  // Write next to the target, then rename: readers never see a partial file.
  std::string tmp = path + ".tmp" + std::to_string(static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(binary.data(), static_cast<std::streamsize>(binary.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return;
  }
  ++GlobalCacheStats().stores;
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

}  // namespace opencl
}  // namespace runtime
}  // namespace tvm
