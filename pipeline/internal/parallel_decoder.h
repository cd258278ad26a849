// Decoding on several threads: independent groups of target frames (see IndependentGroups), each
// decoded by one of a few workers with its own demuxer, single-threaded decoder and converter.
// Converted frames reach the caller on the calling thread, group by group in order, with a
// bounded number waiting.
//
// Threads: DecodeInParallel starts and joins its workers before it returns; the sink runs only on
// the calling thread, so it needs no locking. Everything the job refers to must outlive the call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/frame_index.h"
#include "pipeline/image.h"
#include "pipeline/internal/ffmpeg.h"
#include "pipeline/internal/video_decoder.h"
#include "pipeline/limits.h"
#include "pipeline/smart_resize.h"

namespace reel::pipeline::internal {

struct ConvertedFrame {
  int frame = 0;         // presentation index
  bool damaged = false;  // the decoder concealed errors in it: not converted, `image` is empty
  Image image;
};
using ConvertedFrameSink = std::function<Status(ConvertedFrame&&)>;

struct ParallelDecodeJob {
  const std::string& path;
  const FrameIndex& index;
  const MediaLimits& limits;
  const Deadline& deadline;
  Size target;       // upright output size
  int rotation;      // clockwise degrees
  bool deinterlace;  // interlaced pictures are deinterlaced (FrameConverter)
  const std::vector<std::vector<int>>& groups;
  int workers;
};

enum class ParallelOutcome {
  kDone,  // every group was decoded (frames the stream's damage hides may still be missing)
  // The demuxer cannot seek, or no thread could be started: the frames not delivered need a
  // sequential pass.
  kFellShort,
};

// Decodes every group, delivering each target frame at most once through `sink` (and, before it,
// any damaged pictures of it). Fails with the first error of a worker (time limit, error-rate cap:
// counters.rate_exceeded) or of the sink.
Result<ParallelOutcome> DecodeInParallel(const ParallelDecodeJob& job, DecodeCounters& counters,
                                         const ConvertedFrameSink& sink);

}  // namespace reel::pipeline::internal
