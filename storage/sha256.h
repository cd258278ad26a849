// SHA-256 (FIPS 180-4), for content addressing: blobs are keyed by the lowercase hex digest of
// their bytes, and items by the digest of their file. Streaming or one-shot. Not constant-time
// (nothing here is secret). Thread-compatible: one Sha256 object per thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace reel::storage {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(std::string_view bytes);
  // Ends the hash and returns the digest; the object is then reset for reuse.
  Digest Finish();

  static std::string ToHex(const Digest& digest);  // 64 lowercase hex digits

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The lowercase hex SHA-256 of `bytes`, as `sha256sum` prints it.
std::string Sha256Hex(std::string_view bytes);

}  // namespace reel::storage
