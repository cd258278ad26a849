// SHA-256 (FIPS 180-4), for content addressing: blobs are keyed by the lowercase hex digest of
// their bytes, and items by the digest of their file. Streaming or one-shot. Computed by OpenSSL's
// libcrypto (EVP), which uses the CPU's SHA extensions where it has them. Not constant-time
// (nothing here is secret). Thread-compatible: one Sha256 object per thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace reel::storage {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void Update(std::string_view bytes);
  // Ends the hash and returns the digest; the object is then reset for reuse.
  Digest Finish();

  static std::string ToHex(const Digest& digest);  // 64 lowercase hex digits

 private:
  struct Context;  // libcrypto's digest context (sha256.cc)
  std::unique_ptr<Context> context_;
};

// The lowercase hex SHA-256 of `bytes`, as `sha256sum` prints it.
std::string Sha256Hex(std::string_view bytes);

}  // namespace reel::storage
