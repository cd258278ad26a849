// Deinterlacing of single decoded pictures with FFmpeg's estdif filter (libavfilter, edge slope
// tracing). Private to pipeline/: the frame converter runs it on the frames it returns, before
// the colour conversion.
//
// Each chosen picture is deinterlaced on its own: a fresh filter graph (buffer -> estdif in
// mode=frame -> buffersink) is given the picture and then the end of the stream. estdif rebuilds
// the second field's lines from the first field alone, so the result is the same picture that
// `ffmpeg -vf estdif=mode=frame` gives for that frame over the whole stream, and no frame that
// was not chosen needs decoding. (bwdif and yadif also look at the frames before and after:
// given one picture, FFmpeg 5.1's bwdif passes it through unchanged and yadif's result differs
// from its result in the stream.) The field order comes from the picture (top_field_first).
//
// Not thread-safe; one per decoding thread. Owns nothing between calls.
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
