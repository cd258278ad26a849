#include "pipeline/sampling/scene_detector.h"

#include <cmath>
#include <cstdlib>

namespace reel::pipeline {

bool SceneDetector::Feed(const uint8_t* thumbnail, double time_s) {
  constexpr int kPixels = kSide * kSide;
  constexpr int kBins = 32;
  std::vector<double> histogram(kBins, 0.0);
  for (int i = 0; i < kPixels; ++i) histogram[thumbnail[i] * kBins / 256] += 1.0 / kPixels;

  bool cut = false;
  if (!has_previous_) {
    cut = true;
    last_score_ = 1.0;
  } else {
    int64_t sad = 0;
    for (int i = 0; i < kPixels; ++i) sad += std::abs(thumbnail[i] - previous_[i]);
    double pixel_distance = static_cast<double>(sad) / (255.0 * kPixels);
    double histogram_distance = 0;
    for (int b = 0; b < kBins; ++b) {
      histogram_distance += std::fabs(histogram[b] - previous_histogram_[b]);
    }
    histogram_distance /= 2;
    last_score_ = (pixel_distance + histogram_distance) / 2;
    cut = last_score_ >= threshold_ && time_s - last_cut_s_ >= min_shot_s_;
  }
  if (cut) last_cut_s_ = time_s;
  previous_.assign(thumbnail, thumbnail + kPixels);
  previous_histogram_ = std::move(histogram);
  has_previous_ = true;
  return cut;
}

}  // namespace reel::pipeline
