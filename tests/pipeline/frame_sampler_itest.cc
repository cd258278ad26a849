// Proves the frames are the right ones: every clip here is generated so that each frame shows its
// own frame number in its pixels (tests/support/test_media.h), across codecs, containers, B-frames,
// long keyframe intervals, variable frame rate, rotation, edit lists and non-zero starts. For every
// sampling policy, the frame delivered as source frame N must show N, and N must be the frame the
// policy asks for, computed here independently of the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "pipeline/frame_index.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::CounterClipArgs;
using reel::testing::DecodeCounter;
using reel::testing::GeneratedMedia;

struct SamplerClip {
  std::string name;    // file name in the test-media cache (extension picks the container)
  int frames;          // frames generated
  std::string fps;     // frame rate given to the generator
  std::string encode;  // encoder arguments
  int width = 160;
  int height = 120;
};

// Names the parameter in test listings instead of dumping its bytes.
void PrintTo(const SamplerClip& c, std::ostream* os) { *os << c.name; }

std::string MakeClip(const SamplerClip& c) {
  return GeneratedMedia(c.name,
                        CounterClipArgs(c.frames, c.width, c.height, c.fps) + " " + c.encode);
}

struct SamplerRun {
  std::vector<SampledFrame> frames;
  SampleReport report;
};

SamplerRun Sample(const std::string& path, const SampleOptions& options) {
  SamplerRun out;
  auto report = SampleVideo(path, options, [&](SampledFrame&& f) {
    out.frames.push_back(std::move(f));
    return Status::Ok();
  });
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (report.ok()) out.report = *report;
  std::sort(out.frames.begin(), out.frames.end(),
            [](const SampledFrame& a, const SampledFrame& b) { return a.index < b.index; });
  return out;
}

std::vector<int> SourceFrames(const SamplerRun& s) {
  std::vector<int> out;
  for (const SampledFrame& f : s.frames) out.push_back(f.source_frame);
  return out;
}

// Every delivered frame shows its own source frame number (plus `offset` for clips cut from a
// longer one).
void ExpectPixelsMatch(const SamplerRun& s, int offset = 0) {
  for (const SampledFrame& f : s.frames) {
    int shown = DecodeCounter(f.image.pixels.data(), f.image.width, f.image.height,
                              static_cast<int>(f.image.stride()));
    EXPECT_EQ(shown, f.source_frame + offset) << "sample " << f.index;
  }
}

SampleOptions Options(SamplingPolicy policy) {
  SampleOptions o;
  o.sampling.policy = policy;
  o.resize.mode = ResizeMode::kSmart;
  return o;
}

const SamplerClip kH264B{"counter_h264_b3_g60.mp4", 300, "30",
                         "-c:v libx264 -bf 3 -g 60 -keyint_min 60 -sc_threshold 0 -x264-params "
                         "b-adapt=0 -pix_fmt yuv420p"};
const SamplerClip kH264Long{"counter_h264_g250.mp4", 600, "30",
                            "-c:v libx264 -g 250 -keyint_min 250 -sc_threshold 0 -pix_fmt yuv420p"};

// The codec and container table: each decodes through the same planner.
const SamplerClip kCodecClips[] = {
    kH264B,
    kH264Long,
    {"counter_hevc.mp4", 120, "25",
     "-c:v libx265 -x265-params bframes=4:keyint=48:min-keyint=48:scenecut=0:log-level=error "
     "-tag:v hvc1 -pix_fmt yuv420p"},
    {"counter_vp9.webm", 120, "25",
     "-c:v libvpx-vp9 -g 40 -deadline realtime -cpu-used 8 -b:v 200k"},
    {"counter_av1.mkv", 48, "24", "-c:v libaom-av1 -cpu-used 8 -g 24 -b:v 200k"},
    {"counter_mpeg4.mp4", 120, "25", "-c:v mpeg4 -bf 2 -g 50 -q:v 3"},
    {"counter_mpeg4.avi", 120, "25", "-c:v mpeg4 -g 50 -q:v 3"},
    {"counter_theora.ogv", 120, "25", "-c:v libtheora -g 50 -q:v 7"},
    {"counter_mjpeg.mov", 60, "25", "-c:v mjpeg -q:v 3"},
    {"counter_h264_10bit.mkv", 90, "30", "-c:v libx264 -bf 2 -g 30 -pix_fmt yuv420p10le"},
    {"counter_ffv1_odd.mkv", 40, "20", "-c:v ffv1 -g 10", 161, 121},
    {"counter_vp8.webm", 60, "30", "-c:v libvpx -g 30 -b:v 300k -deadline realtime"},
    {"counter_mpeg2.mpg", 100, "25", "-c:v mpeg2video -bf 2 -g 25 -q:v 3"},
    {"counter_h264.ts", 100, "25", "-c:v libx264 -bf 3 -g 50 -pix_fmt yuv420p"},
    // An elementary stream: no container, no stored timestamps.
    {"counter_raw.h264", 75, "25", "-c:v libx264 -bf 2 -g 25 -pix_fmt yuv420p -f h264"},
};

