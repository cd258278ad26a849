// Sampling and resize arithmetic, table-driven against tests/reference/m3_reference.py (plain
// Python written from docs/m3-reference.md's rules; regenerate the tables with
// `python3 tests/reference/m3_reference.py`).
#include <gtest/gtest.h>

#include <algorithm>
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

// The rule on presentation times (fps_timeline: time), and the constant-rate test that chooses
// it under fps_timeline: auto; rows from tests/reference/m3_reference.py.
struct TimeCase {
  const char* name;
  std::vector<int64_t> times_us;
  double avg_fps;
  double fps;
  bool keep_last;
  std::vector<int> expected;
};

const TimeCase kTimeCases[] = {
    {"tree_avi_slots",
     {0,        733337,   1133339,  1600008,  2066677,  2466679, 2866681, 3266683,
      3733352,  4066687,  4466689,  4800024,  5200026,  5600028, 5933363, 6333365,
      7000035,  7400037,  7800039,  8200041,  8600043,  9066712, 9400047, 9800049,
      10200051, 10666720, 11000055, 11400057, 11800059, 12266728},
     14.999925000374999,
     1.0,
     true,
     {0, 2, 5, 8, 11, 14, 16, 19, 22, 25, 28, 29}},
    {"tree_avi_slots_2fps",
     {0,        733337,   1133339,  1600008,  2066677,  2466679, 2866681, 3266683,
      3733352,  4066687,  4466689,  4800024,  5200026,  5600028, 5933363, 6333365,
      7000035,  7400037,  7800039,  8200041,  8600043,  9066712, 9400047, 9800049,
      10200051, 10666720, 11000055, 11400057, 11800059, 12266728},
     14.999925000374999,
     2.0,
     true,
     {0, 1, 3, 5, 7, 9, 11, 13, 15, 16, 18, 20, 22, 24, 26, 28, 29}},
    {"still_stretch",
     {0,       100000,  200000,  300000,  400000,  500000,  600000,  700000,  800000,  900000,
      1000000, 1100000, 1200000, 1300000, 1400000, 1500000, 1600000, 1700000, 1800000, 1900000,
      8000000, 8100000, 8200000, 8300000, 8400000, 8500000, 8600000, 8700000, 8800000, 8900000,
      9000000, 9100000, 9200000, 9300000, 9400000, 9500000, 9600000, 9700000, 9800000, 9900000},
     4.0,
     1.0,
     true,
     {0, 10, 20, 30, 39}},
    {"still_stretch_no_last",
     {0,       100000,  200000,  300000,  400000,  500000,  600000,  700000,  800000,  900000,
      1000000, 1100000, 1200000, 1300000, 1400000, 1500000, 1600000, 1700000, 1800000, 1900000,
      8000000, 8100000, 8200000, 8300000, 8400000, 8500000, 8600000, 8700000, 8800000, 8900000,
      9000000, 9100000, 9200000, 9300000, 9400000, 9500000, 9600000, 9700000, 9800000, 9900000},
     4.0,
     1.0,
     false,
     {0, 10, 20, 30}},
    {"still_stretch_half_fps",
     {0,       100000,  200000,  300000,  400000,  500000,  600000,  700000,  800000,  900000,
      1000000, 1100000, 1200000, 1300000, 1400000, 1500000, 1600000, 1700000, 1800000, 1900000,
      8000000, 8100000, 8200000, 8300000, 8400000, 8500000, 8600000, 8700000, 8800000, 8900000,
      9000000, 9100000, 9200000, 9300000, 9400000, 9500000, 9600000, 9700000, 9800000, 9900000},
     4.0,
     0.5,
     true,
     {0, 20, 39}},
    {"jittered_30fps",
     {0,       37333,   66667,   100000,  137333,  166667,  200000,  237333,  266667,  300000,
      337333,  366667,  400000,  437333,  466667,  500000,  537333,  566667,  600000,  637333,
      666667,  700000,  737333,  766667,  800000,  837333,  866667,  900000,  937333,  966667,
      1000000, 1037333, 1066667, 1100000, 1137333, 1166667, 1200000, 1237333, 1266667, 1300000,
      1337333, 1366667, 1400000, 1437333, 1466667, 1500000, 1537333, 1566667, 1600000, 1637333,
      1666667, 1700000, 1737333, 1766667, 1800000, 1837333, 1866667, 1900000, 1937333, 1966667,
      2000000, 2037333, 2066667, 2100000, 2137333, 2166667, 2200000, 2237333, 2266667, 2300000,
      2337333, 2366667, 2400000, 2437333, 2466667, 2500000, 2537333, 2566667, 2600000, 2637333,
      2666667, 2700000, 2737333, 2766667, 2800000, 2837333, 2866667, 2900000, 2937333, 2966667},
     30.0,
     1.0,
     true,
     {0, 30, 60, 89}},
    {"bursts",
     {0, 50000, 100000, 150000, 2500000, 2550000, 2600000, 3900000, 4000000, 6700000, 6750000,
      9990000},
     1.2,
     1.0,
     true,
     {0, 4, 7, 9, 11}},
    {"bursts_3fps",
     {0, 50000, 100000, 150000, 2500000, 2550000, 2600000, 3900000, 4000000, 6700000, 6750000,
      9990000},
     1.2,
     3.0,
     true,
     {0, 4, 7, 9, 11}},
    {"cfr_25fps",
     {0,       40000,   80000,   120000,  160000,  200000,  240000,  280000,  320000,  360000,
      400000,  440000,  480000,  520000,  560000,  600000,  640000,  680000,  720000,  760000,
      800000,  840000,  880000,  920000,  960000,  1000000, 1040000, 1080000, 1120000, 1160000,
      1200000, 1240000, 1280000, 1320000, 1360000, 1400000, 1440000, 1480000, 1520000, 1560000,
      1600000, 1640000, 1680000, 1720000, 1760000, 1800000, 1840000, 1880000, 1920000, 1960000,
      2000000, 2040000, 2080000, 2120000, 2160000, 2200000, 2240000, 2280000, 2320000, 2360000,
      2400000, 2440000, 2480000, 2520000, 2560000, 2600000, 2640000, 2680000, 2720000, 2760000,
      2800000, 2840000, 2880000, 2920000, 2960000, 3000000, 3040000, 3080000, 3120000, 3160000,
      3200000, 3240000, 3280000, 3320000, 3360000, 3400000, 3440000, 3480000, 3520000, 3560000,
      3600000, 3640000, 3680000, 3720000, 3760000, 3800000, 3840000, 3880000, 3920000, 3960000,
      4000000},
     25.0,
     1.0,
     true,
     {0, 25, 50, 75, 100}},
    {"one_frame", {0}, 25.0, 1.0, true, {0}},
    {"two_frames_close", {0, 40}, 25.0, 1.0, true, {0}},
};

