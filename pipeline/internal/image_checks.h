// Checks shared by the image codecs (image_codec.cc) and the resizer (image_resize.cc).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "pipeline/image.h"

namespace reel::pipeline::internal {

inline std::string SizeText(int64_t width, int64_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

// kLimitExceeded if a `width` x `height` image is larger than `max_pixels`; checked before any
// pixel buffer is allocated.
inline Status CheckPixelLimit(int64_t width, int64_t height, int64_t max_pixels,
                              const std::string& name) {
  if (width * height > max_pixels) {
    return LimitExceeded(name + ": " + SizeText(width, height) + " image has more than " +
                         std::to_string(max_pixels) + " pixels");
  }
  return Status::Ok();
}

// kInvalidArgument unless `image` is a consistent RGB or gray image.
inline Status CheckImage(const Image& image, const char* what) {
  if (image.width <= 0 || image.height <= 0) {
    return InvalidArgument(std::string(what) + ": empty image (" +
                           SizeText(image.width, image.height) + ")");
  }
  if (image.channels != 1 && image.channels != 3) {
    return InvalidArgument(std::string(what) + ": " + std::to_string(image.channels) +
                           " channels (expected 1 or 3)");
  }
  if (image.pixels.size() != image.stride() * static_cast<size_t>(image.height)) {
    return InvalidArgument(
        std::string(what) + ": pixel buffer holds " + std::to_string(image.pixels.size()) +
        " bytes, " + SizeText(image.width, image.height) + "x" + std::to_string(image.channels) +
        " needs " + std::to_string(image.stride() * image.height));
  }
  return Status::Ok();
}

}  // namespace reel::pipeline::internal
