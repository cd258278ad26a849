// The model's frame size rules (docs/m3-reference.md "Frames and images: size"). Pure arithmetic.
#pragma once

#include "base/status.h"

namespace reel::pipeline {

struct Size {
  int width = 0;
  int height = 0;
  bool operator==(const Size&) const = default;
};

// Qwen-style "smart resize" as vLLM and transformers do it: each side rounded to the nearest
// multiple of `factor` (halves to even, like Python's round), then scaled down with floor if the
// area exceeds `max_pixels`, or up with ceil if below `min_pixels`.
struct SmartResizeOptions {
  int factor = 28;                // patch 14 x merge 2
  int64_t min_pixels = 3136;      // video frames: 56 * 56
  int64_t max_pixels = 602112;    // video frames: 768 * 28 * 28; still images use 451584
  double max_aspect_ratio = 200;  // long side / short side above this is an error
};

inline constexpr int64_t kVideoMaxPixels = 602112;
inline constexpr int64_t kImageMaxPixels = 451584;

Result<Size> SmartResize(Size source, const SmartResizeOptions& options = {});

// SGLang's variant: if the long side exceeds `max_long_side`, scale both sides by
// max_long_side / long side (Python rounding); then round each side up to a multiple of `factor`.
struct LongSideResizeOptions {
  int factor = 28;
  int max_long_side = 672;  // `detail` option values: 504, 672, 1008, 2016
};

Result<Size> LongSideResize(Size source, const LongSideResizeOptions& options = {});

// How frames are resized: the model's rule, or no resize at all.
enum class ResizeMode { kSmart, kLongSide, kNone };

// Which shape of a video with non-square pixels (a sample aspect ratio other than 1:1, e.g. a
// DVD's 720x480 at 32:27) the resize starts from: the shape it is meant to be seen at, or the
// stored pixel grid (what vLLM's and SGLang's own video decoders hand the model).
enum class FrameShape { kDisplay, kStorage };

struct ResizeOptions {
  ResizeMode mode = ResizeMode::kSmart;
  SmartResizeOptions smart;
  LongSideResizeOptions long_side;
  FrameShape shape = FrameShape::kDisplay;
  // Video frames the decoder flags interlaced (a DVD's or an SVCD's MPEG-2, interlaced H.264) are
  // deinterlaced before they are resized (FFmpeg's estdif, each chosen frame on its own: the
  // frame `ffmpeg -vf estdif=mode=frame` gives), so the model is not shown combing. Progressive
  // frames are left alone.
  bool deinterlace = true;
};

// Applies `options` to an upright source size.
Result<Size> TargetSize(Size source, const ResizeOptions& options);

// A sample (pixel) aspect ratio: the width of one stored pixel over its height.
struct SampleAspect {
  int num = 1;
  int den = 1;
  bool square() const { return num == den; }
  bool operator==(const SampleAspect&) const = default;
};

// The shape a stored picture is meant to be seen at: the width scaled by the sample aspect ratio
// and rounded to the nearest pixel, the height kept (the picture's lines stay whole, as
// `ffmpeg -vf scale=iw*sar:ih` does). 720x480 at 32:27 -> 853x480; 352x288 at 12:11 -> 384x288.
// Never narrower than 1 pixel; an empty size stays as it is.
Size DisplaySize(Size storage, SampleAspect aspect);

// Python's round(): nearest integer, halves to even.
double RoundHalfEven(double x);

}  // namespace reel::pipeline
