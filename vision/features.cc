#include "vision/features.h"

#include <cmath>
#include <cstring>

#include "vision/internal/kernels.h"

namespace reel::vision {

std::string ToF16Bytes(std::span<const float> values) {
  std::string bytes(values.size() * 2, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = internal::FloatToF16(values[i]);
    bytes[2 * i] = static_cast<char>(h & 0xff);
    bytes[2 * i + 1] = static_cast<char>(h >> 8);
  }
  return bytes;
}

Result<std::vector<float>> FromF16Bytes(std::string_view bytes) {
  if (bytes.size() % 2 != 0) {
    return CorruptData("an f16 feature of " + std::to_string(bytes.size()) + " bytes");
  }
  std::vector<float> values(bytes.size() / 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = static_cast<uint16_t>(static_cast<uint8_t>(bytes[2 * i]) |
                                             static_cast<uint8_t>(bytes[2 * i + 1]) << 8);
    values[i] = internal::F16ToFloat(h);
  }
  return values;
}

double CosineSimilarity(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size() || a.empty()) return 0;
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0;
  return dot / std::sqrt(na * nb);
}

std::string FeatureModelKey(const std::string& fingerprint, int64_t max_pixels) {
  return "m3-vision/" + fingerprint + "/" + std::to_string(max_pixels);
}

std::optional<FeatureModel> ParseFeatureModelKey(std::string_view key) {
  constexpr std::string_view kPrefix = "m3-vision/";
  if (key.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  key.remove_prefix(kPrefix.size());
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  FeatureModel m;
  m.fingerprint = std::string(key.substr(0, slash));
  const size_t dash = m.fingerprint.find('-');
  if (dash == std::string::npos || dash != 16) return std::nullopt;
  m.precision = m.fingerprint.substr(dash + 1);
  if (m.precision != "bf16" && m.precision != "f16" && m.precision != "f32") return std::nullopt;
  const std::string_view pixels = key.substr(slash + 1);
  if (pixels.empty() || pixels.size() > 12) return std::nullopt;
  for (char c : pixels) {
    if (c < '0' || c > '9') return std::nullopt;
    m.max_pixels = m.max_pixels * 10 + (c - '0');
  }
  return m;
}

}  // namespace reel::vision
