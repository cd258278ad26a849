// Builds a FrameIndex from an already open demuxer (shared by BuildFrameIndex and the decoder,
// which must not open the file twice).
#pragma once

#include <string>

#include "pipeline/frame_index.h"
#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline::internal {

// Picks the stream to sample: `requested` if >= 0 (must be video), else FFmpeg's best video
// stream that is not an attached picture.
Result<int> ChooseVideoStream(AVFormatContext* format, int requested, const std::string& path);

// Reads every packet of `stream_index`. The context must be freshly opened (nothing read yet but
// what avformat_find_stream_info buffered, which av_read_frame returns first). Leaves the demuxer
// at EOF.
Result<FrameIndex> IndexStream(AVFormatContext* format, int stream_index, const std::string& path,
                               const Deadline& deadline);

// Puts the demuxer back at the first packet of `stream_index`. Fails with kUnsupported when the
// file cannot be rewound.
Status RewindToStart(AVFormatContext* format, int stream_index, const std::string& path);

}  // namespace reel::pipeline::internal
