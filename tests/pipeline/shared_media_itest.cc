// The real-media corpus in ../shared/media (skipped when absent): every file probes, samples
// without crashing, and Reel's upright first frame matches the ffmpeg command line's (which
// auto-rotates and honours colour range and matrix) in size and, closely, in pixels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "pipeline/frame_sampler.h"
#include "pipeline/probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_environment.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

struct CorpusFile {
  std::string name;
  int frames;            // frames the packet index must find
  bool damaged = false;  // decord_corrupted.mp4
};

// Names the parameter in test listings instead of dumping its bytes.
void PrintTo(const CorpusFile& c, std::ostream* os) { *os << c.name; }

class SharedMediaTest : public ::testing::TestWithParam<CorpusFile> {};

void ExpectMatchesFfmpeg(const std::string& path, const CorpusFile& c);

TEST_P(SharedMediaTest, MatchesTheFfmpegCommandLine) {
  std::string dir = reel::testing::SharedMediaDir();
  if (dir.empty()) REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << "../shared/media is not present";
  ExpectMatchesFfmpeg(dir + "/" + GetParam().name, GetParam());
}

// Real camera clips from a Debian package (fetched by scripts/fetch-real-media).
TEST(RealMediaTest, MatchesTheFfmpegCommandLine) {
  for (const CorpusFile& c :
       {CorpusFile{"real-small.mp4", 166}, CorpusFile{"real-small.mkv", 147}}) {
    std::string path = reel::testing::RealMedia(c.name);
    if (path.empty())
      REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "cannot fetch the real clips (offline?)";
    SCOPED_TRACE(c.name);
    ExpectMatchesFfmpeg(path, c);
  }
}

void ExpectMatchesFfmpeg(const std::string& path, const CorpusFile& c) {
  auto info = Probe(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_TRUE(info->best_video.has_value());
  const StreamInfo& v = info->streams[*info->best_video];
  EXPECT_EQ(v.frames, c.frames);

  SampleOptions o;
  o.sampling.policy = SamplingPolicy::kFps;
  o.sampling.fps = 1000;  // every frame
  o.resize.mode = ResizeMode::kNone;
  // The ffmpeg command line below keeps the stored shape (test_non_zero_start.mp4 has 224:225
  // pixels); the shown shape is checked against ffmpeg's scale=iw*sar:ih in anamorphic_itest.
  o.resize.shape = FrameShape::kStorage;
  std::vector<SampledFrame> frames;
  auto report = SampleVideo(path, o, [&](SampledFrame&& f) {
    if (frames.empty() || f.source_frame == 0) frames.push_back(std::move(f));
    return Status::Ok();
  });
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->source_frames, c.frames);
  EXPECT_EQ(report->partial(), c.damaged);
  if (c.damaged) return;
  EXPECT_EQ(report->returned, c.frames);
  ASSERT_FALSE(frames.empty());
  const Image& mine = frames.front().image;
  ASSERT_EQ(frames.front().source_frame, 0);

  auto ref = reel::testing::RunCommand("ffmpeg -loglevel error -i " + path +
                                       " -map 0:" + std::to_string(*info->best_video) +
                                       " -frames:v 1 -f rawvideo -pix_fmt rgb24 -");
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  ASSERT_EQ(ref.out.size(), mine.pixels.size())
      << "FFmpeg's upright frame has a different size: " << mine.width << "x" << mine.height;
  double total = 0;
  for (size_t i = 0; i < mine.pixels.size(); ++i) {
    total += std::abs(static_cast<int>(mine.pixels[i]) - static_cast<unsigned char>(ref.out[i]));
  }
  double mean = total / mine.pixels.size();
  // Same size, so only the YUV->RGB conversion differs (swscale's chroma upsampling settings):
  // measured 0.0-4.2 levels, the most on a tiny saturated clip. A wrong frame, rotation, range or
  // matrix gives 7 or more.
  std::printf("%s: mean absolute difference from ffmpeg %.2f\n", c.name.c_str(), mean);
  EXPECT_LT(mean, 6.0) << "mean absolute difference from ffmpeg";
}

const CorpusFile kCorpus[] = {
    {"nasa_13013.mp4", 390},
    {"nasa_13013_rotated.mp4", 17},
    {"test_non_zero_start.mp4", 12},
    {"discard_first_keyframe.mp4", 25},
    {"av1_video.mkv", 125},
    {"h265_video.mp4", 10},
    {"bt601_full_range.mp4", 60},
    {"h264_10bits.mp4", 30},
    {"decord_corrupted.mp4", 50, true},
    {"decord_unordered.mov", 4},
    {"decord_video_90.mov", 3},
    {"decord_video_270.mov", 3},
};

INSTANTIATE_TEST_SUITE_P(Corpus, SharedMediaTest, ::testing::ValuesIn(kCorpus),
                         [](const ::testing::TestParamInfo<CorpusFile>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace reel::pipeline
