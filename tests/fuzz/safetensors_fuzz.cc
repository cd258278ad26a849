// libFuzzer target for the safetensors header parser (vision/safetensors.*): model files come
// from outside. The first byte says how much of the file the parser is given (all of it, or only
// a prefix while the file claims to be longer); the rest is the file. Checks: no crash, no read
// outside the bytes given, and every accepted header describes exactly the data that follows.
//
// Build and run (clang-14, ASan + UBSan), bounded:
//   cmake -S . -B build-fuzz -G Ninja -DREEL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
//     -DCMAKE_C_COMPILER=clang && cmake --build build-fuzz --target safetensors_fuzz
//   build-fuzz/tests/safetensors_fuzz -max_total_time=300 -max_len=4096
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "vision/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  // A copy of exactly the bytes given, so ASan sees any read past them.
  std::vector<uint8_t> file(data + 1, data + size);
  uint64_t file_size = file.size();
  size_t given = file.size();
  if (mode & 0x80) {  // a longer file than the bytes at hand
    file_size = file.size() * 2 + (mode & 0x7f);
  } else if (mode & 0x40) {  // only a prefix of the file at hand
    given = file.size() / 2;
  }
  std::vector<uint8_t> prefix(file.begin(), file.begin() + given);
  reel::vision::SafetensorsLimits limits;
  limits.max_header_bytes = 1 << 16;
  auto header = reel::vision::ParseSafetensorsHeader(prefix, file_size, "fuzz", limits);
  if (!header.ok()) {
    if (header.status().message().rfind("fuzz: ", 0) != 0) std::abort();  // names the file
    return 0;
  }
  // Accepted: the ranges tile [0, data size) exactly and match shape x dtype.
  const uint64_t data_size = file_size - header->data_offset;
  uint64_t total = 0;
  for (const reel::vision::TensorInfo& t : header->tensors) {
    if (t.begin > t.end || t.end > data_size) std::abort();
    if (t.bytes() != t.elements * reel::vision::DTypeSize(t.dtype)) std::abort();
    total += t.bytes();
  }
  if (total != data_size) std::abort();
  return 0;
}
