// Pooled features as they are stored and compared: fp16 bytes (little-endian, the `features`
// table's dtype "f16"), cosine similarity, and the model key that says which encoder, weights
// and frame size made them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::vision {

// Values rounded to fp16 (nearest even), 2 bytes each, little-endian.
std::string ToF16Bytes(std::span<const float> values);
// Back to floats; kCorruptData for an odd byte count.
Result<std::vector<float>> FromF16Bytes(std::string_view bytes);

// cos(a, b) in [-1, 1]; 0 when either is all zeros or the sizes differ.
double CosineSimilarity(std::span<const float> a, std::span<const float> b);

// The `features.model` text: "m3-vision/<fingerprint>/<max_pixels>" (fingerprint as
// VisionEncoder::fingerprint(): the tower's content hash and the held precision; max_pixels the
// frame area features are encoded at, 0 for the model's own size).
std::string FeatureModelKey(const std::string& fingerprint, int64_t max_pixels);

struct FeatureModel {
  std::string fingerprint;  // "<16 hex>-<precision>"
  std::string precision;    // "bf16", "f16", "f32"
  int64_t max_pixels = 0;
};
// Parses FeatureModelKey's text; nullopt for anything else.
std::optional<FeatureModel> ParseFeatureModelKey(std::string_view key);

}  // namespace reel::vision
