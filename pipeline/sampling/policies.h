// The index-based sampling policies, one file each. Private to pipeline/; callers use
// SelectFrames() in sampling.h. Each takes the trimmed frame range [first, last) of the index and
// returns ascending, unique presentation indices inside it.
#pragma once

#include <vector>

#include "pipeline/frame_index.h"
#include "pipeline/sampling.h"

namespace reel::pipeline::policies {

std::vector<int> SelectByFps(const FrameIndex& index, int first, int last,
                             const SamplingOptions& options);
std::vector<int> SelectByCount(const FrameIndex& index, int first, int last,
                               const SamplingOptions& options);
std::vector<int> SelectKeyframes(const FrameIndex& index, int first, int last,
                                 const SamplingOptions& options);
std::vector<int> SelectTimestamps(const FrameIndex& index, int first, int last,
                                  const SamplingOptions& options);

}  // namespace reel::pipeline::policies
