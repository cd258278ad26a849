// Deinterlacing of single decoded pictures with FFmpeg's estdif, private to pipeline/: the frame
// converter runs it before the colour conversion. Not thread-safe; one per decoding thread; owns
// nothing between calls. Why estdif: pipeline/README.md, "Deinterlacer".
#pragma once

#include <string>

#include "base/status.h"
#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline::internal {

// Whether the decoder flagged `frame` interlaced (both fields in one picture).
bool IsInterlaced(const AVFrame* frame);

// `frame` deinterlaced, as a new picture (same size; the pixel format estdif works in, the
// source's when estdif takes it). Pictures smaller than 3x4 come back as a copy. Errors (kInternal,
// kUnsupported) name `path`.
Result<UniqueFrame> Deinterlace(const AVFrame* frame, const std::string& path);

}  // namespace reel::pipeline::internal
