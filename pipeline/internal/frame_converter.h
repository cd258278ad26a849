// Decoded pictures to upright RGB at the target size: interlaced pictures deinterlaced
// (deinterlacer.h) when asked, then colour conversion and bicubic resize in one swscale pass,
// honouring the frame's colour matrix and range, then a lossless rotation.
#pragma once

#include <string>

#include "pipeline/image.h"
#include "pipeline/internal/ffmpeg.h"
#include "pipeline/sampling/scene_detector.h"
#include "pipeline/smart_resize.h"

namespace reel::pipeline::internal {

class FrameConverter {
 public:
  // `upright` is the output size after rotation; `rotation` the clockwise degrees to apply;
  // `deinterlace`: pictures the decoder flags interlaced are deinterlaced first.
  FrameConverter(Size upright, int rotation, bool deinterlace = false)
      : upright_(upright), rotation_(rotation), deinterlace_(deinterlace) {}

  Result<Image> Convert(const AVFrame* frame, const std::string& path);

  // The picture's planes as FFmpeg's scene score reads them (full size, not rotated, never
  // deinterlaced): the decoder's own planes when their pixel format is one FFmpeg's `select`
  // filter takes, else a copy converted to the format FFmpeg's filter graph would pick
  // (yuv420p, yuvj420p, yuv422p, yuvj422p, yuv420p10le, gray, rgb24 or rgba). Valid until the next
  // call or until `frame` is released.
  Result<ScenePicture> ScenePlanes(const AVFrame* frame, const std::string& path);

 private:
  Size upright_;
  int rotation_;
  bool deinterlace_;
  UniqueSwsContext rgb_;
  UniqueSwsContext scene_;
  UniqueFrame scene_frame_;  // the converted picture for ScenePlanes
};

// Turns an image clockwise by 90, 180 or 270 degrees.
Image Rotate(const Image& image, int degrees);

}  // namespace reel::pipeline::internal
