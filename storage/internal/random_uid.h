#pragma once

#include <string>

namespace reel::storage::internal {

// 128 random bits as hex: unique across hosts without coordination, so merges can key on it.
// Reseeded after fork(), so a parent and child never share a sequence.
std::string RandomUid();

}  // namespace reel::storage::internal
