// Shot-change detection with FFmpeg's scene score. Private to pipeline/: the decoder feeds it
// every frame in range when the policy is `scene`.
//
// The score of a frame is the one FFmpeg's `select` filter gives it (libavfilter/f_select.c,
// get_scene_score), so a threshold T cuts where `select='gt(scene,T)'` would:
//   mafd  = sum of |sample - previous sample| / number of samples, in 8-bit levels, over the
//           first plane at full resolution: luma for YUV (chroma is not looked at), every
//           channel for packed RGB; deeper samples scaled down to 8 bits;
//   score = clip(min(mafd, |mafd - previous mafd|) / 100, 0, 1).
// Subtracting the previous frame's mafd keeps steady motion from scoring as a cut; a hard cut
// scores about its mean level change / 100 (0.3 = a mean change of 30 levels out of 255). A frame
// is a cut when its score is above the threshold and at least `min_shot_s` seconds have passed
// since the previous cut. The first frame is always a cut (its score is 0, as in FFmpeg).
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
