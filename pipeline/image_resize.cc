// ResizeImage (declared in image_codec.h) with swscale: a file of its own, so that what links it
// (the PDF reader program, reel-pdf-reader) needs FFmpeg's libswscale and libavutil only, not
// the decoders.
#include <array>
#include <cstring>
#include <vector>

#include "pipeline/image_codec.h"
#include "pipeline/internal/ffmpeg.h"
#include "pipeline/internal/image_checks.h"

namespace reel::pipeline {

using internal::CheckImage;
using internal::CheckPixelLimit;
using internal::SizeText;

namespace {

// A resize context for these sizes, or null. Setting one up (filter tables for the size pair)
// costs more than scaling a thumbnail, and callers resize many frames to the same few sizes, so
// each thread keeps its last few.
SwsContext* CachedResizeContext(int from_width, int from_height, int to_width, int to_height,
                                AVPixelFormat format) {
  struct Entry {
    std::array<int, 5> key;
    internal::UniqueSwsContext context;
  };
  constexpr size_t kKept = 8;
  thread_local std::vector<Entry> cache;
  const std::array<int, 5> key = {from_width, from_height, to_width, to_height,
                                  static_cast<int>(format)};
  for (Entry& e : cache) {
    if (e.key == key) return e.context.get();
  }
  // ACCURATE_RND and full chroma keep RGB-to-RGB scaling from losing colour detail in swscale's
  // internal YUV stage.
  const int flags = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;
  internal::UniqueSwsContext context(sws_getContext(from_width, from_height, format, to_width,
                                                    to_height, format, flags, nullptr, nullptr,
                                                    nullptr));
  if (!context) return nullptr;
  if (cache.size() >= kKept) cache.erase(cache.begin());
  cache.push_back({key, std::move(context)});
  return cache.back().context.get();
}

}  // namespace

Result<Image> ResizeImage(const Image& image, int width, int height) {
  REEL_RETURN_IF_ERROR(CheckImage(image, "ResizeImage"));
  if (width <= 0 || height <= 0) {
    return InvalidArgument("ResizeImage: target size " + SizeText(width, height) +
                           " is not positive");
  }
  REEL_RETURN_IF_ERROR(CheckPixelLimit(width, height, int64_t{1} << 26, "ResizeImage"));
  if (width == image.width && height == image.height) return image;

  using internal::UniqueFrame;
  AVPixelFormat format = image.channels == 1 ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24;
  // Frames with FFmpeg's own aligned, padded buffers: swscale's SIMD paths may read and write a
  // little past the end of a row, and warn about unaligned rows.
  auto make_frame = [format](int w, int h) -> Result<UniqueFrame> {
    UniqueFrame frame(av_frame_alloc());
    if (!frame) return Internal("ResizeImage: out of memory");
    frame->format = format;
    frame->width = w;
    frame->height = h;
    if (int error = av_frame_get_buffer(frame.get(), 0); error < 0) {
      return Internal("ResizeImage: cannot allocate a " + SizeText(w, h) +
                      " frame: " + internal::AvErrorString(error));
    }
    return frame;
  };
  REEL_ASSIGN_OR_RETURN(UniqueFrame source, make_frame(image.width, image.height));
  REEL_ASSIGN_OR_RETURN(UniqueFrame target, make_frame(width, height));
  for (int y = 0; y < image.height; ++y) {
    std::memcpy(source->data[0] + static_cast<ptrdiff_t>(y) * source->linesize[0], image.row(y),
                image.stride());
  }

  SwsContext* sws = CachedResizeContext(image.width, image.height, width, height, format);
  if (sws == nullptr) {
    return Internal("ResizeImage: swscale cannot resize " + SizeText(image.width, image.height) +
                    " to " + SizeText(width, height));
  }
  int rows = sws_scale(sws, source->data, source->linesize, 0, image.height, target->data,
                       target->linesize);
  if (rows != height) {
    return Internal("ResizeImage: swscale produced " + std::to_string(rows) + " of " +
                    std::to_string(height) + " rows");
  }

  Image resized = MakeImage(width, height, image.channels);
  for (int y = 0; y < height; ++y) {
    std::memcpy(resized.row(y), target->data[0] + static_cast<ptrdiff_t>(y) * target->linesize[0],
                resized.stride());
  }
  return resized;
}

}  // namespace reel::pipeline
