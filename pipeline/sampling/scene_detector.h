// Shot-change detection with FFmpeg's scene score, private to pipeline/: a threshold T cuts where
// `select='gt(scene,T)'` would, cuts at least `min_shot_s` apart. Not thread-safe.
// The score: pipeline/README.md, "Scene detector".
#pragma once

#include <cstdint>
#include <vector>

namespace reel::pipeline {

// The planes of one picture that FFmpeg's scene score reads (in practice one: the luma plane of
// 8- or 10-bit YUV, a gray plane, or packed RGB as one plane of 3 or 4 samples per pixel).
// Samples of more than 8 bits take two bytes (native-endian). Not owned: valid for one Feed call.
struct ScenePicture {
  static constexpr int kMaxPlanes = 3;
  int planes = 0;
  const uint8_t* data[kMaxPlanes] = {};
  int linesize[kMaxPlanes] = {};  // bytes from one row to the next
  int width[kMaxPlanes] = {};     // samples per row
  int height[kMaxPlanes] = {};
  int bit_depth = 8;
};

class SceneDetector {
 public:
  SceneDetector(double threshold, double min_shot_s)
      : threshold_(threshold), min_shot_s_(min_shot_s) {}

  // Scores `picture` against the previous one and says whether it starts a new shot. `time_s`
  // must not decrease between calls. A picture whose geometry differs from the previous one
  // scores 0 (as in FFmpeg) and becomes the new reference.
  bool Feed(const ScenePicture& picture, double time_s);

  double last_score() const { return last_score_; }

 private:
  bool SameGeometry(const ScenePicture& picture) const;

  double threshold_;
  double min_shot_s_;
  bool has_previous_ = false;
  double last_cut_s_ = 0;
  double last_score_ = 0;
  double previous_mafd_ = 0;
  // The previous picture, rows packed tightly, one buffer per plane.
  ScenePicture previous_geometry_;
  std::vector<uint8_t> previous_[ScenePicture::kMaxPlanes];
};

}  // namespace reel::pipeline
