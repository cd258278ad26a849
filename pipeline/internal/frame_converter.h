// Decoded pictures to upright RGB at the target size: colour conversion and bicubic resize in one
// swscale pass, honouring the frame's colour matrix and range, then a lossless rotation.
#pragma once

#include <string>

#include "pipeline/image.h"
#include "pipeline/internal/ffmpeg.h"
#include "pipeline/smart_resize.h"

namespace reel::pipeline::internal {

class FrameConverter {
 public:
  // `upright` is the output size after rotation; `rotation` the clockwise degrees to apply.
  FrameConverter(Size upright, int rotation) : upright_(upright), rotation_(rotation) {}

  Result<Image> Convert(const AVFrame* frame, const std::string& path);

  // A kSide x kSide 8-bit gray thumbnail (area averaging), not rotated, for scene scoring.
  Status Thumbnail(const AVFrame* frame, int side, uint8_t* out, const std::string& path);

 private:
  Size upright_;
  int rotation_;
  UniqueSwsContext rgb_;
  UniqueSwsContext gray_;
};

// Turns an image clockwise by 90, 180 or 270 degrees.
Image Rotate(const Image& image, int degrees);

}  // namespace reel::pipeline::internal
