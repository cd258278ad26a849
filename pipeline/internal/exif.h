// EXIF orientation for JPEG stills: cameras store pixels as the sensor saw them and a tag saying
// how to turn them upright. Reel's images are always upright, so decoding applies it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pipeline/image.h"

namespace reel::pipeline::internal {

// The EXIF orientation (1..8) of a JPEG, or 1 when there is none or it is unreadable. Reads only
// the APP1 segments before the first scan; never reads past `size`.
int JpegExifOrientation(const uint8_t* data, size_t size);

// Turns `image` upright for an EXIF orientation: 2 mirror, 3 rotate 180, 4 flip, 5 transpose,
// 6 rotate 90 clockwise, 7 transverse, 8 rotate 270 clockwise.
Image ApplyExifOrientation(const Image& image, int orientation);

}  // namespace reel::pipeline::internal
