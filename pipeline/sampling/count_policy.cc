// N frames spread evenly over the trimmed range: target times at equal steps from the first
// frame's start to the last frame's start (both included, as np.linspace does), each mapped to the
// frame whose presentation interval contains it. Asking for more frames than there are gives every
// frame once. Where a frame is held longer than a step (a variable-rate stream's still stretch),
// two targets fall in one frame: the later target takes the next frame instead, so the count asked
// for is the count returned whenever the range has that many frames (and a frame is left for
// every target after it).
#include <algorithm>

#include "pipeline/sampling/policies.h"

namespace reel::pipeline::policies {

std::vector<int> SelectByCount(const FrameIndex& index, int first, int last,
                               const SamplingOptions& options) {
  std::vector<int> selected;
  if (last <= first || options.count <= 0) return selected;
  if (options.count >= last - first) {
    for (int i = first; i < last; ++i) selected.push_back(i);
    return selected;
  }
  const double t0 = index.time_s(first);
  const double t1 = index.time_s(last - 1);
  for (int k = 0; k < options.count; ++k) {
    double t = options.count == 1 ? t0 : t0 + (t1 - t0) * k / (options.count - 1);
    // A nanosecond of slack keeps rounding in the division from landing a hair before a frame's
    // start (the last target is exactly the last frame's start).
    int frame = std::clamp(index.FrameAt(t + 1e-9), first, last - 1);
    if (!selected.empty()) frame = std::max(frame, selected.back() + 1);
    // Leave one frame for each target still to come.
    frame = std::min(frame, last - (options.count - k));
    selected.push_back(frame);
  }
  return selected;
}

}  // namespace reel::pipeline::policies
