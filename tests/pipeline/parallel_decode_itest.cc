// Decoding on several threads (independent runs of chosen frames, one decoder each) must give
// exactly what one decoder gives: the same frames, the same pixels, in the same order, with the
// same packets decoded, and stop cleanly when the receiver fails.
#include <gtest/gtest.h>

#include <cstdio>

#include "pipeline/frame_sampler.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::CounterClipArgs;
using reel::testing::DecodeCounter;
using reel::testing::GeneratedMedia;

struct DecodeClip {
  std::string name;
  int frames;
  std::string fps;
  std::string encode;
  // The demuxer lands where asked. MPEG program and transport streams seek by searching
  // timestamps and can land off target; they are decoded by one decoder either way.
  bool seeks_exactly = true;
};

void PrintTo(const DecodeClip& c, std::ostream* os) { *os << c.name; }

struct Delivered {
  std::vector<SampledFrame> frames;  // in the order the sink received them
  SampleReport report;
};

Delivered Sample(const std::string& path, SamplingOptions sampling, int decoder_threads) {
  SampleOptions options;
  options.sampling = sampling;
  options.resize.mode = ResizeMode::kSmart;
  options.limits.decoder_threads = decoder_threads;
  Delivered run;
  Result<SampleReport> report = SampleVideo(path, options, [&](SampledFrame&& f) {
    run.frames.push_back(std::move(f));
    return Status::Ok();
  });
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (report.ok()) run.report = *report;
  return run;
}

void ExpectSame(const Delivered& one, const Delivered& many, const std::string& what,
                bool seeks_exactly) {
  ASSERT_EQ(one.frames.size(), many.frames.size()) << what;
  for (size_t i = 0; i < one.frames.size(); ++i) {
    const SampledFrame& a = one.frames[i];
    const SampledFrame& b = many.frames[i];
    EXPECT_EQ(b.index, static_cast<int>(i)) << what << ": delivered out of order";
    EXPECT_EQ(a.source_frame, b.source_frame) << what << " sample " << i;
    EXPECT_EQ(a.pts_s, b.pts_s) << what << " sample " << i;
    EXPECT_TRUE(a.image.pixels == b.image.pixels) << what << " sample " << i << ": pixels differ";
    EXPECT_EQ(DecodeCounter(b.image.pixels.data(), b.image.width, b.image.height,
                            static_cast<int>(b.image.stride())),
              b.source_frame)
        << what << " sample " << i;
  }
  if (seeks_exactly) {
    EXPECT_EQ(one.report.packets_decoded, many.report.packets_decoded)
        << what << ": the threads together decode exactly the packets one decoder does";
  }
  EXPECT_EQ(many.report.decode_errors, 0) << what;
  EXPECT_TRUE(many.report.missing.empty()) << what;
  // The sampler falls back to one decoder without a word (a stream it cannot seek exactly, one
  // run of frames, a failed thread): the report says which path ran.
  EXPECT_EQ(one.report.parallel_decoders, 1) << what;
  if (seeks_exactly) {
    EXPECT_GE(many.report.parallel_decoders, 2) << what << ": the parallel path did not run";
  } else {
    EXPECT_EQ(many.report.parallel_decoders, 1) << what << ": decoded by one decoder either way";
  }
  std::printf("[ decoders ] %s: %d\n", what.c_str(), many.report.parallel_decoders);
}

class ParallelDecodeTest : public ::testing::TestWithParam<DecodeClip> {};

TEST_P(ParallelDecodeTest, ManyDecodersGiveWhatOneGives) {
  const DecodeClip& clip = GetParam();
  const std::string path = GeneratedMedia(
      clip.name, CounterClipArgs(clip.frames, 160, 120, clip.fps) + " " + clip.encode);
  ASSERT_FALSE(path.empty());

  SamplingOptions sparse;
  sparse.policy = SamplingPolicy::kCount;
  sparse.count = 23;
  ExpectSame(Sample(path, sparse, 1), Sample(path, sparse, 4), "count 23", clip.seeks_exactly);

  // Dense: more frames than may wait for delivery, so workers ahead must wait their turn.
  SamplingOptions dense;
  dense.policy = SamplingPolicy::kFps;
  dense.fps = 100;  // every frame
  Delivered one = Sample(path, dense, 1);
  EXPECT_EQ(static_cast<int>(one.frames.size()), clip.frames);
  ExpectSame(one, Sample(path, dense, 3), "every frame", clip.seeks_exactly);
}

