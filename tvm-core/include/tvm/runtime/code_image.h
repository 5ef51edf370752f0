/*!
 * \file tvm/runtime/code_image.h
 * \brief Checks that a code image (an ELF64 object such as a cubin or an AMDGPU code object, or a
 *        CUDA fatbin) lies wholly inside its bytes before a driver sees it.
 *
 * Driver calls such as cuModuleLoadData and hipModuleLoadData take a pointer without a size and
 * find the image's extent in its own headers, so a truncated image makes them read past the
 * buffer. The check reads only those headers: every table and every section or segment that
 * holds file bytes must end inside the image. It judges extents only; whether the code suits the
 * device stays the driver's decision.
 */
#ifndef TVM_RUNTIME_CODE_IMAGE_H_
#define TVM_RUNTIME_CODE_IMAGE_H_

#include <tvm/ffi/error.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace tvm {
namespace runtime {
namespace code_image {

/*! \brief The little-endian unsigned integer of `n` bytes at `pos` (the caller checked bounds). */
inline uint64_t ReadLE(const std::string& bytes, uint64_t pos, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[pos + i])) << (8 * i);
  }
  return v;
}

/*! \brief Whether [offset, offset + count * width) lies inside `size` bytes (overflow-safe). */
inline bool Inside(uint64_t offset, uint64_t count, uint64_t width, uint64_t size) {
  if (offset > size) return false;
  return width == 0 || count <= (size - offset) / width;
}

/*! \brief "" when the ELF64 `image` holds its tables, sections and segments, else what does not. */
inline std::string ElfProblem(const std::string& image) {
  const uint64_t size = image.size();
  if (size < 64) return "it ends inside the ELF header (" + std::to_string(size) + " bytes)";
  if (image[4] != 2 || image[5] != 1) return "it is not a little-endian 64-bit ELF object";
  struct Table {
    const char* name;
    uint64_t offset, count, entry, min_entry, start_field, size_field;
  };
  const Table tables[] = {
      {"program header", ReadLE(image, 0x20, 8), ReadLE(image, 0x38, 2), ReadLE(image, 0x36, 2), 56,
       0x08, 0x20},
      {"section", ReadLE(image, 0x28, 8), ReadLE(image, 0x3C, 2), ReadLE(image, 0x3A, 2), 64, 0x18,
       0x20},
  };
  for (const Table& t : tables) {
    if (t.count == 0) continue;
    if (t.entry < t.min_entry) return std::string("its ") + t.name + " entries are too small";
    if (!Inside(t.offset, t.count, t.entry, size)) {
      return std::string("its ") + t.name + " table (" + std::to_string(t.count) + " entries at " +
             std::to_string(t.offset) + ") ends past its " + std::to_string(size) + " bytes";
    }
    for (uint64_t i = 0; i < t.count; ++i) {
      uint64_t at = t.offset + i * t.entry;
      bool holds_bytes = t.start_field == 0x08 || ReadLE(image, at + 4, 4) != 8;  // SHT_NOBITS
      uint64_t start = ReadLE(image, at + t.start_field, 8);
      uint64_t length = ReadLE(image, at + t.size_field, 8);
      if (holds_bytes && !Inside(start, length, 1, size)) {
        return std::string(t.name) + " " + std::to_string(i) + " (" + std::to_string(length) +
               " bytes at " + std::to_string(start) + ") ends past its " + std::to_string(size) +
               " bytes";
      }
    }
  }
  return "";
}

/*! \brief "" when the CUDA fatbin `image` holds its entries, else what does not. */
inline std::string FatbinProblem(const std::string& image) {
  const uint64_t size = image.size();
  if (size < 16) return "it ends inside the fatbin header";
  uint64_t header = ReadLE(image, 6, 2), body = ReadLE(image, 8, 8);
  if (header < 16 || !Inside(header, body, 1, size)) {
    return "its " + std::to_string(body) + " bytes of entries end past its " +
           std::to_string(size) + " bytes";
  }
  for (uint64_t at = header, end = header + body; at < end;) {
    if (!Inside(at, 16, 1, end)) return "an entry header at " + std::to_string(at) + " is cut off";
    uint64_t entry_header = ReadLE(image, at + 4, 4), payload = ReadLE(image, at + 8, 8);
    if (entry_header < 16 || !Inside(at + entry_header, payload, 1, end)) {
      return "the entry at " + std::to_string(at) + " ends past the fatbin's entries";
    }
    at += entry_header + payload;
  }
  return "";
}

/*! \brief "" when `image` is an ELF64 object or a CUDA fatbin that lies inside its bytes, else
 *  why it cannot be handed to a driver. */
inline std::string Problem(const std::string& image) {
  if (image.size() >= 4 && std::memcmp(image.data(),
                                       "\x7f"
                                       "ELF",
                                       4) == 0) {
    return ElfProblem(image);
  }
  if (image.size() >= 4 && ReadLE(image, 0, 4) == 0xBA55ED50u) return FatbinProblem(image);
  return "it is neither an ELF object nor a CUDA fatbin";
}

/*!
 * \brief Throws a ValueError naming `what` (e.g. "the cubin of cuda module 'm'") when `image` is
 *        damaged or not a code image (see Problem).
 */
inline void Check(const std::string& image, const std::string& what) {
  std::string problem = Problem(image);
  if (!problem.empty()) {
    TVM_FFI_THROW(ValueError) << what << " (" << image.size() << " bytes) is damaged or not a "
                              << "code image: " << problem << "; compile the module again";
  }
}

}  // namespace code_image
}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_CODE_IMAGE_H_