FrameIndex IndexAt(const std::vector<int64_t>& times_us, double avg_fps) {
  FrameIndex index;
  index.time_base_num = 1;
  index.time_base_den = 1000000;
  index.avg_fps = avg_fps;
  for (size_t i = 0; i < times_us.size(); ++i) {
    index.frames.push_back({times_us[i], 0, static_cast<int>(i), i == 0});
  }
  return index;
}

TEST(FpsTimeRuleTest, MatchesTheReference) {
  for (const TimeCase& c : kTimeCases) {
    FrameIndex index = IndexAt(c.times_us, c.avg_fps);
    SamplingOptions options;
    options.fps = c.fps;
    options.fps_keep_last = c.keep_last;
    options.fps_timeline = FpsTimeline::kTime;
    auto selected = SelectFrames(index, options);
    ASSERT_TRUE(selected.ok()) << selected.status().ToString();
    EXPECT_EQ(*selected, c.expected) << c.name;
  }
}

TEST(FpsTimeRuleTest, IsTheIndexRuleOnEvenlySpacedFrames) {
  for (const FpsCase& c : kFpsCases) {
    FrameIndex index = ConstantRateIndex(c.total, c.src_fps);
    SamplingOptions options;
    options.fps = c.fps;
    if (c.max_frames > 0) options.max_frames = c.max_frames;
    options.fps_timeline = FpsTimeline::kTime;
    auto by_time = SelectFrames(index, options);
    options.fps_timeline = FpsTimeline::kIndex;
    auto by_index = SelectFrames(index, options);
    options.fps_timeline = FpsTimeline::kAuto;
    auto automatic = SelectFrames(index, options);
    EXPECT_EQ(*by_time, c.expected) << "total " << c.total << " src_fps " << c.src_fps;
    EXPECT_EQ(*by_index, c.expected);
    EXPECT_EQ(*automatic, c.expected);
    EXPECT_EQ(ResolveFpsTimeline(index, options), FpsTimeline::kIndex);
  }
}

