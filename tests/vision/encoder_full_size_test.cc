// MiniMax-M3's full-size encoder (random weights with the released names and layout) on one
// 560x1008 frame pair: shapes, finite values, the two backends agreeing, and peak memory within
// the weights plus 2 GiB. Slow (about a minute per backend on 2 cores): label "slow".
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "tests/support/test_media.h"
#include "vision/encoder.h"
#include "vision/internal/kernels.h"
#include "vision/preprocess.h"
#include "vision/test_weights.h"

namespace reel::vision {
namespace {

double PeakRssBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024.0;
}

TEST(EncoderFullSizeSlowTest, OnePairAt560x1008) {
  const std::string dir = std::string(REEL_BINARY_DIR) + "/bench-media/m3_full_random";
  if (!std::filesystem::exists(dir + "/model.safetensors")) {
    ASSERT_TRUE(WriteRandomCheckpoint(dir, VisionModelConfig(), 1).ok());
  }
  std::vector<pipeline::Image> frames = {pipeline::MakeImage(1008, 560),
                                         pipeline::MakeImage(1008, 560)};
  std::mt19937 rng(3);
  for (pipeline::Image& f : frames) {
    for (uint8_t& v : f.pixels) v = static_cast<uint8_t>(rng() & 0xff);
  }
  const pipeline::Image* pointers[] = {&frames[0], &frames[1]};

  std::vector<Backend> backends = {Backend::kAuto};
  if (internal::Avx512Kernels() != nullptr) backends.push_back(Backend::kOpenBlas);
  std::vector<EncodedVisual> results;
  for (Backend backend : backends) {
    EncoderOptions options;
    options.backend = backend;
    auto encoder = VisionEncoder::Load(dir, options);
    ASSERT_TRUE(encoder.ok()) << encoder.status().ToString();
    const VisionModelConfig& c = (*encoder)->config();
    EXPECT_EQ(c.hidden_size, 1280);
    EXPECT_EQ(c.num_layers, 32);
    auto input = PatchesFromFrames(pointers, c);
    ASSERT_TRUE(input.ok()) << input.status().ToString();
    EXPECT_EQ(input->pairs * input->rows * input->cols, 2880);
    auto out = (*encoder)->Encode(*input);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->tokens.size(), 720u * 6144u);
    ASSERT_EQ(out->pooled.size(), 1280u);
    for (float v : out->tokens) ASSERT_TRUE(std::isfinite(v));
    for (float v : out->pooled) ASSERT_TRUE(std::isfinite(v));
    if (results.empty()) {
      // Only the first encoder has lived in this process so far.
      const double peak = PeakRssBytes();
      const double weights = static_cast<double>((*encoder)->weight_bytes());
      std::printf("%s: peak RSS %.2f GiB, weights %.2f GiB, over the weights %.2f GiB\n",
                  (*encoder)->Describe().c_str(), peak / (1 << 30), weights / (1 << 30),
                  (peak - weights) / (1 << 30));
      EXPECT_LT(peak - weights, 2.0 * (1 << 30));
    }
    results.push_back(std::move(*out));
  }
  if (results.size() == 2) {
    double max_diff = 0, max_ref = 0;
    for (size_t i = 0; i < results[0].tokens.size(); ++i) {
      max_diff = std::max(max_diff, std::fabs(double{results[0].tokens[i]} - results[1].tokens[i]));
      max_ref = std::max(max_ref, std::fabs(double{results[1].tokens[i]}));
    }
    std::printf("avx512 vs openblas tokens: relative error %.2e\n", max_diff / max_ref);
    EXPECT_LT(max_diff / max_ref, 1e-4);
  }
}

}  // namespace
}  // namespace reel::vision
