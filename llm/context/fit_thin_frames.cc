// The thin_frames fit step (fit_steps.h).
#include <algorithm>
#include <cmath>

#include "llm/context/fit_steps.h"
#include "pipeline/sampling.h"

namespace reel::llm::fit {

std::optional<std::string> ThinFrames(const ContextInput& in, const ContextOptions& o,
                                      const Fits& fits, bool can_split, Plan& plan) {
  if (o.transport == Transport::kFile || plan.frames.size() <= 1) return std::nullopt;
  // The most frames that fit, evenly spread, first and last kept, not below min_fps.
  double span = in.frames[plan.frames.back()].time_s - in.frames[plan.frames.front()].time_s;
  size_t floor_frames = std::max<size_t>(2, static_cast<size_t>(std::ceil(span * o.min_fps)));
  size_t lo = std::min(floor_frames, plan.frames.size()), hi = plan.frames.size();
  auto thinned = [&](size_t k) {
    Plan p = plan;
    std::vector<int> positions(plan.frames.size());
    for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int>(i);
    std::vector<int> keep = pipeline::ThinEvenly(positions, static_cast<int>(k));
    p.frames.clear();
    for (int i : keep) p.frames.push_back(plan.frames[static_cast<size_t>(i)]);
    return p;
  };
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (fits(thinned(mid))) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  if (lo == plan.frames.size()) return std::nullopt;
  size_t before_frames = plan.frames.size();
  if (!fits(thinned(lo)) && can_split) lo = plan.frames.size();  // leave it to split
  if (lo == plan.frames.size()) return std::nullopt;
  plan = thinned(lo);
  return "kept " + std::to_string(lo) + " of " + std::to_string(before_frames) +
         " frames, evenly spread, first and last kept";
}

}  // namespace reel::llm::fit
