#include "jobs/stages/frame_features.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "pipeline/image_codec.h"

namespace reel::jobs {

Result<std::string> MakeThumbnailJpeg(const pipeline::Image& image, int long_side, int quality) {
  if (image.empty()) return InvalidArgument("cannot make a thumbnail of an empty image");
  int longest = std::max(image.width, image.height);
  const pipeline::Image* source = &image;
  pipeline::Image scaled;
  if (longest > long_side) {
    double scale = static_cast<double>(long_side) / longest;
    int width = std::max(1, static_cast<int>(std::lround(image.width * scale)));
    int height = std::max(1, static_cast<int>(std::lround(image.height * scale)));
    REEL_ASSIGN_OR_RETURN(scaled, pipeline::ResizeImage(image, width, height));
    source = &scaled;
  }
  REEL_ASSIGN_OR_RETURN(std::vector<uint8_t> jpeg, pipeline::EncodeJpeg(*source, quality));
  return std::string(jpeg.begin(), jpeg.end());
}

uint64_t DifferenceHash(const pipeline::Image& image) {
  if (image.empty()) return 0;
  constexpr int kW = 9, kH = 8;
  double cells[kH][kW] = {};
  for (int cy = 0; cy < kH; ++cy) {
    // Each cell averages the source pixels whose centres fall in it (at least one pixel).
    int y0 = cy * image.height / kH;
    int y1 = std::max(y0 + 1, (cy + 1) * image.height / kH);
    for (int cx = 0; cx < kW; ++cx) {
      int x0 = cx * image.width / kW;
      int x1 = std::max(x0 + 1, (cx + 1) * image.width / kW);
      double sum = 0;
      for (int y = y0; y < y1 && y < image.height; ++y) {
        const uint8_t* row = image.row(y);
        for (int x = x0; x < x1 && x < image.width; ++x) {
          const uint8_t* p = row + static_cast<size_t>(x) * image.channels;
          sum += image.channels >= 3 ? 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] : p[0];
        }
      }
      cells[cy][cx] = sum / ((y1 - y0) * (x1 - x0));
    }
  }
  uint64_t hash = 0;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW - 1; ++x) {
      hash <<= 1;
      if (cells[y][x] > cells[y][x + 1]) hash |= 1;
    }
  }
  return hash;
}

}  // namespace reel::jobs
