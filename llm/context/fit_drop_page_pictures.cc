// The drop_page_pictures fit step (fit_steps.h).
#include <algorithm>

#include "llm/context/fit_steps.h"
#include "pipeline/sampling.h"

namespace reel::llm::fit {

std::optional<std::string> DropPagePictures(const ContextInput& in, const Fits& fits, Plan& plan) {
  if (!in.paged) return std::nullopt;
  // Positions in plan.frames of pictures whose page reads well as text: the droppable ones.
  std::vector<int> droppable;
  for (size_t i = 0; i < plan.frames.size(); ++i) {
    if (in.frames[plan.frames[i]].page_has_text) droppable.push_back(static_cast<int>(i));
  }
  if (droppable.empty()) return std::nullopt;
  auto keeping = [&](size_t k) {  // k of the droppable pictures kept, evenly spread
    std::vector<int> keep;
    if (k > 0) keep = pipeline::ThinEvenly(droppable, static_cast<int>(k));
    std::vector<bool> kept(plan.frames.size(), true);
    for (int i : droppable) kept[static_cast<size_t>(i)] = false;
    for (int i : keep) kept[static_cast<size_t>(i)] = true;
    Plan p = plan;
    p.frames.clear();
    for (size_t i = 0; i < plan.frames.size(); ++i) {
      if (kept[i]) p.frames.push_back(plan.frames[i]);
    }
    return p;
  };
  size_t lo = 0, hi = droppable.size() - 1;  // at least one is dropped
  if (!fits(keeping(0))) {
    hi = 0;  // all of them go; the next steps do the rest
  } else {
    while (lo < hi) {
      size_t mid = (lo + hi + 1) / 2;
      if (fits(keeping(mid))) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
  }
  const size_t before = plan.frames.size();
  plan = keeping(lo);
  return "left out " + std::to_string(before - plan.frames.size()) + " of " +
         std::to_string(droppable.size()) +
         " pictures of pages with a good text layer (their text stays), evenly spread";
}

}  // namespace reel::llm::fit
