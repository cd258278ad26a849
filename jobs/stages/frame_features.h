// Small per-frame features stored with every frame: a thumbnail and a perceptual hash.
// Pure functions of the pixels; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "pipeline/image.h"

namespace reel::jobs {

// The report shows thumbnails 240-270 CSS pixels wide: 320 keeps the storyboard sharp (items
// stored before this size keep their 160-pixel thumbnails until they are processed again).
inline constexpr int kThumbnailLongSide = 320;  // pixels
inline constexpr int kThumbnailQuality = 80;    // JPEG quality

// A JPEG of `image` scaled (never up) so its long side is at most `long_side` pixels.
Result<std::string> MakeThumbnailJpeg(const pipeline::Image& image,
                                      int long_side = kThumbnailLongSide,
                                      int quality = kThumbnailQuality);

// dHash: the image in gray, area-averaged down to 9x8, one bit per horizontal neighbour pair
// (bit 63 - (8 * row + column) set when the left pixel is brighter). Similar pictures differ in
// few bits (compare with std::popcount(a ^ b)). 0 for an empty image.
uint64_t DifferenceHash(const pipeline::Image& image);

}  // namespace reel::jobs
