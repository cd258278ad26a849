// The split fit step's segments (fit_steps.h).
#include "llm/context/fit_steps.h"

namespace reel::llm::fit {

Result<std::vector<std::pair<size_t, size_t>>> SplitRanges(
    const ContextInput& in, const Plan& plan, int64_t limit,
    const std::function<int64_t(size_t, size_t)>& segment_cost,
    const std::function<bool(size_t)>& fits_frame_limit) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t first = 0;
  while (first < plan.frames.size()) {
    size_t last = first + 1;
    if (segment_cost(first, last) > limit) {
      return LimitExceeded(in.item_path + ": one frame with its text needs " +
                           std::to_string(segment_cost(first, last)) + " tokens; the limit is " +
                           std::to_string(limit));
    }
    while (last < plan.frames.size() && fits_frame_limit(last + 1 - first) &&
           segment_cost(first, last + 1) <= limit) {
      ++last;
    }
    ranges.push_back({first, last});
    first = last;
  }
  return ranges;
}

Result<std::vector<std::pair<size_t, size_t>>> SplitPages(
    const ContextInput& in, size_t pages, int64_t limit,
    const std::function<int64_t(size_t, size_t)>& segment_cost) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t first = 0;
  while (first < pages) {
    size_t last = first + 1;
    if (segment_cost(first, last) > limit) {
      return LimitExceeded(in.item_path + ": one page with its text and picture needs " +
                           std::to_string(segment_cost(first, last)) + " tokens; the limit is " +
                           std::to_string(limit));
    }
    while (last < pages && segment_cost(first, last + 1) <= limit) ++last;
    ranges.push_back({first, last});
    first = last;
  }
  return ranges;
}

}  // namespace reel::llm::fit
