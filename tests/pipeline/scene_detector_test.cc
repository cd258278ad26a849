// The scene score's arithmetic (FFmpeg's select filter): pictures made here, scores worked out by
// hand.
#include "pipeline/sampling/scene_detector.h"

#include <gtest/gtest.h>

#include <cstring>

namespace reel::pipeline {
namespace {

// A one-plane 8-bit picture filled with `level`, with a row stride larger than its width.
struct Flat {
  Flat(int width, int height, int level) : pixels(static_cast<size_t>(width + 7) * height) {
    std::memset(pixels.data(), level, pixels.size());
    picture.planes = 1;
    picture.data[0] = pixels.data();
    picture.linesize[0] = width + 7;
    picture.width[0] = width;
    picture.height[0] = height;
  }
  std::vector<uint8_t> pixels;
  ScenePicture picture;
};

TEST(SceneDetectorTest, ScoreIsMeanLevelChangeOverHundred) {
  SceneDetector detector(0.3, 0);
  EXPECT_TRUE(detector.Feed(Flat(33, 17, 71).picture, 0.0));  // the first frame is a cut
  EXPECT_EQ(detector.last_score(), 0.0);
  EXPECT_TRUE(detector.Feed(Flat(33, 17, 126).picture, 0.1));  // +55 levels everywhere
  EXPECT_DOUBLE_EQ(detector.last_score(), 0.55);
  // The same change again: mafd 55, but |55 - 55| = 0, so steady change is no cut.
  EXPECT_FALSE(detector.Feed(Flat(33, 17, 71).picture, 0.2));
  EXPECT_DOUBLE_EQ(detector.last_score(), 0.0);
  // No change: mafd 0.
  EXPECT_FALSE(detector.Feed(Flat(33, 17, 71).picture, 0.3));
  EXPECT_DOUBLE_EQ(detector.last_score(), 0.0);
}

TEST(SceneDetectorTest, ThresholdIsStrictAsInSelectGt) {
  SceneDetector detector(0.3, 0);
  detector.Feed(Flat(16, 16, 0).picture, 0.0);
  EXPECT_FALSE(detector.Feed(Flat(16, 16, 30).picture, 0.1));  // score 0.30: not above 0.3
  EXPECT_DOUBLE_EQ(detector.last_score(), 0.3);
  SceneDetector lower(0.29, 0);
  lower.Feed(Flat(16, 16, 0).picture, 0.0);
  EXPECT_TRUE(lower.Feed(Flat(16, 16, 30).picture, 0.1));
}

TEST(SceneDetectorTest, MinimumShotLengthAndClipping) {
  SceneDetector detector(0.1, 1.0);
  detector.Feed(Flat(8, 8, 0).picture, 0.0);
  EXPECT_FALSE(detector.Feed(Flat(8, 8, 255).picture, 0.5));  // score 1 (clipped), too soon
  EXPECT_DOUBLE_EQ(detector.last_score(), 1.0);
  EXPECT_FALSE(detector.Feed(Flat(8, 8, 255).picture, 0.7));  // no change: 0
  EXPECT_TRUE(detector.Feed(Flat(8, 8, 0).picture, 1.2));     // 1 s after the last cut
  EXPECT_DOUBLE_EQ(detector.last_score(), 1.0);
}

TEST(SceneDetectorTest, TenBitSamplesCountInEightBitLevels) {
  std::vector<uint16_t> a(64, 100), b(64, 100 + 4 * 40);
  auto picture = [](std::vector<uint16_t>& samples) {
    ScenePicture p;
    p.planes = 1;
    p.bit_depth = 10;
    p.data[0] = reinterpret_cast<const uint8_t*>(samples.data());
    p.linesize[0] = 16;  // 8 samples of 2 bytes
    p.width[0] = 8;
    p.height[0] = 8;
    return p;
  };
  SceneDetector detector(0.3, 0);
  detector.Feed(picture(a), 0);
  EXPECT_TRUE(detector.Feed(picture(b), 0.1));
  EXPECT_DOUBLE_EQ(detector.last_score(), 0.4);  // 160 10-bit levels = 40 8-bit levels
}

TEST(SceneDetectorTest, ANewPictureSizeScoresZeroAndBecomesTheReference) {
  SceneDetector detector(0.1, 0);
  detector.Feed(Flat(16, 16, 0).picture, 0.0);
  EXPECT_FALSE(detector.Feed(Flat(32, 16, 200).picture, 0.1));
  EXPECT_EQ(detector.last_score(), 0.0);
  EXPECT_TRUE(detector.Feed(Flat(32, 16, 0).picture, 0.2));  // compared with the 32x16 one
  EXPECT_DOUBLE_EQ(detector.last_score(), 1.0);
}

}  // namespace
}  // namespace reel::pipeline
