// An explicit list of times (seconds from the first frame). Each maps to the frame whose
// presentation interval contains it; times outside the trimmed range or past the end are dropped,
// duplicates collapse.
#include <algorithm>

#include "pipeline/sampling/policies.h"

namespace reel::pipeline::policies {

std::vector<int> SelectTimestamps(const FrameIndex& index, int first, int last,
                                  const SamplingOptions& options) {
  std::vector<int> selected;
  if (last <= first) return selected;
  for (double t : options.timestamps) {
    if (t < 0 || t >= index.duration_s()) continue;
    int frame = index.FrameAt(t);
    if (frame < first || frame >= last) continue;
    selected.push_back(frame);
  }
  std::sort(selected.begin(), selected.end());
  selected.erase(std::unique(selected.begin(), selected.end()), selected.end());
  return selected;
}

}  // namespace reel::pipeline::policies
