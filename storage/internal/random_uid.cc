#include "storage/internal/random_uid.h"

#include <unistd.h>

#include <cstdint>
#include <random>

namespace reel::storage::internal {

std::string RandomUid() {
  static thread_local pid_t seeded_for = 0;
  static thread_local std::mt19937_64 rng;
  if (seeded_for != getpid()) {
    seeded_for = getpid();
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(), static_cast<unsigned>(seeded_for)};
    rng.seed(seed);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string uid;
  for (int word = 0; word < 2; ++word) {
    uint64_t bits = rng();
    for (int i = 0; i < 16; ++i, bits >>= 4) uid.push_back(kHex[bits & 15]);
  }
  return uid;
}

}  // namespace reel::storage::internal
