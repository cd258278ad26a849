// Shot-change detection on small grayscale thumbnails. Private to pipeline/: the decoder feeds it
// every frame in range when the policy is `scene`.
//
// The score of a frame is the mean of two distances to the previous frame, each in [0, 1]: the
// mean absolute pixel difference / 255, and half the L1 distance between 32-bin luma histograms.
// The first is sensitive to motion and layout, the second to overall content; a hard cut moves
// both. A frame is a cut when its score reaches the threshold and at least `min_shot_s` seconds
// have passed since the previous cut. The first frame is always a cut.
#pragma once

#include <cstdint>
#include <vector>

namespace reel::pipeline {

class SceneDetector {
 public:
  static constexpr int kSide = 64;  // thumbnails are kSide x kSide gray pixels

  SceneDetector(double threshold, double min_shot_s)
      : threshold_(threshold), min_shot_s_(min_shot_s) {}

  // Scores `thumbnail` (kSide * kSide bytes) against the previous one and says whether it starts
  // a new shot. `time_s` must not decrease between calls.
  bool Feed(const uint8_t* thumbnail, double time_s);

  double last_score() const { return last_score_; }

 private:
  double threshold_;
  double min_shot_s_;
  bool has_previous_ = false;
  double last_cut_s_ = 0;
  double last_score_ = 0;
  std::vector<uint8_t> previous_;
  std::vector<double> previous_histogram_;
};

}  // namespace reel::pipeline