TEST(FpsTimeRuleTest, AutoUsesTimesWhereFramesAreNotEvenlySpaced) {
  // tree.avi's pattern: 30 frames in 185 slots of 1/15 s. The index rule at 1 fps keeps every
  // 15th frame (one every ~6 s); the time rule keeps one a second or so.
  const TimeCase& tree = kTimeCases[0];
  ASSERT_STREQ(tree.name, "tree_avi_slots");
  FrameIndex index = IndexAt(tree.times_us, tree.avg_fps);
  EXPECT_FALSE(index.constant_rate());
  SamplingOptions options;
  EXPECT_EQ(ResolveFpsTimeline(index, options), FpsTimeline::kTime);
  EXPECT_EQ(*SelectFrames(index, options), tree.expected);
  options.fps_timeline = FpsTimeline::kIndex;
  EXPECT_EQ(*SelectFrames(index, options), (std::vector<int>{0, 15, 29}));
  // Trimming: times count from the first frame in range.
  options.fps_timeline = FpsTimeline::kTime;
  options.start_s = 3.0;
  auto trimmed = SelectFrames(index, options);
  ASSERT_FALSE(trimmed->empty());
  EXPECT_EQ(trimmed->front(), 7);  // the first frame at or after 3 s (3.27 s)
  EXPECT_EQ(trimmed->back(), 29);  // and the last
  for (size_t i = 1; i + 1 < trimmed->size(); ++i) {
    EXPECT_GE(index.time_s((*trimmed)[i]) - index.time_s((*trimmed)[i - 1]), 1.0 - 1e-4);
  }
}

TEST(FpsTimeRuleTest, WithoutAnAverageRateTimesAreUsed) {
  FrameIndex index = ConstantRateIndex(100, 25.0);
  index.avg_fps = 0;
  SamplingOptions options;
  options.fps_timeline = FpsTimeline::kIndex;
  EXPECT_EQ(ResolveFpsTimeline(index, options), FpsTimeline::kTime);
  EXPECT_EQ(*SelectFrames(index, options), (std::vector<int>{0, 25, 50, 75, 99}));
}

struct GridRateCase {
  const char* name;
  int frames;
  int64_t num, den;
  std::vector<int> dropped;
  double avg_fps;
  bool expected;
};

const GridRateCase kGridRateCases[] = {
    {"cfr_30", 300, 30, 1, {}, 30.0, true},
    {"cfr_ntsc", 600, 30000, 1001, {}, 29.97002997002997, true},
    {"one_dropped_frame", 300, 30, 1, {150}, 30.0, true},
    {"two_dropped_frames", 300, 30, 1, {10, 11}, 30.0, false},
    {"slow_drift_half_percent", 300, 2985, 100, {}, 30.0, true},
    {"fast_drift_3_percent", 300, 291, 10, {}, 30.0, false},
    {"stated_rate_too_high", 100, 24, 1, {}, 30.0, false},
    {"one_frame", 1, 30, 1, {}, 30.0, true},
};

struct ListRateCase {
  const char* name;
  std::vector<int64_t> times_us;
  double avg_fps;
  bool expected;
};

