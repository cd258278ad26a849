// The dedupe fit step (fit_steps.h).
#include <bit>

#include "llm/context/fit_steps.h"

namespace reel::llm::fit {

std::optional<std::string> Dedupe(const ContextInput& in, const ContextOptions& o, Plan& plan) {
  if (o.transport == Transport::kFile || plan.frames.size() <= 2) return std::nullopt;
  // (Several files: plan.frames is file after file, so the frame kept before is of the same file
  // unless the file changes.)
  std::vector<size_t> kept = {plan.frames[0]};
  size_t dropped = 0, marked = 0;
  for (size_t i = 1; i < plan.frames.size(); ++i) {
    const ContextFrame& f = in.frames[plan.frames[i]];
    const ContextFrame& prev = in.frames[kept.back()];
    // Each file's first and last frame stay; frames of two files are never near duplicates.
    bool last = i + 1 == plan.frames.size() || in.frames[plan.frames[i + 1]].source != f.source;
    if (f.source != prev.source) {
      kept.push_back(plan.frames[i]);
      continue;
    }
    if (!last && f.duplicate) {  // the vision encoder's near-duplicate mark
      ++marked;
      continue;
    }
    if (!last && f.phash && prev.phash &&
        std::popcount(*f.phash ^ *prev.phash) <= o.dedupe_max_distance) {
      ++dropped;
      continue;
    }
    kept.push_back(plan.frames[i]);
  }
  if (dropped + marked == 0) return std::nullopt;
  plan.frames = kept;
  std::string detail = "dropped " + std::to_string(dropped + marked) + " near-duplicate frames (";
  if (marked > 0) {
    detail += std::to_string(marked) + " marked by the vision encoder" + (dropped > 0 ? ", " : "");
  }
  if (dropped > 0) {
    detail += std::to_string(dropped) + " within " + std::to_string(o.dedupe_max_distance) +
              " dHash bits of the frame kept before them";
  }
  detail += ")";
  return detail;
}

}  // namespace reel::llm::fit
