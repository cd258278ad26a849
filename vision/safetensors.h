// Safetensors files: a validated header and memory-mapped tensor bytes. Every header is checked
// before any tensor byte is used: a hostile or damaged file is an error naming the file (and the
// tensor), never a crash. Immutable after Open; concurrent reads are safe.
// The checks: vision/README.md, "Safetensors".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace reel::vision {

// Element types. Reel computes with the first three; the others are recognised so that their
// byte ranges can be checked.
enum class DType {
  kF32,
  kF16,
  kBF16,
  kF64,
  kI64,
  kU64,
  kI32,
  kU32,
  kI16,
  kU16,
  kI8,
  kU8,
  kBool,
  kF8E4M3,
  kF8E5M2,
  kF8E8M0,
};

// Bytes per element, and the name safetensors uses ("F32", "BF16", ...).
size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
// True for F32, F16 and BF16.
bool IsFloatDType(DType dtype);

struct SafetensorsLimits {
  uint64_t max_header_bytes = 100ull << 20;  // the reference implementation's cap
  size_t max_rank = 16;
  size_t max_name_bytes = 4096;
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t elements = 0;  // product of shape (1 for a scalar)
  uint64_t begin = 0;     // byte range inside the data buffer (after the header)
  uint64_t end = 0;
  uint64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // sorted by name
  std::vector<std::pair<std::string, std::string>> metadata;
  uint64_t data_offset = 0;  // 8 + header length: where the data buffer starts in the file
};

// Parses and validates the header of a file of `file_size` bytes whose first bytes are
// `prefix` (at least min(file_size, 8 + header length) of them; fewer is kCorruptData).
// `name` (usually the path) starts every error message.
// Errors: kCorruptData for anything malformed, kLimitExceeded past `limits`.
Result<SafetensorsHeader> ParseSafetensorsHeader(std::span<const uint8_t> prefix,
                                                 uint64_t file_size, const std::string& name,
                                                 const SafetensorsLimits& limits = {});

class SafetensorsFile {
 public:
  // Maps `path` read-only and validates its header. Errors: kNotFound, kIoError, and those of
  // ParseSafetensorsHeader.
  static Result<SafetensorsFile> Open(const std::string& path,
                                      const SafetensorsLimits& limits = {});

  const std::string& path() const { return path_; }
  const std::vector<TensorInfo>& tensors() const { return header_.tensors; }
  const std::vector<std::pair<std::string, std::string>>& metadata() const {
    return header_.metadata;
  }

  // The tensor named `name`, or nullptr.
  const TensorInfo* Find(std::string_view name) const;

  // The tensor's bytes inside the mapping (little-endian, row-major). Valid while this object
  // lives. Reading them pages the range in; nothing else of the file is read.
  std::span<const uint8_t> Bytes(const TensorInfo& tensor) const;

  // Drops the tensor's pages from this process's memory once they have been copied out (the
  // mapping stays valid; touching the bytes again reads them back from the file).
  void Release(const TensorInfo& tensor) const;

 private:
  struct Mapping;
  SafetensorsFile(std::string path, SafetensorsHeader header, std::shared_ptr<Mapping> mapping);

  std::string path_;
  SafetensorsHeader header_;
  std::shared_ptr<Mapping> mapping_;
};

// A tensor to write: its bytes must be elements x dtype size, little-endian, row-major.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::span<const uint8_t> bytes;
};

// Serialises tensors (in the given order) into safetensors bytes; the header is padded with
// spaces to a multiple of 8 bytes, as the reference writer does. kInvalidArgument for a byte
// count that does not match a shape, or a repeated name.
Result<std::string> SerializeSafetensors(
    const std::vector<TensorToWrite>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata = {});

// SerializeSafetensors, written atomically to `path`.
Status WriteSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                        const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace reel::vision
