// The lower_resolution fit step (fit_steps.h).
#include <algorithm>

#include "llm/context/fit_steps.h"
#include "pipeline/smart_resize.h"

namespace reel::llm::fit {

std::optional<std::string> LowerResolution(const ContextInput& in, const ContextOptions& o,
                                           const Fits& fits, Plan& plan) {
  if (o.transport == Transport::kFile || plan.frames.empty() || in.source_width <= 0 ||
      in.source_height <= 0) {
    return std::nullopt;
  }
  // The largest frame size that fits: smart resize of the source with the largest max_pixels in
  // [floor, current area) whose request fits (sizes grow with max_pixels).
  const int old_w = plan.width, old_h = plan.height;
  auto sized = [&](int64_t max_pixels) -> std::optional<Plan> {
    pipeline::SmartResizeOptions r;
    r.factor = o.resize_factor;
    r.min_pixels = std::min<int64_t>(3136, max_pixels);
    r.max_pixels = max_pixels;
    r.max_aspect_ratio = o.max_aspect_ratio;
    auto size = pipeline::SmartResize({in.source_width, in.source_height}, r);
    if (!size.ok()) return std::nullopt;
    Plan p = plan;
    p.width = size->width;
    p.height = size->height;
    p.max_pixels = max_pixels;
    return p;
  };
  const int64_t area = static_cast<int64_t>(plan.width) * plan.height;
  if (area <= o.min_pixels_floor) return std::nullopt;
  std::optional<Plan> lowest = sized(o.min_pixels_floor);
  if (!lowest) return std::nullopt;
  int64_t chosen = o.min_pixels_floor;
  if (fits(*lowest)) {
    int64_t lo = o.min_pixels_floor, hi = area - 1;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo + 1) / 2;
      std::optional<Plan> p = sized(mid);
      if (p && fits(*p)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    chosen = lo;
  }
  std::optional<Plan> next = sized(chosen);
  if (!next || (next->width == plan.width && next->height == plan.height)) return std::nullopt;
  plan = *next;
  return "frames " + std::to_string(old_w) + "x" + std::to_string(old_h) + " -> " +
         std::to_string(plan.width) + "x" + std::to_string(plan.height) + " (max_pixels " +
         std::to_string(chosen) + ", the largest that fits; floor " +
         std::to_string(o.min_pixels_floor) + ")";
}

}  // namespace reel::llm::fit
