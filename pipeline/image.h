// An owned, upright, tightly packed 8-bit image in memory: what every stage after decoding sees.
#pragma once

#include <cstdint>
#include <vector>

namespace reel::pipeline {

struct Image {
  int width = 0;
  int height = 0;
  int channels = 3;             // 3 = RGB, 1 = gray
  std::vector<uint8_t> pixels;  // row-major, width * channels bytes per row, no padding

  bool empty() const { return width == 0 || height == 0; }
  size_t stride() const { return static_cast<size_t>(width) * channels; }
  const uint8_t* row(int y) const { return pixels.data() + stride() * y; }
  uint8_t* row(int y) { return pixels.data() + stride() * y; }
};

// Allocates an image of the given size, pixels zeroed.
inline Image MakeImage(int width, int height, int channels = 3) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.assign(static_cast<size_t>(width) * height * channels, 0);
  return image;
}

}  // namespace reel::pipeline