const ListRateCase kListRateCases[] = {
    {"tree_avi",
     {0,        733337,   1133339,  1600008,  2066677,  2466679, 2866681, 3266683,
      3733352,  4066687,  4466689,  4800024,  5200026,  5600028, 5933363, 6333365,
      7000035,  7400037,  7800039,  8200041,  8600043,  9066712, 9400047, 9800049,
      10200051, 10666720, 11000055, 11400057, 11800059, 12266728},
     14.999925000374999,
     false},
    {"still_stretch",
     {0,       100000,  200000,  300000,  400000,  500000,  600000,  700000,  800000,  900000,
      1000000, 1100000, 1200000, 1300000, 1400000, 1500000, 1600000, 1700000, 1800000, 1900000,
      8000000, 8100000, 8200000, 8300000, 8400000, 8500000, 8600000, 8700000, 8800000, 8900000,
      9000000, 9100000, 9200000, 9300000, 9400000, 9500000, 9600000, 9700000, 9800000, 9900000},
     4.0,
     false},
    {"still_stretch_stated_10",
     {0,       100000,  200000,  300000,  400000,  500000,  600000,  700000,  800000,  900000,
      1000000, 1100000, 1200000, 1300000, 1400000, 1500000, 1600000, 1700000, 1800000, 1900000,
      8000000, 8100000, 8200000, 8300000, 8400000, 8500000, 8600000, 8700000, 8800000, 8900000,
      9000000, 9100000, 9200000, 9300000, 9400000, 9500000, 9600000, 9700000, 9800000, 9900000},
     10.0,
     false},
    {"jittered_30fps",
     {0,       37333,   66667,   100000,  137333,  166667,  200000,  237333,  266667,  300000,
      337333,  366667,  400000,  437333,  466667,  500000,  537333,  566667,  600000,  637333,
      666667,  700000,  737333,  766667,  800000,  837333,  866667,  900000,  937333,  966667,
      1000000, 1037333, 1066667, 1100000, 1137333, 1166667, 1200000, 1237333, 1266667, 1300000,
      1337333, 1366667, 1400000, 1437333, 1466667, 1500000, 1537333, 1566667, 1600000, 1637333,
      1666667, 1700000, 1737333, 1766667, 1800000, 1837333, 1866667, 1900000, 1937333, 1966667,
      2000000, 2037333, 2066667, 2100000, 2137333, 2166667, 2200000, 2237333, 2266667, 2300000,
      2337333, 2366667, 2400000, 2437333, 2466667, 2500000, 2537333, 2566667, 2600000, 2637333,
      2666667, 2700000, 2737333, 2766667, 2800000, 2837333, 2866667, 2900000, 2937333, 2966667},
     30.0,
     true},
};

TEST(ConstantRateTest, MatchesTheReference) {
  for (const GridRateCase& c : kGridRateCases) {
    std::vector<int64_t> times;
    for (int i = 0; i < c.frames; ++i) {
      if (std::find(c.dropped.begin(), c.dropped.end(), i) != c.dropped.end()) continue;
      times.push_back(int64_t{i} * 1000000 * c.den / c.num);
    }
    EXPECT_EQ(IndexAt(times, c.avg_fps).constant_rate(), c.expected) << c.name;
    std::vector<double> seconds;
    for (int64_t t : times) seconds.push_back(static_cast<double>(t) / 1e6);
    EXPECT_EQ(IsConstantRate(seconds, c.avg_fps), c.expected) << c.name;
  }
  for (const ListRateCase& c : kListRateCases) {
    EXPECT_EQ(IndexAt(c.times_us, c.avg_fps).constant_rate(), c.expected) << c.name;
  }
}

TEST(ConstantRateTest, StreamsWithoutTimestampsAreConstantRate) {
  FrameIndex index = IndexAt({0, 5000000, 5100000}, 25.0);
  EXPECT_FALSE(index.constant_rate());
  index.has_timestamps = false;  // times were synthesized at the average rate
  EXPECT_TRUE(index.constant_rate());
}

TEST(FpsTimelineTest, NamesRoundTrip) {
  for (FpsTimeline t : {FpsTimeline::kAuto, FpsTimeline::kIndex, FpsTimeline::kTime}) {
    EXPECT_EQ(*ParseFpsTimeline(FpsTimelineName(t)), t);
  }
  EXPECT_FALSE(ParseFpsTimeline("pts").ok());
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

// Found by the media fuzzer (a 38x2432 MPEG-4 video, max_pixels 12,544): when the short side
// floors to one patch row, the floor of 28 holds it there and the area stays above max_pixels,
// as in the reference (python3 -c "import m3_reference as m; print(m.smart_resize(2432, 38, 28,
// 3136, 12544))" prints (896, 28)).
TEST(SmartResizeTest, AShortSideAtTheFloorMayLeaveTheAreaAboveMaxPixels) {
  SmartResizeOptions options;
  options.max_pixels = 12544;
  auto size = SmartResize({38, 2432}, options);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, (Size{28, 896}));
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
