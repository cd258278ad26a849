// Sampling and resize arithmetic, table-driven against tests/reference/m3_reference.py (plain
// Python written from M3-REFERENCE's rules; regenerate the tables with
// `python3 tests/reference/m3_reference.py`).
#include <gtest/gtest.h>

#include <cmath>

#include "pipeline/sampling.h"
#include "pipeline/smart_resize.h"

namespace reel::pipeline {
namespace {

struct FpsCase {
  int total;
  double src_fps;
  double fps;
  int max_frames;
  std::vector<int> expected;
};

const FpsCase kFpsCases[] = {
    {300, 30.0, 1.0, 0, {0, 30, 60, 90, 120, 150, 180, 210, 240, 270, 299}},
    {300, 30.0, 2.0, 0, {0,   15,  30,  45,  60,  75,  90,  105, 120, 135, 150,
                         165, 180, 195, 210, 225, 240, 255, 270, 285, 299}},
    {301, 30.0, 1.0, 0, {0, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300}},
    {250, 25.0, 1.0, 0, {0, 25, 50, 75, 100, 125, 150, 175, 200, 225, 249}},
    {17, 29.97002997, 1.0, 0, {0, 16}},
    {9000, 30.0, 1.0, 32, {0,    270,  570,  870,  1140, 1440, 1740, 2010, 2310, 2610, 2910,
                           3180, 3480, 3780, 4050, 4350, 4650, 4950, 5220, 5520, 5820, 6090,
                           6390, 6690, 6990, 7260, 7560, 7860, 8130, 8430, 8730, 8999}},
    {100, 29.97002997, 0.5, 0, {0, 60, 99}},
    {60, 23.976023976023978, 3.0, 0, {0, 8, 16, 24, 32, 40, 48, 56, 59}},
    {10, 10.0, 2.0, 0, {0, 5, 9}},
    {1, 30.0, 1.0, 0, {0}},
    {2, 30.0, 1.0, 0, {0, 1}},
    {7, 7.0, 1.0, 0, {0, 6}},
    {1000, 23.976, 1.0, 10, {0, 96, 216, 336, 456, 552, 672, 792, 912, 999}},
    {500, 60.0, 7.0, 20, {0,   27,  54,  81,  108, 135, 162, 189, 216, 243,
                          270, 297, 324, 351, 378, 405, 432, 459, 486, 499}},
    {91, 30.0, 1.0, 1, {0}},
    {91, 30.0, 1.0, 2, {0, 90}},
    {333, 12.5, 0.3, 0, {0, 42, 84, 126, 168, 210, 252, 294, 332}},
};

FrameIndex ConstantRateIndex(int total, double src_fps) {
  FrameIndex index;
  index.time_base_num = 1;
  index.time_base_den = 1000000;
  index.avg_fps = src_fps;
  for (int i = 0; i < total; ++i) {
    index.frames.push_back({static_cast<int64_t>(std::llround(i / src_fps * 1e6)), 0, i, i == 0});
  }
  return index;
}

TEST(FpsRuleTest, MatchesTheReference) {
  for (const FpsCase& c : kFpsCases) {
    FrameIndex index = ConstantRateIndex(c.total, c.src_fps);
    SamplingOptions options;
    options.policy = SamplingPolicy::kFps;
    options.fps = c.fps;
    if (c.max_frames > 0) options.max_frames = c.max_frames;
    auto selected = SelectFrames(index, options);
    ASSERT_TRUE(selected.ok()) << selected.status().ToString();
    EXPECT_EQ(*selected, c.expected)
        << "total " << c.total << " src_fps " << c.src_fps << " fps " << c.fps;
  }
}

TEST(FpsRuleTest, OlderServersDoNotKeepTheLastFrame) {
  FrameIndex index = ConstantRateIndex(300, 30.0);
  SamplingOptions options;
  options.fps_keep_last = false;
  EXPECT_EQ(SelectFrames(index, options)->back(), 270);
}

struct SmartCase {
  int height, width;
  int64_t min_pixels, max_pixels;
  int want_height, want_width;  // 0: an error
};

const SmartCase kSmartCases[] = {
    {1080, 1920, 3136, 602112, 560, 1008},
    {1080, 1920, 3136, 451584, 504, 896},
    {1080, 1920, 200704, 1003520, 728, 1316},
    {1920, 1080, 3136, 602112, 1008, 560},
    {1920, 1080, 3136, 451584, 896, 504},
    {1920, 1080, 200704, 1003520, 1316, 728},
    {720, 1280, 3136, 602112, 560, 1008},
    {720, 1280, 3136, 451584, 504, 896},
    {720, 1280, 200704, 1003520, 728, 1288},
    {480, 854, 3136, 602112, 476, 840},
    {480, 854, 3136, 451584, 476, 840},
    {480, 854, 200704, 1003520, 476, 840},
    {240, 320, 3136, 602112, 252, 308},
    {240, 320, 3136, 451584, 252, 308},
    {240, 320, 200704, 1003520, 392, 532},
    {270, 480, 3136, 602112, 280, 476},
    {270, 480, 3136, 451584, 280, 476},
    {270, 480, 200704, 1003520, 336, 616},
    {180, 320, 3136, 602112, 168, 308},
    {180, 320, 3136, 451584, 168, 308},
    {180, 320, 200704, 1003520, 336, 616},
    {2160, 3840, 3136, 602112, 560, 1008},
    {2160, 3840, 3136, 451584, 504, 896},
    {2160, 3840, 200704, 1003520, 728, 1316},
    {1, 1, 3136, 602112, 56, 56},
    {1, 1, 3136, 451584, 56, 56},
    {1, 1, 200704, 1003520, 448, 448},
    {28, 28, 3136, 602112, 56, 56},
    {28, 28, 3136, 451584, 56, 56},
    {28, 28, 200704, 1003520, 448, 448},
    {14, 14, 3136, 602112, 56, 56},
    {14, 14, 3136, 451584, 56, 56},
    {14, 14, 200704, 1003520, 448, 448},
    {10, 1000, 3136, 602112, 28, 1008},
    {10, 1000, 3136, 451584, 28, 1008},
    {10, 1000, 200704, 1003520, 56, 4480},
    {100, 5000, 3136, 602112, 112, 5012},
    {100, 5000, 3136, 451584, 84, 4732},
    {100, 5000, 200704, 1003520, 112, 5012},
    {577, 1025, 3136, 602112, 560, 1008},
    {577, 1025, 3136, 451584, 504, 868},
    {577, 1025, 200704, 1003520, 588, 1036},
    {42, 42, 3136, 602112, 56, 56},
    {42, 42, 3136, 451584, 56, 56},
    {42, 42, 200704, 1003520, 448, 448},
    {5000, 3, 3136, 602112, 0, 0},
    {5000, 3, 3136, 451584, 0, 0},
    {5000, 3, 200704, 1003520, 0, 0},
    {1000, 5, 3136, 602112, 1008, 28},
    {1000, 5, 3136, 451584, 1008, 28},
    {1000, 5, 200704, 1003520, 6356, 56},
    {360, 640, 3136, 602112, 364, 644},
    {360, 640, 3136, 451584, 364, 644},
    {360, 640, 200704, 1003520, 364, 644},
    {576, 720, 3136, 602112, 588, 728},
    {576, 720, 3136, 451584, 588, 728},
    {576, 720, 200704, 1003520, 588, 728},
    {1088, 1920, 3136, 602112, 560, 1008},
    {1088, 1920, 3136, 451584, 504, 868},
    {1088, 1920, 200704, 1003520, 728, 1316},
    {35, 35, 3136, 602112, 56, 56},
    {35, 35, 3136, 451584, 56, 56},
    {35, 35, 200704, 1003520, 448, 448},
    {3000, 4000, 3136, 602112, 672, 896},
    {3000, 4000, 3136, 451584, 560, 756},
    {3000, 4000, 200704, 1003520, 840, 1148},
};

TEST(SmartResizeTest, MatchesTheReference) {
  for (const SmartCase& c : kSmartCases) {
    SmartResizeOptions options;
    options.min_pixels = c.min_pixels;
    options.max_pixels = c.max_pixels;
    auto size = SmartResize({c.width, c.height}, options);
    if (c.want_height == 0) {
      EXPECT_FALSE(size.ok()) << c.height << "x" << c.width;
      continue;
    }
    ASSERT_TRUE(size.ok()) << size.status().ToString();
    EXPECT_EQ(size->height, c.want_height) << c.height << "x" << c.width << " max " << c.max_pixels;
    EXPECT_EQ(size->width, c.want_width) << c.height << "x" << c.width << " max " << c.max_pixels;
  }
}

TEST(SmartResizeTest, HalvesRoundToEven) {
  // 854 / 28 = 30.5 rounds to 30 (Python), not 31.
  EXPECT_EQ(SmartResize({854, 480})->width, 840);
  EXPECT_EQ(RoundHalfEven(30.5), 30);
  EXPECT_EQ(RoundHalfEven(31.5), 32);
  EXPECT_EQ(RoundHalfEven(-0.5), 0);
}

TEST(SmartResizeTest, The1080pDefaultIs560x1008) {
  EXPECT_EQ(*SmartResize({1920, 1080}), (Size{1008, 560}));
}

TEST(DisplaySizeTest, WidthScaledBySampleAspectHeightKept) {
  EXPECT_EQ(DisplaySize({720, 480}, {32, 27}), (Size{853, 480}));    // 16:9 NTSC DVD: 853.3
  EXPECT_EQ(DisplaySize({720, 480}, {8, 9}), (Size{640, 480}));      // 4:3 NTSC DVD
  EXPECT_EQ(DisplaySize({720, 576}, {64, 45}), (Size{1024, 576}));   // 16:9 PAL DVD
  EXPECT_EQ(DisplaySize({352, 288}, {12, 11}), (Size{384, 288}));    // CIF
  EXPECT_EQ(DisplaySize({1440, 1080}, {4, 3}), (Size{1920, 1080}));  // HDV
  EXPECT_EQ(DisplaySize({200, 112}, {224, 225}), (Size{199, 112}));  // 199.1
  EXPECT_EQ(DisplaySize({3, 2}, {1, 2}), (Size{2, 2}));              // 1.5 rounds up
  EXPECT_EQ(DisplaySize({1, 9}, {1, 8}), (Size{1, 9}));              // never below 1
  EXPECT_EQ(DisplaySize({640, 360}, {1, 1}), (Size{640, 360}));
  EXPECT_EQ(DisplaySize({640, 360}, {0, 1}), (Size{640, 360}));  // unknown: square
  // The shape decides the model's size: 853x480 becomes 840x476, 720x480 728x476.
  EXPECT_EQ(*SmartResize(DisplaySize({720, 480}, {32, 27})), (Size{840, 476}));
  EXPECT_EQ(*SmartResize({720, 480}), (Size{728, 476}));
}

struct LongSideCase {
  int height, width, max_long_side, want_height, want_width;
};

const LongSideCase kLongSideCases[] = {
    {1080, 1920, 504, 308, 504},   {1080, 1920, 672, 392, 672},
    {1080, 1920, 1008, 588, 1008}, {1080, 1920, 2016, 1092, 1932},
    {1920, 1080, 504, 504, 308},   {1920, 1080, 672, 672, 392},
    {1920, 1080, 1008, 1008, 588}, {1920, 1080, 2016, 1932, 1092},
    {720, 1280, 504, 308, 504},    {720, 1280, 672, 392, 672},
    {720, 1280, 1008, 588, 1008},  {720, 1280, 2016, 728, 1288},
    {480, 854, 504, 308, 504},     {480, 854, 672, 392, 672},
    {480, 854, 1008, 504, 868},    {480, 854, 2016, 504, 868},
    {240, 320, 504, 252, 336},     {240, 320, 672, 252, 336},
    {240, 320, 1008, 252, 336},    {240, 320, 2016, 252, 336},
    {270, 480, 504, 280, 504},     {270, 480, 672, 280, 504},
    {270, 480, 1008, 280, 504},    {270, 480, 2016, 280, 504},
    {180, 320, 504, 196, 336},     {180, 320, 672, 196, 336},
    {180, 320, 1008, 196, 336},    {180, 320, 2016, 196, 336},
    {2160, 3840, 504, 308, 504},   {2160, 3840, 672, 392, 672},
    {2160, 3840, 1008, 588, 1008}, {2160, 3840, 2016, 1148, 2016},
    {1, 1, 504, 28, 28},           {1, 1, 672, 28, 28},
    {1, 1, 1008, 28, 28},          {1, 1, 2016, 28, 28},
    {28, 28, 504, 28, 28},         {28, 28, 672, 28, 28},
    {28, 28, 1008, 28, 28},        {28, 28, 2016, 28, 28},
    {14, 14, 504, 28, 28},         {14, 14, 672, 28, 28},
    {14, 14, 1008, 28, 28},        {14, 14, 2016, 28, 28},
    {10, 1000, 504, 28, 504},      {10, 1000, 672, 28, 672},
    {10, 1000, 1008, 28, 1008},    {10, 1000, 2016, 28, 1008},
    {100, 5000, 504, 28, 504},     {100, 5000, 672, 28, 672},
    {100, 5000, 1008, 28, 1008},   {100, 5000, 2016, 56, 2016},
    {577, 1025, 504, 308, 504},    {577, 1025, 672, 392, 672},
    {577, 1025, 1008, 588, 1008},  {577, 1025, 2016, 588, 1036},
    {42, 42, 504, 56, 56},         {42, 42, 672, 56, 56},
    {42, 42, 1008, 56, 56},        {42, 42, 2016, 56, 56},
    {5000, 3, 504, 504, 28},       {5000, 3, 672, 672, 28},
    {5000, 3, 1008, 1008, 28},     {5000, 3, 2016, 2016, 28},
    {1000, 5, 504, 504, 28},       {1000, 5, 672, 672, 28},
    {1000, 5, 1008, 1008, 28},     {1000, 5, 2016, 1008, 28},
    {360, 640, 504, 308, 504},     {360, 640, 672, 364, 644},
    {360, 640, 1008, 364, 644},    {360, 640, 2016, 364, 644},
    {576, 720, 504, 420, 504},     {576, 720, 672, 560, 672},
    {576, 720, 1008, 588, 728},    {576, 720, 2016, 588, 728},
    {1088, 1920, 504, 308, 504},   {1088, 1920, 672, 392, 672},
    {1088, 1920, 1008, 588, 1008}, {1088, 1920, 2016, 1092, 1932},
    {35, 35, 504, 56, 56},         {35, 35, 672, 56, 56},
    {35, 35, 1008, 56, 56},        {35, 35, 2016, 56, 56},
    {3000, 4000, 504, 392, 504},   {3000, 4000, 672, 504, 672},
    {3000, 4000, 1008, 756, 1008}, {3000, 4000, 2016, 1512, 2016},
};

TEST(LongSideResizeTest, MatchesTheReference) {
  for (const LongSideCase& c : kLongSideCases) {
    LongSideResizeOptions options;
    options.max_long_side = c.max_long_side;
    auto size = LongSideResize({c.width, c.height}, options);
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(*size, (Size{c.want_width, c.want_height}))
        << c.height << "x" << c.width << " long side " << c.max_long_side;
  }
}

TEST(ThinEvenlyTest, KeepsFirstAndLast) {
  std::vector<int> all;
  for (int i = 0; i < 100; ++i) all.push_back(i);
  auto thin = ThinEvenly(all, 5);
  EXPECT_EQ(thin, (std::vector<int>{0, 25, 50, 75, 99}));
  EXPECT_EQ(ThinEvenly(all, 1), std::vector<int>{0});
  EXPECT_EQ(ThinEvenly({1, 2}, 5), (std::vector<int>{1, 2}));
}

TEST(SamplingOptionsTest, RejectsNonsense) {
  SamplingOptions o;
  o.fps = -1;
  EXPECT_EQ(ValidateSamplingOptions(o).code(), ErrorCode::kInvalidArgument);
  o = {};
  o.start_s = 5;
  o.end_s = 4;
  EXPECT_FALSE(ValidateSamplingOptions(o).ok());
  o = {};
  o.policy = SamplingPolicy::kTimestamps;
  EXPECT_FALSE(ValidateSamplingOptions(o).ok());
  o.timestamps = {1.0, -2.0};
  EXPECT_FALSE(ValidateSamplingOptions(o).ok());
  o = {};
  o.max_frames = 0;
  EXPECT_FALSE(ValidateSamplingOptions(o).ok());
  EXPECT_FALSE(ParseSamplingPolicy("everything").ok());
  EXPECT_EQ(*ParseSamplingPolicy("scene"), SamplingPolicy::kScene);
}

TEST(FrameIndexTest, FrameAtUsesPresentationIntervals) {
  // Variable frame rate: frames at 0, 0.1, 0.5, 0.6 s.
  FrameIndex index;
  index.time_base_den = 1000;
  index.avg_fps = 10;
  for (int64_t ms : {0, 100, 500, 600}) index.frames.push_back({ms, 0, 0, false});
  EXPECT_EQ(index.FrameAt(0.0), 0);
  EXPECT_EQ(index.FrameAt(0.0999), 0);
  EXPECT_EQ(index.FrameAt(0.1), 1);
  EXPECT_EQ(index.FrameAt(0.4999), 1);
  EXPECT_EQ(index.FrameAt(0.55), 2);
  EXPECT_EQ(index.FrameAt(5.0), 3);
  EXPECT_EQ(index.FrameAt(-1.0), 0);
  EXPECT_DOUBLE_EQ(index.duration_s(), 0.7);
}

TEST(CountPolicyTest, SpreadsEvenlyIncludingFirstAndLast) {
  FrameIndex index = ConstantRateIndex(300, 30.0);
  SamplingOptions o;
  o.policy = SamplingPolicy::kCount;
  o.count = 4;
  EXPECT_EQ(*SelectFrames(index, o), (std::vector<int>{0, 99, 199, 299}));
  o.count = 1000;
  EXPECT_EQ(SelectFrames(index, o)->size(), 300u);
  o.count = 3;
  o.start_s = 2.0;
  o.end_s = 4.0;  // frames 60..119
  EXPECT_EQ(*SelectFrames(index, o), (std::vector<int>{60, 89, 119}));
}

TEST(TimestampsPolicyTest, MapsTimesToContainingFrames) {
  FrameIndex index = ConstantRateIndex(300, 30.0);
  SamplingOptions o;
  o.policy = SamplingPolicy::kTimestamps;
  o.timestamps = {0.0, 1.0, 1.01, 1.02, 9.99, 10.0, 50.0};
  // 1.0 s -> frame 30; 1.01 and 1.02 s are inside frame 30's interval [1.0, 1.0333);
  // 9.99 s -> frame 299; 10.0 and 50.0 s are past the end.
  EXPECT_EQ(*SelectFrames(index, o), (std::vector<int>{0, 30, 299}));
}

}  // namespace
}  // namespace reel::pipeline
