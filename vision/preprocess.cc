#include "vision/preprocess.h"

#include "pipeline/image_codec.h"

namespace reel::vision {

Result<VisualInput> PatchesFromFrames(std::span<const pipeline::Image* const> frames,
                                      const VisionModelConfig& c,
                                      const Normalization& normalization) {
  if (frames.empty()) return InvalidArgument("no frames to encode");
  if (c.num_channels != 3) {
    return Unsupported("the model takes " + std::to_string(c.num_channels) +
                       " channels; frames are RGB");
  }
  const pipeline::Image& first = *frames[0];
  const int factor = c.pixel_factor();
  for (size_t i = 0; i < frames.size(); ++i) {
    const pipeline::Image& f = *frames[i];
    const std::string which = "frame " + std::to_string(i);
    if (f.channels != 3) return InvalidArgument(which + ": not RGB");
    if (f.width != first.width || f.height != first.height) {
      return InvalidArgument(which + ": " + std::to_string(f.width) + "x" +
                             std::to_string(f.height) + ", the first frame is " +
                             std::to_string(first.width) + "x" + std::to_string(first.height));
    }
    if (f.width < factor || f.height < factor || f.width % factor || f.height % factor) {
      return InvalidArgument(which + ": " + std::to_string(f.width) + "x" +
                             std::to_string(f.height) + " is not a multiple of " +
                             std::to_string(factor) + " on both sides");
    }
    if (f.pixels.size() != f.stride() * static_cast<size_t>(f.height)) {
      return InvalidArgument(which + ": pixel buffer does not match its size");
    }
  }
  // value -> normalised float, per channel.
  float lut[3][256];
  for (int ch = 0; ch < 3; ++ch) {
    for (int v = 0; v < 256; ++v) {
      lut[ch][v] = static_cast<float>((v / 255.0 - normalization.mean[ch]) / normalization.std[ch]);
    }
  }
  const int p = c.patch_size;
  const int tp = c.temporal_patch_size;
  const int m = c.spatial_merge_size;
  VisualInput input;
  input.pairs = static_cast<int>((frames.size() + tp - 1) / tp);
  input.rows = first.height / p;
  input.cols = first.width / p;
  const int pv = c.patch_values();
  input.patches.resize(static_cast<size_t>(input.pairs) * input.rows * input.cols * pv);
  float* out = input.patches.data();
  for (int t = 0; t < input.pairs; ++t) {
    for (int wr = 0; wr < input.rows / m; ++wr) {
      for (int wc = 0; wc < input.cols / m; ++wc) {
        for (int ir = 0; ir < m; ++ir) {
          for (int ic = 0; ic < m; ++ic) {
            const int y0 = (wr * m + ir) * p;
            const int x0 = (wc * m + ic) * p;
            // (channel, frame, row, column)
            for (int ch = 0; ch < 3; ++ch) {
              for (int f = 0; f < tp; ++f) {
                // An odd last frame is repeated.
                const size_t index = std::min(static_cast<size_t>(t) * tp + f, frames.size() - 1);
                const pipeline::Image& img = *frames[index];
                for (int y = 0; y < p; ++y) {
                  const uint8_t* src = img.row(y0 + y) + static_cast<size_t>(x0) * 3 + ch;
                  for (int x = 0; x < p; ++x) *out++ = lut[ch][src[3 * x]];
                }
              }
            }
          }
        }
      }
    }
  }
  return input;
}

Result<pipeline::Size> FeatureSize(pipeline::Size source, int64_t max_pixels,
                                   const VisionModelConfig& config) {
  const int factor = config.pixel_factor();
  if (max_pixels <= 0) {
    if (source.width % factor || source.height % factor || source.width < factor ||
        source.height < factor) {
      return InvalidArgument(std::to_string(source.width) + "x" + std::to_string(source.height) +
                             " is not a multiple of " + std::to_string(factor));
    }
    return source;
  }
  pipeline::SmartResizeOptions options;
  options.factor = factor;
  options.max_pixels = std::max<int64_t>(max_pixels, static_cast<int64_t>(factor) * factor);
  options.min_pixels = std::min<int64_t>(options.min_pixels, options.max_pixels);
  return pipeline::SmartResize(source, options);
}

Result<pipeline::Image> ResizeForEncoder(const pipeline::Image& image, pipeline::Size size) {
  if (image.width == size.width && image.height == size.height) return image;
  return pipeline::ResizeImage(image, size.width, size.height);
}

}  // namespace reel::vision
