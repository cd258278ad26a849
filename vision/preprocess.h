// Frames to the encoder's input, as the model's processors do it (docs/m3-reference.md "Frames and
// images: size", "Frames to tokens"): RGB scaled to [0, 1] and normalised with CLIP's mean and
// std; frames grouped in pairs (temporal patch 2), an odd last frame repeated, so a still image
// is one pair of itself; each pair cut into 14x14 patches and ordered by 2x2 merge window.
// Resizing to multiples of 28 happens before, in the media stage (pipeline/smart_resize.h);
// FeatureSize() gives the smaller sizes used for features.
#pragma once

#include <span>

#include "base/status.h"
#include "pipeline/image.h"
#include "pipeline/smart_resize.h"
#include "vision/encoder.h"
#include "vision/model_config.h"

namespace reel::vision {

struct Normalization {
  float mean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
  float std[3] = {0.26862954f, 0.26130258f, 0.27577711f};
};

// Frames of one image or video (all the same size, RGB, sides multiples of
// config.pixel_factor()) to patches. Errors: kInvalidArgument naming the first frame that does
// not fit (gray, another size, sides not multiples of the factor), or an empty list.
Result<VisualInput> PatchesFromFrames(std::span<const pipeline::Image* const> frames,
                                      const VisionModelConfig& config,
                                      const Normalization& normalization = {});

// The size frames are encoded at for features when the model size is not wanted: the smart
// resize of `source` with `max_pixels` (and the model's factor). 0 keeps `source` (which must
// then already be a multiple of the factor).
Result<pipeline::Size> FeatureSize(pipeline::Size source, int64_t max_pixels,
                                   const VisionModelConfig& config);

// `image` resized (bicubic) to `size`, or a copy when it already has that size.
Result<pipeline::Image> ResizeForEncoder(const pipeline::Image& image, pipeline::Size size);

}  // namespace reel::vision