// Keyframe intervals short and long, B-frames, open GOPs, timestamps the demuxer guesses.
INSTANTIATE_TEST_SUITE_P(
    Codecs, ParallelDecodeTest,
    ::testing::Values(
        DecodeClip{"counter_h264_b3_g60.mp4", 300, "30",
                   "-c:v libx264 -bf 3 -g 60 -keyint_min 60 -sc_threshold 0 -x264-params b-adapt=0 "
                   "-pix_fmt yuv420p"},
        DecodeClip{"counter_h264_open_gop.mkv", 240, "30",
                   "-c:v libx264 -bf 3 -g 24 -x264-params open-gop=1:scenecut=0 -pix_fmt yuv420p"},
        DecodeClip{"counter_hevc.mp4", 120, "25",
                   "-c:v libx265 -x265-params "
                   "bframes=4:keyint=48:min-keyint=48:scenecut=0:log-level=error -tag:v hvc1 "
                   "-pix_fmt yuv420p"},
        DecodeClip{"counter_mpeg2.mpg", 100, "25", "-c:v mpeg2video -bf 2 -g 25 -q:v 3",
                   /*seeks_exactly=*/false},
        DecodeClip{"counter_vp9.webm", 120, "25",
                   "-c:v libvpx-vp9 -g 40 -deadline realtime -cpu-used 8 -b:v 200k"},
        DecodeClip{"counter_mjpeg.mov", 60, "25", "-c:v mjpeg -q:v 3"}),
    [](const ::testing::TestParamInfo<DecodeClip>& info) {
      std::string n = info.param.name;
      for (char& c : n) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return n;
    });

TEST(ParallelDecode, AFailingReceiverStopsEveryDecoder) {
  const std::string path = GeneratedMedia(
      "counter_h264_b3_g60.mp4", CounterClipArgs(300, 160, 120, "30") +
                                     " -c:v libx264 -bf 3 -g 60 -keyint_min 60 -sc_threshold 0 "
                                     "-x264-params b-adapt=0 -pix_fmt yuv420p");
  ASSERT_FALSE(path.empty());
  SampleOptions options;
  options.sampling.policy = SamplingPolicy::kFps;
  options.sampling.fps = 100;
  options.limits.decoder_threads = 4;
  int received = 0;
  Result<SampleReport> report = SampleVideo(path, options, [&](SampledFrame&&) {
    return ++received == 3 ? IoError("disk full") : Status::Ok();
  });
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message(), "disk full");
  EXPECT_EQ(received, 3) << "nothing is delivered after the receiver failed";
}

// Matroska written to a pipe has no cues (seek index): each decoder's demuxer finds its keyframe
// by reading, and the frames still come out exactly as one decoder gives them.
TEST(ParallelDecode, MatroskaWithoutCuesGivesWhatOneDecoderGives) {
  const std::string path = reel::testing::ScratchDir("NoCues") + "/no_cues.mkv";
  ASSERT_EQ(reel::testing::RunCommand(
                "ffmpeg -y -hide_banner -loglevel error " + CounterClipArgs(200, 160, 120, "25") +
                " -c:v libx264 -bf 2 -g 20 -pix_fmt yuv420p -f matroska - > " + path)
                .exit_code,
            0);
  SamplingOptions sparse;
  sparse.policy = SamplingPolicy::kCount;
  sparse.count = 12;
  ExpectSame(Sample(path, sparse, 1), Sample(path, sparse, 4), "no cues", /*seeks_exactly=*/true);
}

}  // namespace
}  // namespace reel::pipeline