class CodecTest : public ::testing::TestWithParam<SamplerClip> {};

TEST_P(CodecTest, EveryPolicyReturnsTheRightFrames) {
  const SamplerClip& clip = GetParam();
  std::string path = MakeClip(clip);
  ASSERT_FALSE(path.empty());
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_EQ(index->size(), clip.frames);
  const double fps = std::stod(clip.fps);

  // Timestamps: each maps to the frame shown at that time.
  SampleOptions o = Options(SamplingPolicy::kTimestamps);
  std::vector<double> times = {0.0, 0.5, 1.01, (clip.frames - 0.5) / fps, 0.77};
  o.sampling.timestamps = times;
  SamplerRun s = Sample(path, o);
  std::vector<int> want;
  for (double t : times) want.push_back(static_cast<int>(std::floor(t * fps + 1e-9)));
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  EXPECT_EQ(SourceFrames(s), want);
  ExpectPixelsMatch(s);

  // Count: N frames, first and last included.
  o = Options(SamplingPolicy::kCount);
  o.sampling.count = 7;
  s = Sample(path, o);
  ASSERT_EQ(s.frames.size(), 7u);
  EXPECT_EQ(s.frames.front().source_frame, 0);
  EXPECT_EQ(s.frames.back().source_frame, clip.frames - 1);
  ExpectPixelsMatch(s);

  // Fps 1: M3's rule on a constant-rate clip is every round(fps)-th frame plus the last.
  o = Options(SamplingPolicy::kFps);
  s = Sample(path, o);
  want.clear();
  for (int i = 0; i < clip.frames; i += static_cast<int>(fps)) want.push_back(i);
  if (want.back() != clip.frames - 1) want.push_back(clip.frames - 1);
  EXPECT_EQ(SourceFrames(s), want);
  ExpectPixelsMatch(s);
  EXPECT_FALSE(s.report.partial());

  // Keyframes: exactly the packets flagged as random-access points, nothing else decoded.
  o = Options(SamplingPolicy::kKeyframes);
  s = Sample(path, o);
  want.clear();
  for (int i = 0; i < index->size(); ++i) {
    if (index->frames[i].keyframe) want.push_back(i);
  }
  EXPECT_EQ(SourceFrames(s), want);
  if (index->has_timestamps) {
    EXPECT_EQ(s.report.packets_decoded, static_cast<int>(want.size()));
  }  // else: pictures are told apart by output order, so everything up to the last is decoded
  ExpectPixelsMatch(s);

  // Dense: every frame, trimmed.
  o = Options(SamplingPolicy::kFps);
  o.sampling.fps = fps;
  o.sampling.start_s = 0.5;
  o.sampling.end_s = 1.5;
  s = Sample(path, o);
  ASSERT_FALSE(s.frames.empty());
  EXPECT_EQ(s.frames.front().source_frame, static_cast<int>(std::ceil(0.5 * fps - 1e-9)));
  for (size_t i = 1; i < s.frames.size(); ++i) {
    EXPECT_EQ(s.frames[i].source_frame, s.frames[i - 1].source_frame + 1);
  }
  ExpectPixelsMatch(s);
}

