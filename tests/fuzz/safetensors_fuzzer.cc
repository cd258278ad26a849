// The safetensors header parser (vision/safetensors.h, ParseSafetensorsHeader): model files come
// from outside. The first byte says how much of the file the parser is given (all of it, or only
// a prefix while the file claims to be longer); the rest is the file. Invariants: a refusal names
// the file; an accepted header's ranges lie inside the data, match shape x dtype size, and tile the
// data exactly (no gap, no overlap); the parser never reads past the bytes it was given (ASan).
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "vision/safetensors.h"

using reel::fuzz::Require;

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
    Require(header.status().message().rfind("fuzz: ", 0) == 0, "a refusal names the file",
            header.status().message());
    return 0;
  }
  const uint64_t data_size = file_size - header->data_offset;
  uint64_t total = 0;
  for (const reel::vision::TensorInfo& t : header->tensors) {
    Require(t.begin <= t.end && t.end <= data_size, "a tensor's range lies inside the data",
            t.name);
    Require(t.bytes() == t.elements * reel::vision::DTypeSize(t.dtype),
            "a tensor's bytes are shape x dtype size", t.name);
    total += t.bytes();
  }
  Require(total == data_size, "the tensors tile the data exactly");
  return 0;
}
