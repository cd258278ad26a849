// The thin_frames fit step (fit_steps.h).
#include <algorithm>
#include <cmath>

#include "llm/context/fit_steps.h"
#include "pipeline/sampling.h"

namespace reel::llm::fit {
namespace {

// Several files: every video keeps the same share of its frames (so videos sampled at one rate
// keep one rate), evenly spread, its first and last kept, not below min_fps; images keep theirs.
std::optional<std::string> ThinFiles(const ContextInput& in, const ContextOptions& o,
                                     const Fits& fits, bool can_split, Plan& plan) {
  std::vector<std::vector<size_t>> of(in.sources.size());  // plan.frames of each file
  for (size_t f : plan.frames) of[in.frames[f].source].push_back(f);
  size_t total = 0;                      // video frames
  std::vector<size_t> floor(of.size());  // each video's least
  for (size_t s = 0; s < of.size(); ++s) {
    if (in.sources[s].kind != ContextItemKind::kVideo || of[s].empty()) continue;
    total += of[s].size();
    double span = in.frames[of[s].back()].time_s - in.frames[of[s].front()].time_s;
    floor[s] = std::min(of[s].size(),
                        std::max<size_t>(2, static_cast<size_t>(std::ceil(span * o.min_fps))));
  }
  if (total <= 1) return std::nullopt;
  // k of `total`: each video keeps its share of k (at least its floor).
  auto thinned = [&](size_t k) {
    Plan p = plan;
    p.frames.clear();
    for (size_t s = 0; s < of.size(); ++s) {
      size_t keep = of[s].size();
      if (in.sources[s].kind == ContextItemKind::kVideo) {
        const double share =
            static_cast<double>(k) * static_cast<double>(of[s].size()) / static_cast<double>(total);
        keep = std::clamp(static_cast<size_t>(std::llround(share)), floor[s], of[s].size());
      }
      std::vector<int> positions(of[s].size());
      for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int>(i);
      for (int i : pipeline::ThinEvenly(positions, static_cast<int>(keep))) {
        p.frames.push_back(of[s][static_cast<size_t>(i)]);
      }
    }
    return p;
  };
  size_t lo = 0, hi = total;
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (fits(thinned(mid))) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  Plan next = thinned(lo);
  if (next.frames.size() == plan.frames.size()) return std::nullopt;
  if (!fits(next) && can_split) return std::nullopt;  // leave it to split
  const size_t before_frames = plan.frames.size();
  plan = std::move(next);
  return "kept " + std::to_string(plan.frames.size()) + " of " + std::to_string(before_frames) +
         " frames of " + std::to_string(in.sources.size()) +
         " files, the same share of each video, evenly spread, each video's first and last kept";
}

}  // namespace

std::optional<std::string> ThinFrames(const ContextInput& in, const ContextOptions& o,
                                      const Fits& fits, bool can_split, Plan& plan) {
  if (o.transport == Transport::kFile || plan.frames.size() <= 1) return std::nullopt;
  if (!in.sources.empty()) return ThinFiles(in, o, fits, can_split, plan);
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
