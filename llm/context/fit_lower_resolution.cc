// The lower_resolution fit step (fit_steps.h).
#include <algorithm>

#include "llm/context/fit_steps.h"
#include "pipeline/smart_resize.h"

namespace reel::llm::fit {
namespace {

// Smart resize to at most `max_pixels` (and at least 3136, or max_pixels when smaller).
pipeline::SmartResizeOptions ResizeOptions(const ContextOptions& o, int64_t max_pixels) {
  pipeline::SmartResizeOptions r;
  r.factor = o.resize_factor;
  r.min_pixels = std::min<int64_t>(3136, max_pixels);
  r.max_pixels = max_pixels;
  r.max_aspect_ratio = o.max_aspect_ratio;
  return r;
}

// The largest max_pixels in [floor_pixels, area) whose plan, sized(max_pixels), fits (plans
// grow with max_pixels, so a binary search); floor_pixels itself when even that does not fit.
// nullopt when the frames are no larger than the floor already or the floor cannot be sized.
template <typename Sized>
std::optional<int64_t> LargestFitting(int64_t floor_pixels, int64_t area, const Sized& sized,
                                      const Fits& fits) {
  if (area <= floor_pixels) return std::nullopt;
  std::optional<Plan> lowest = sized(floor_pixels);
  if (!lowest) return std::nullopt;
  if (!fits(*lowest)) return floor_pixels;
  int64_t lo = floor_pixels, hi = area - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    std::optional<Plan> p = sized(mid);
    if (p && fits(*p)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Several files: one max_pixels for all (each file smart-resized from its own shape, never
// enlarged), the largest whose request fits.
std::optional<std::string> LowerFiles(const ContextInput& in, const ContextOptions& o,
                                      const Fits& fits, Plan& plan) {
  auto sized = [&](int64_t max_pixels) -> std::optional<Plan> {
    const pipeline::SmartResizeOptions r = ResizeOptions(o, max_pixels);
    Plan p = plan;
    for (size_t s = 0; s < in.sources.size(); ++s) {
      const ContextSource& src = in.sources[s];
      if (src.source_width <= 0 || src.source_height <= 0) continue;
      auto size = pipeline::SmartResize({src.source_width, src.source_height}, r);
      if (!size.ok()) return std::nullopt;
      if (static_cast<int64_t>(size->width) * size->height <
          static_cast<int64_t>(p.sizes[s].width) * p.sizes[s].height) {
        p.sizes[s] = {size->width, size->height};
      }
    }
    if (!p.sizes.empty()) {
      p.width = p.sizes[0].width;
      p.height = p.sizes[0].height;
    }
    p.max_pixels = max_pixels;
    return p;
  };
  int64_t area = 0;
  for (const FrameSize& size : plan.sizes) {
    area = std::max(area, static_cast<int64_t>(size.width) * size.height);
  }
  const std::optional<int64_t> chosen = LargestFitting(o.min_pixels_floor, area, sized, fits);
  if (!chosen) return std::nullopt;
  std::optional<Plan> next = sized(*chosen);
  if (!next) return std::nullopt;
  std::string sizes;
  bool changed = false;
  for (size_t s = 0; s < plan.sizes.size(); ++s) {
    changed = changed || next->sizes[s].width != plan.sizes[s].width ||
              next->sizes[s].height != plan.sizes[s].height;
    sizes += (s ? ", " : "") + std::to_string(plan.sizes[s].width) + "x" +
             std::to_string(plan.sizes[s].height) + " -> " + std::to_string(next->sizes[s].width) +
             "x" + std::to_string(next->sizes[s].height);
  }
  if (!changed) return std::nullopt;
  plan = *next;
  return "frames of " + std::to_string(plan.sizes.size()) + " files " + sizes + " (max_pixels " +
         std::to_string(*chosen) + " for all, the largest that fits; floor " +
         std::to_string(o.min_pixels_floor) + ")";
}

}  // namespace

std::optional<std::string> LowerResolution(const ContextInput& in, const ContextOptions& o,
                                           const Fits& fits, Plan& plan) {
  if (o.transport != Transport::kFile && !plan.frames.empty() && !in.sources.empty()) {
    return LowerFiles(in, o, fits, plan);
  }
  if (o.transport == Transport::kFile || plan.frames.empty() || in.source_width <= 0 ||
      in.source_height <= 0) {
    return std::nullopt;
  }
  // The largest frame size that fits: smart resize of the source with the largest max_pixels in
  // [floor, current area) whose request fits (sizes grow with max_pixels).
  const int old_w = plan.width, old_h = plan.height;
  auto sized = [&](int64_t max_pixels) -> std::optional<Plan> {
    const pipeline::SmartResizeOptions r = ResizeOptions(o, max_pixels);
    auto size = pipeline::SmartResize({in.source_width, in.source_height}, r);
    if (!size.ok()) return std::nullopt;
    Plan p = plan;
    p.width = size->width;
    p.height = size->height;
    p.max_pixels = max_pixels;
    return p;
  };
  const int64_t area = static_cast<int64_t>(plan.width) * plan.height;
  const std::optional<int64_t> chosen = LargestFitting(o.min_pixels_floor, area, sized, fits);
  if (!chosen) return std::nullopt;
  std::optional<Plan> next = sized(*chosen);
  if (!next || (next->width == plan.width && next->height == plan.height)) return std::nullopt;
  plan = *next;
  return "frames " + std::to_string(old_w) + "x" + std::to_string(old_h) + " -> " +
         std::to_string(plan.width) + "x" + std::to_string(plan.height) + " (max_pixels " +
         std::to_string(*chosen) + ", the largest that fits; floor " +
         std::to_string(o.min_pixels_floor) + ")";
}

}  // namespace reel::llm::fit
