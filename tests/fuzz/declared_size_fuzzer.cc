// libFuzzer target for ParseDeclaredSize (pipeline/internal/declared_size.*): the container
// headers of untrusted files. The first byte picks the family and how much of the file the
// parser is told exists; the rest is the file. Checks: no crash, no read outside what it was told
// exists, and a declared size never short of where the walk stopped reading.
//
// Build and run (clang-14, ASan + UBSan), bounded:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. \
//     tests/fuzz/declared_size_fuzzer.cc pipeline/internal/declared_size.cc -o
//     /tmp/declared_size_fuzzer
//   /tmp/declared_size_fuzzer -max_total_time=300 -max_len=4096
// or configure with -DREEL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (target declared_size_fuzzer).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "pipeline/internal/declared_size.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using reel::pipeline::internal::ContainerFamily;
  if (size < 1) return 0;
  const ContainerFamily family = static_cast<ContainerFamily>(data[0] % 5);
  const uint8_t* bytes = data + 1;
  const int64_t available = static_cast<int64_t>(size - 1);
  // Sometimes claim a larger file than the bytes given (reads past them must fail cleanly).
  const int64_t file_size = (data[0] & 0x80) ? available * 3 + 17 : available;
  auto declared = reel::pipeline::internal::ParseDeclaredSize(
      family, file_size, [&](int64_t offset, size_t n, uint8_t* out) {
        if (offset < 0 || n > static_cast<size_t>(file_size) ||
            offset > file_size - static_cast<int64_t>(n)) {
          std::abort();  // the parser must not ask for bytes past the file size it was given
        }
        if (offset + static_cast<int64_t>(n) > available) return false;
        std::memcpy(out, bytes + offset, n);
        return true;
      });
  if (declared && declared->bytes < 0) std::abort();
  return 0;
}
