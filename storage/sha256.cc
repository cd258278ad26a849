#include "storage/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace reel::storage {
namespace {

// libcrypto failing to hash in memory is a broken installation or an allocation failure, not
// bad input: there is no digest to return, so the process stops with a message.
[[noreturn]] void CryptoFailed(const char* what) {
  std::fprintf(stderr, "reel: libcrypto: %s failed\n", what);
  std::abort();
}

// SHA-256 fetched once: an implicit fetch per EVP_DigestInit_ex costs a provider lookup, which
// shows when hashing many small files.
const EVP_MD* Sha256Md() {
  static const EVP_MD* const md = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (fetched == nullptr) CryptoFailed("EVP_MD_fetch(SHA256)");
    return fetched;  // kept for the life of the process
  }();
  return md;
}

}  // namespace

struct Sha256::Context {
  struct Free {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx{EVP_MD_CTX_new()};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (context_->ctx == nullptr) CryptoFailed("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex2(context_->ctx.get(), Sha256Md(), nullptr) != 1) {
    CryptoFailed("EVP_DigestInit_ex2");
  }
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Update(std::string_view bytes) {
  if (bytes.empty()) return;
  if (EVP_DigestUpdate(context_->ctx.get(), bytes.data(), bytes.size()) != 1) {
    CryptoFailed("EVP_DigestUpdate");
  }
}

Sha256::Digest Sha256::Finish() {
  Digest digest;
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->ctx.get(), digest.data(), &length) != 1 ||
      length != digest.size()) {
    CryptoFailed("EVP_DigestFinal_ex");
  }
  if (EVP_DigestInit_ex2(context_->ctx.get(), Sha256Md(), nullptr) != 1) {
    CryptoFailed("EVP_DigestInit_ex2");
  }
  return digest;
}

std::string Sha256::ToHex(const Digest& digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 15]);
  }
  return hex;
}

std::string Sha256Hex(std::string_view bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return Sha256::ToHex(hash.Finish());
}

}  // namespace reel::storage
