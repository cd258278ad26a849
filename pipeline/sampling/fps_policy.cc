// M3's greedy fixed-rate rule (M3-REFERENCE "Video frames: sampling"; SGLang's
// _compute_sampled_frame_indices and vLLM's MiniMaxM3VideoBackend). It works on frame indices and
// `index / src_fps` times, not on presentation timestamps, exactly as the servers do, so the frames
// Reel sends are the frames the server would have picked from the same file.
#include <cmath>

#include "pipeline/sampling/policies.h"

namespace reel::pipeline::policies {

std::vector<int> SelectByFps(const FrameIndex& index, int first, int last,
                             const SamplingOptions& options) {
  std::vector<int> kept;
  const int total = last - first;
  const double src_fps = index.avg_fps;
  if (total <= 0) return kept;
  if (src_fps <= 0) return {first};
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

}  // namespace reel::pipeline::policies
