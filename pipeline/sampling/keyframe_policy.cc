// Keyframes only: the frames whose packets are random-access points. Chosen from the packet flags
// alone, so the decoder never has to touch the frames between them.
#include "pipeline/sampling/policies.h"

namespace reel::pipeline::policies {

std::vector<int> SelectKeyframes(const FrameIndex& index, int first, int last,
                                 const SamplingOptions& options) {
  std::vector<int> selected;
  for (int i = first; i < last; ++i) {
    if (index.frames[i].keyframe) selected.push_back(i);
  }
  return selected;
}

}  // namespace reel::pipeline::policies