INSTANTIATE_TEST_SUITE_P(Codecs, CodecTest, ::testing::ValuesIn(kCodecClips),
                         [](const ::testing::TestParamInfo<SamplerClip>& info) {
                           std::string n = info.param.name;
                           for (char& c : n) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(FrameSamplerTest, SparseSamplingSeeksAndSkipsWork) {
  std::string path = MakeClip(kH264Long);
  SampleOptions o = Options(SamplingPolicy::kCount);
  o.sampling.count = 4;  // 0, 599/3, 2*599/3, 599 frame times: frames 0, 199, 399, 599
  SamplerRun s = Sample(path, o);
  EXPECT_EQ(SourceFrames(s), (std::vector<int>{0, 199, 399, 599}));
  ExpectPixelsMatch(s);
  EXPECT_GT(s.report.seeks, 0);
  // Keyframes at 0, 250, 500: decoding runs 0..199, 250..399 and 500..599 (decode order may
  // reach a few packets further for B-frames), never the 200..249 and 400..499 gaps.
  EXPECT_LE(s.report.packets_decoded, 200 + 150 + 100 + 6);
  EXPECT_GE(s.report.packets_decoded, 200 + 150 + 100 - 6);
}

TEST(FrameSamplerTest, DenseSamplingSkipsNonReferencePictures) {
  std::string path = MakeClip(kH264B);  // I/P every 4th frame, three B-frames between
  SampleOptions o = Options(SamplingPolicy::kFps);
  SamplerRun s = Sample(path, o);
  ExpectPixelsMatch(s);
  EXPECT_EQ(s.frames.size(), 11u);
  // Without skipping, all 300 packets would be decoded.
  EXPECT_LT(s.report.packets_decoded, 300 * 3 / 4);
}

TEST(FrameSamplerTest, MaxFramesThinsEvenlyKeepingFirstAndLast) {
  std::string path = MakeClip(kH264B);
  SampleOptions o = Options(SamplingPolicy::kFps);
  o.sampling.fps = 10;
  o.sampling.max_frames = 5;
  SamplerRun s = Sample(path, o);
  ASSERT_EQ(s.frames.size(), 5u);
  EXPECT_EQ(s.frames.front().source_frame, 0);
  EXPECT_EQ(s.frames.back().source_frame, 299);
  ExpectPixelsMatch(s);
}

TEST(FrameSamplerTest, ResizesToTheModelSize) {
  SamplerClip big{"counter_h264_1280x720.mp4",     10,   "10",
                  "-c:v libx264 -pix_fmt yuv420p", 1280, 720};
  std::string path = MakeClip(big);
  SampleOptions o = Options(SamplingPolicy::kCount);
  o.sampling.count = 2;
  o.resize.smart.max_pixels = 200704;  // 448x448
  SamplerRun s = Sample(path, o);
  ASSERT_EQ(s.frames.size(), 2u);
  // smart_resize(720, 1280, max 200704): beta = sqrt(921600/200704) = 2.1428; 336 x 588.
  EXPECT_EQ(s.frames[0].image.width, 588);
  EXPECT_EQ(s.frames[0].image.height, 336);
  ExpectPixelsMatch(s);
  o.resize.mode = ResizeMode::kLongSide;
  s = Sample(path, o);
  EXPECT_EQ(s.frames[0].image.width, 672);
  EXPECT_EQ(s.frames[0].image.height, 392);  // round(720 * 672 / 1280) = 378 -> 392
}

TEST(FrameSamplerTest, VariableFrameRateUsesPresentationTimes) {
  // Frame n is shown at n*40 + floor(n/2)*20 ms: durations alternate 40 and 60 ms.
  std::string args = CounterClipArgs(100, 160, 120, "25");
  args.insert(args.rfind("\""), ",settb=1/1000,setpts='N*40+floor(N/2)*20'");
  std::string path = GeneratedMedia(
      "counter_vfr.mkv", args +
                             " -fps_mode passthrough -enc_time_base:v 1/1000 -c:v libx264 "
                             "-bf 2 -g 30 -pix_fmt yuv420p");
  auto pts_ms = [](int n) { return n * 40 + (n / 2) * 20; };
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok());
  ASSERT_EQ(index->size(), 100);
  for (int n = 0; n < 100; ++n) EXPECT_NEAR(index->time_s(n), pts_ms(n) / 1000.0, 1e-9);

  SampleOptions o = Options(SamplingPolicy::kTimestamps);
  o.sampling.timestamps = {0.039, 0.041, 0.099, 0.1, 1.234, 4.0};
  SamplerRun s = Sample(path, o);
  std::vector<int> want;
  for (double t : o.sampling.timestamps) {
    int n = 0;
    while (n + 1 < 100 && pts_ms(n + 1) <= t * 1000 + 1e-9) ++n;
    want.push_back(n);
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  EXPECT_EQ(SourceFrames(s), want);
  ExpectPixelsMatch(s);
  for (const SampledFrame& f : s.frames) {
    EXPECT_NEAR(f.time_s, pts_ms(f.source_frame) / 1000.0, 1e-9);
  }
}

// Rotation is checked against FFmpeg's own auto-rotation (the ffmpeg command line rotates by the
// display matrix by default): the pattern is painted so that FFmpeg's upright output reads
// correctly, and Reel's output must read the same and have the same size.
TEST(FrameSamplerTest, RotatedVideosComeOutUpright) {
  struct Case {
    int tag;            // the "rotate" tag given to the muxer
    std::string paint;  // the transform that makes FFmpeg's auto-rotated output upright
  };
  for (const Case& c :
       {Case{90, "transpose=clock"}, Case{270, "transpose=cclock"}, Case{180, "hflip,vflip"}}) {
    std::string args = CounterClipArgs(30, 160, 96, "30");
    args.insert(args.rfind("\""), "," + c.paint);
    std::string plain = GeneratedMedia("counter_paint" + std::to_string(c.tag) + ".mp4",
                                       args + " -c:v libx264 -pix_fmt yuv420p");
    std::string path =
        GeneratedMedia("counter_rot" + std::to_string(c.tag) + ".mp4",
                       "-i " + plain + " -c copy -metadata:s:v:0 rotate=" + std::to_string(c.tag));
    // FFmpeg's reference: the first frame, auto-rotated.
    auto ref = reel::testing::RunCommand("ffmpeg -loglevel error -i " + path +
                                         " -frames:v 1 -f rawvideo -pix_fmt rgb24 -");
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    ASSERT_EQ(ref.out.size(), 160u * 96u * 3u) << "FFmpeg's upright frame is 160x96";
    ASSERT_EQ(
        DecodeCounter(reinterpret_cast<const unsigned char*>(ref.out.data()), 160, 96, 160 * 3), 0)
        << "the test's painting does not match FFmpeg's rotation for tag " << c.tag;

    auto info = Probe(path);
    ASSERT_TRUE(info.ok());
    EXPECT_NE(info->streams[0].rotation, 0);
    EXPECT_EQ(info->streams[0].display_width, 160);
    SampleOptions o = Options(SamplingPolicy::kCount);
    o.sampling.count = 3;
    o.resize.mode = ResizeMode::kNone;
    SamplerRun s = Sample(path, o);
    ASSERT_EQ(s.frames.size(), 3u);
    EXPECT_EQ(s.frames[0].image.width, 160) << c.tag;
    EXPECT_EQ(s.frames[0].image.height, 96) << c.tag;
    ExpectPixelsMatch(s);
  }
}

TEST(FrameSamplerTest, EditListsAndNonZeroStarts) {
  std::string source = MakeClip(kH264B);
  std::string cut = reel::testing::ScratchDir("EditList") + "/cut.mp4";
  // A stream copy from 1.5 s: the file keeps the GOP from frame 0 and an edit list hides it.
  auto r = reel::testing::RunCommand("ffmpeg -y -loglevel error -ss 1.5 -i " + source +
                                     " -c copy " + cut);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto index = BuildFrameIndex(cut);
  ASSERT_TRUE(index.ok());
  EXPECT_GT(index->discarded_packets, 0);
  SampleOptions o = Options(SamplingPolicy::kCount);
  o.sampling.count = 5;
  SamplerRun s = Sample(cut, o);
  ASSERT_EQ(s.frames.size(), 5u);
  int offset =
      DecodeCounter(s.frames[0].image.pixels.data(), s.frames[0].image.width,
                    s.frames[0].image.height, static_cast<int>(s.frames[0].image.stride()));
  EXPECT_EQ(offset, 45);  // 1.5 s at 30 fps
  ExpectPixelsMatch(s, offset);

  std::string shifted = reel::testing::ScratchDir("NonZeroStart") + "/shifted.mp4";
  r = reel::testing::RunCommand("ffmpeg -y -loglevel error -i " + source +
                                " -c copy -output_ts_offset 10 " + shifted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  o.sampling.count = 3;
  s = Sample(shifted, o);
  ASSERT_EQ(s.frames.size(), 3u);
  EXPECT_NEAR(s.frames[0].pts_s, 10.0, 0.1);
  EXPECT_DOUBLE_EQ(s.frames[0].time_s, 0.0);
  ExpectPixelsMatch(s);
}

TEST(FrameSamplerTest, TimestampsThatRestartMidFileContinueTheTimeline) {
  // Two MPEG-TS recordings joined byte for byte: the second's timestamps start over.
  std::string part =
      GeneratedMedia("counter_part.ts", CounterClipArgs(60, 160, 120, "25") +
                                            " -c:v libx264 -bf 2 -g 25 -pix_fmt yuv420p -f mpegts");
  std::string joined = reel::testing::ScratchDir("Joined") + "/joined.ts";
  ASSERT_EQ(reel::testing::RunCommand("cat " + part + " " + part + " > " + joined).exit_code, 0);
  auto index = BuildFrameIndex(joined);
  ASSERT_TRUE(index.ok());
  ASSERT_EQ(index->size(), 120);
  EXPECT_EQ(index->segment_offsets.size(), 2u);
  EXPECT_NEAR(index->time_s(60), 60 / 25.0, 0.05);
  SampleOptions o = Options(SamplingPolicy::kFps);
  o.sampling.fps = 5;
  SamplerRun s = Sample(joined, o);
  ASSERT_GT(s.frames.size(), 20u);
  for (const SampledFrame& f : s.frames) {
    EXPECT_EQ(DecodeCounter(f.image.pixels.data(), f.image.width, f.image.height,
                            static_cast<int>(f.image.stride())),
              f.source_frame % 60)
        << "source frame " << f.source_frame;
  }
  EXPECT_FALSE(s.report.partial());
  EXPECT_NEAR(s.report.duration_s, 120 / 25.0, 0.05) << "both recordings, end to end";
}

TEST(FrameSamplerTest, SceneChangesAreFoundAtTheCuts) {
  // Four 2-second shots of different content at 25 fps: cuts at frames 0, 50, 100, 150.
  std::string path = GeneratedMedia(
      "scenes.mp4",
      "-f lavfi -i testsrc2=s=160x120:r=25:d=2 -f lavfi -i smptebars=s=160x120:r=25:d=2 "
      "-f lavfi -i mandelbrot=s=160x120:r=25 -f lavfi -i color=c=0x203080:s=160x120:r=25:d=2 "
      "-filter_complex \"[2]trim=duration=2[m];[0][1][m][3]concat=n=4:v=1[v]\" -map \"[v]\" "
      "-c:v libx264 -g 250 -pix_fmt yuv420p");
  SampleOptions o = Options(SamplingPolicy::kScene);
  o.sampling.scene_threshold = 0.3;
  o.sampling.scene_min_shot_s = 0.5;
  SamplerRun s = Sample(path, o);
  EXPECT_EQ(SourceFrames(s), (std::vector<int>{0, 50, 100, 150}));
  EXPECT_EQ(s.report.scene_frames_scored, 200);
  // With a cap the cuts are thinned: first and last kept.
  o.sampling.max_frames = 2;
  s = Sample(path, o);
  EXPECT_EQ(SourceFrames(s), (std::vector<int>{0, 150}));
}

}  // namespace
}  // namespace reel::pipeline
