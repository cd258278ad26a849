// M3's greedy fixed-rate rule (docs/m3-reference.md "Video frames: sampling"; SGLang's
// _compute_sampled_frame_indices and vLLM's MiniMaxM3VideoBackend), on one of two timelines:
//
// - index: times are `index / src_fps`, exactly as the servers compute them, so on a stream whose
//   frames are evenly spaced the frames Reel sends are the frames the server would pick;
// - time: times are the frames' presentation times. The same rule: keep the first frame, then the
//   first frame at or after `t_prev + 1/fps - eps` (and after the last kept one), then the last
//   frame if it lies more than eps after the last kept one. On an evenly spaced stream it picks
//   what the index rule picks; on one that is not (dropped-frame AVI slots, variable-rate screen
//   recordings) it keeps one frame per interval of real time, where the index rule would keep one
//   per `src_fps / fps` frames wherever they fall.
//
// ResolveFpsTimeline (sampling.cc) chooses between them.
#include <cmath>

#include "pipeline/sampling/policies.h"

namespace reel::pipeline::policies {
namespace {

std::vector<int> ByIndex(const FrameIndex& index, int first, int last,
                         const SamplingOptions& options) {
  std::vector<int> kept;
  const int total = last - first;
  const double src_fps = index.avg_fps;
  // Each expression below mirrors the reference's Python, in the same order, in doubles.
  const double interval = 1.0 / options.fps;
  const double eps = options.fps_epsilon;
  double prev_kept_ts = 0;
  while (true) {
    int64_t target;
    if (kept.empty()) {
      target = 0;
    } else {
      double target_ts = prev_kept_ts + interval - eps;
      target = static_cast<int64_t>(std::ceil(target_ts * src_fps));
      target = std::max<int64_t>(target, kept.back() + 1);
    }
    if (target >= total) break;
    kept.push_back(static_cast<int>(target));
    prev_kept_ts = static_cast<double>(target) / src_fps;
  }
  const int last_frame = total - 1;
  const double last_ts = static_cast<double>(last_frame) / src_fps;
  if (options.fps_keep_last && !kept.empty() && kept.back() != last_frame &&
      last_ts - prev_kept_ts > eps) {
    kept.push_back(last_frame);
  }
  for (int& k : kept) k += first;
  return kept;
}

std::vector<int> ByTime(const FrameIndex& index, int first, int last,
                        const SamplingOptions& options) {
  std::vector<int> kept;
  const double interval = 1.0 / options.fps;
  const double eps = options.fps_epsilon;
  const double origin = index.time_s(first);
  auto time = [&](int i) { return index.time_s(i) - origin; };
  double prev_kept_ts = 0;
  kept.push_back(first);
  while (true) {
    // The first frame after the last kept one whose time is at least the target (times ascend).
    const double target_ts = prev_kept_ts + interval - eps;
    int target = kept.back() + 1, end = last;
    while (target < end) {
      const int mid = target + (end - target) / 2;
      if (time(mid) < target_ts) {
        target = mid + 1;
      } else {
        end = mid;
      }
    }
    if (target >= last) break;
    kept.push_back(target);
    prev_kept_ts = time(target);
  }
  const int last_frame = last - 1;
  if (options.fps_keep_last && kept.back() != last_frame && time(last_frame) - prev_kept_ts > eps) {
    kept.push_back(last_frame);
  }
  return kept;
}

}  // namespace

std::vector<int> SelectByFps(const FrameIndex& index, int first, int last,
                             const SamplingOptions& options) {
  if (last <= first) return {};
  if (ResolveFpsTimeline(index, options) == FpsTimeline::kTime) {
    return ByTime(index, first, last, options);
  }
  return ByIndex(index, first, last, options);
}

}  // namespace reel::pipeline::policies
