/*!
 * \file tvm/runtime/disk_cache.h
 * \brief The on-disk cache every backend's runtime uses for compiled programs, with the same rules
 *        as the Python side (tvm/_cache.py): `$TVM_CACHE_DIR/<name>`, else
 *        `$XDG_CACHE_HOME/tvm/<name>`, else `~/.cache/tvm/<name>`; `TVM_CACHE_DIR=0` (or off,
 *        none, false, no) turns caching off.
 *
 * Entries carry an integrity header (8-byte magic "TVMCACH1", then the payload's length and its
 * CRC-32 as little-endian u64; tvm._cache.read_entry/write_entry use the same format): a truncated,
 * bit-flipped or foreign file is never handed to a driver; it is removed and the caller rebuilds
 * from source. Writes are atomic (temporary file, then rename) and never make a file writable by
 * group or others. Every failure is silent: a cache can only cost a rebuild.
 */
#ifndef TVM_RUNTIME_DISK_CACHE_H_
#define TVM_RUNTIME_DISK_CACHE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tvm/runtime/env_setting.h>

#include <cerrno>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

namespace tvm {
namespace runtime {
namespace disk_cache {

/*! \brief 64-bit FNV-1a of `data` from offset basis `basis`. */
inline uint64_t Fnv1a(const std::string& data, uint64_t basis = 0xcbf29ce484222325ULL) {
  uint64_t h = basis;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/*! \brief A 128-bit hex key of `data` (two FNV-1a bases), for entry file names. */
inline std::string Key(const std::string& data) {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(Fnv1a(data, 0xcbf29ce484222325ULL)),
                static_cast<unsigned long long>(Fnv1a(data, 0x84222325cbf29ce4ULL)));
  return buf;
}

/*! \brief `path` with a leading "~" or "~/" read as $HOME, as a shell (and Python's cache) does. */
inline std::string ExpandHome(const std::string& path) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0' || path.empty() || path[0] != '~') return path;
  return path.size() == 1 || path[1] == '/' ? std::string(home) + path.substr(1) : path;
}

/*! \brief The folder of cache `name` ("opencl"), or "" when caching is off. */
inline std::string Dir(const std::string& name) {
  auto env = [](const char* var) {
    const char* v = std::getenv(var);
    return std::string(v != nullptr ? v : "");
  };
  std::string root = SettingText(std::getenv("TVM_CACHE_DIR"));  // as Python reads it
  std::string word = SettingWord(root.c_str());
  for (const char* off : {"0", "off", "none", "false", "no"}) {
    if (word == off) return "";
  }
  if (!root.empty()) return ExpandHome(root) + "/" + name;
  std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + "/tvm/" + name;
  std::string home = env("HOME");
  return home.empty() ? "" : home + "/.cache/tvm/" + name;
}

/*! \brief CRC-32 (IEEE 802.3, as zlib.crc32) of the `n` bytes at `data`. */
inline uint32_t Crc32(const char* data, size_t n) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc = table[(crc ^ static_cast<unsigned char>(data[i])) & 0xff] ^ (crc >> 8);
  }
  return crc ^ 0xffffffffu;
}

/*! \brief CRC-32 of `data`. */
inline uint32_t Crc32(const std::string& data) { return Crc32(data.data(), data.size()); }

namespace detail {
constexpr char kMagic[8] = {'T', 'V', 'M', 'C', 'A', 'C', 'H', '1'};
inline void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline uint64_t GetU64(const std::string& in, size_t pos) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  return v;
}

enum class FileRead { kRead, kAbsent, kNotRegular };

/*! \brief Reads the regular file `path` into `data`. Opening does not block, and a directory,
 *  FIFO or device at the path is reported (kNotRegular) before anything is read from it. */
inline FileRead ReadRegularFile(const std::string& path, std::string* data) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return FileRead::kAbsent;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return FileRead::kNotRegular;
  }
  data->clear();
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n > 0) {
      data->append(chunk, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fd);
  return FileRead::kRead;
}

}  // namespace detail

/*! \brief `payload` behind the integrity header (magic, size, CRC-32) that Unseal checks. */
inline std::string Seal(const std::string& payload) {
  std::string sealed(detail::kMagic, sizeof(detail::kMagic));
  detail::PutU64(&sealed, payload.size());
  detail::PutU64(&sealed, Crc32(payload));
  return sealed + payload;
}

/*! \brief The payload of a Seal'ed `sealed` into `payload`; false (and `payload` empty) when the
 *  header is missing or the bytes are truncated, extended or changed. */
inline bool Unseal(const std::string& sealed, std::string* payload) {
  constexpr size_t kHeader = sizeof(detail::kMagic) + 16;
  payload->clear();
  if (sealed.size() < kHeader ||
      std::memcmp(sealed.data(), detail::kMagic, sizeof(detail::kMagic)) != 0 ||
      detail::GetU64(sealed, 8) != sealed.size() - kHeader ||
      Crc32(sealed.data() + kHeader, sealed.size() - kHeader) != detail::GetU64(sealed, 16)) {
    return false;
  }
  *payload = sealed.substr(kHeader);
  return !payload->empty();
}

/*!
 * \brief Reads the entry at `path` into `payload`. False when it is absent, unreadable or fails
 *        the integrity check (then the file is removed, so the next store replaces it, and
 *        `*corrupted` is set when given).
 */
inline bool Read(const std::string& path, std::string* payload, bool* corrupted = nullptr) {
  if (path.empty()) return false;
  std::string data;
  switch (detail::ReadRegularFile(path, &data)) {
    case detail::FileRead::kAbsent:
      return false;
    case detail::FileRead::kNotRegular:
      data.clear();  // a FIFO or device there: removed below, never read (it could block)
      break;
    case detail::FileRead::kRead:
      break;
  }
  if (Unseal(data, payload)) return true;
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (corrupted != nullptr) *corrupted = true;
  return false;
}

/*! \brief Stores `payload` at `path` atomically with its integrity header (best effort). */
inline bool Write(const std::string& path, const std::string& payload) {
  if (path.empty() || payload.empty()) return false;
  std::error_code ec;
  std::filesystem::path target(path);
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) return false;
  std::string file = Seal(payload);
  std::ostringstream tmp_name;  // short: the entry's name plus a suffix could pass NAME_MAX
  tmp_name << ".tvm-" << getpid() << "-" << std::this_thread::get_id() << ".tmp";
  std::string tmp = (target.parent_path() / tmp_name.str()).string();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  struct stat st;
  if (::stat(tmp.c_str(), &st) == 0) ::chmod(tmp.c_str(), st.st_mode & 0755);
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace disk_cache
}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_DISK_CACHE_H_
