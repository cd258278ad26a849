// Deinterlacing of single decoded pictures with FFmpeg's bwdif filter (libavfilter). Private to
// pipeline/: the frame converter runs it on the frames it returns, before the colour conversion.
//
// Each picture is deinterlaced on its own: a fresh filter graph (buffer -> bwdif in
// mode=send_frame -> buffersink) is given the picture and then the end of the stream, and its
// first output is kept. That is `ffmpeg -vf "select='eq(n,N)',bwdif=mode=send_frame"` on the
// chosen frame: the two fields of the picture are interpolated from each other (bwdif's
// temporal checks see the same picture before and after), without decoding neighbouring frames
// that were not chosen. The field order comes from the picture (top_field_first).
//
// Not thread-safe; one per decoding thread. Owns nothing between calls.
#pragma once

#include <string>

#include "base/status.h"
#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline::internal {

// Whether the decoder flagged `frame` interlaced (both fields in one picture).
bool IsInterlaced(const AVFrame* frame);

// `frame` deinterlaced, as a new picture (same size; the pixel format bwdif works in, the
// source's when bwdif takes it). Pictures bwdif cannot take (fewer than 3 columns or 4 rows) come
// back as a copy. Errors (kInternal, kUnsupported) name `path`.
Result<UniqueFrame> Deinterlace(const AVFrame* frame, const std::string& path);

}  // namespace reel::pipeline::internal
