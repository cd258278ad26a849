// Interlaced video: `reel probe` reports the field order as ffprobe does, and the chosen frames
// are deinterlaced (FFmpeg's estdif on each chosen frame: the frame `ffmpeg -vf estdif` gives)
// unless the resize options say not to.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

extern "C" {
#include <libavfilter/version_major.h>
}

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "pipeline/frame_sampler.h"
#include "pipeline/probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::CommandResult;
using reel::testing::GeneratedMedia;
using reel::testing::RunCommand;
using reel::testing::ShellQuote;

// 1.2 s of PAL-size-like interlaced MPEG-2 (top field first) in an MPEG program stream, as on a
// DVD: two 50p moments woven into each 25i frame, so moving edges comb.
std::string InterlacedMpeg2() {
  return GeneratedMedia("interlaced_tff.mpg",
                        "-f lavfi -i testsrc2=s=352x288:r=50:d=1.2 -vf "
                        "tinterlace=mode=interleave_top,setfield=tff -c:v mpeg2video "
                        "-flags +ildct+ilme -top 1 -b:v 4M -f vob");
}

// Frame `n` (decoding order) as packed RGB from ffmpeg, after `filters` ("" for none).
std::string FfmpegFrame(const std::string& path, int n, const std::string& filters) {
  const std::string chain =
      (filters.empty() ? "" : filters + ",") + "select='eq(n\\," + std::to_string(n) + ")'";
  auto r = RunCommand("ffmpeg -nostdin -v error -i " + ShellQuote(path) + " -vf \"" + chain +
                      ",scale=flags=bicubic+accurate_rnd,format=rgb24\" -frames:v 1 -f rawvideo -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

Image ReelFrame(const std::string& path, int n, bool deinterlace) {
  SampleOptions o;
  o.sampling.policy = SamplingPolicy::kTimestamps;
  o.sampling.timestamps = {n / 25.0 + 0.001};
  o.resize.mode = ResizeMode::kNone;
  o.resize.deinterlace = deinterlace;
  Image image;
  auto report = SampleVideo(path, o, [&](SampledFrame&& f) {
    EXPECT_EQ(f.source_frame, n);
    image = std::move(f.image);
    return Status::Ok();
  });
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return image;
}

double MeanAbsDiff(const Image& image, const std::string& rgb) {
  EXPECT_EQ(rgb.size(), static_cast<size_t>(image.width) * image.height * 3);
  if (rgb.size() != static_cast<size_t>(image.width) * image.height * 3) return 1e9;
  double sum = 0;
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* row = image.row(y);
    for (int x = 0; x < image.width * 3; ++x) {
      sum += std::abs(static_cast<int>(row[x]) -
                      static_cast<int>(static_cast<uint8_t>(rgb[(y * image.width * 3) + x])));
    }
  }
  return sum / static_cast<double>(rgb.size());
}

// How much neighbouring lines disagree with the lines around them: high where fields comb.
double Combing(const Image& image) {
  double sum = 0;
  for (int y = 1; y + 1 < image.height; ++y) {
    for (int x = 0; x < image.width * 3; ++x) {
      sum += std::abs(2 * image.row(y)[x] - image.row(y - 1)[x] - image.row(y + 1)[x]);
    }
  }
  return sum / (static_cast<double>(image.height - 2) * image.width * 3);
}

TEST(InterlacedTest, ProbeReportsTheFieldOrderAsFfprobe) {
  const std::string path = InterlacedMpeg2();
  auto ffprobe = RunCommand(
      "ffprobe -v error -select_streams v:0 -show_entries "
      "stream=field_order -of default=nw=1:nk=1 " +
      ShellQuote(path));
  ASSERT_EQ(ffprobe.out, "tt\n");
  auto info = Probe(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_TRUE(info->best_video.has_value());
  EXPECT_EQ(info->streams[*info->best_video].field_order, "tt");
  const std::string progressive =
      GeneratedMedia("progressive.mp4", "-f lavfi -i testsrc2=s=64x48:r=10:d=1 -c:v libx264");
  auto plain = Probe(progressive);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->streams[0].field_order, "progressive");
}

TEST(InterlacedTest, ChosenFramesAreDeinterlacedAsFfmpegsEstdifDoes) {
  const std::string path = InterlacedMpeg2();
  for (int n : {10, 17}) {
    SCOPED_TRACE(n);
    const std::string combed = FfmpegFrame(path, n, "");
    const std::string woven = FfmpegFrame(path, n, "estdif=mode=frame");
    Image deinterlaced = ReelFrame(path, n, /*deinterlace=*/true);
    Image raw = ReelFrame(path, n, /*deinterlace=*/false);
    ASSERT_EQ(deinterlaced.width, 352);
    ASSERT_EQ(deinterlaced.height, 288);
    // Off: the decoded picture, as ffmpeg gives it; on: ffmpeg's estdif frame (the colour
    // conversion rounds a little differently: under one level on average).
    EXPECT_LT(MeanAbsDiff(raw, combed), 1.0);
    EXPECT_LT(MeanAbsDiff(deinterlaced, woven), 1.0);
    EXPECT_GT(MeanAbsDiff(raw, woven), 2.0);
    EXPECT_LT(Combing(deinterlaced), 0.7 * Combing(raw))
        << Combing(deinterlaced) << " vs " << Combing(raw);
  }
  // Progressive frames are left alone.
  const std::string progressive =
      GeneratedMedia("progressive_mpeg2.mpg",
                     "-f lavfi -i testsrc2=s=352x288:r=25:d=1.2 -c:v mpeg2video -b:v 4M -f vob");
  EXPECT_LT(MeanAbsDiff(ReelFrame(progressive, 10, true), FfmpegFrame(progressive, 10, "")), 1.0);
}

// libavfilter is not linked (with its dependencies it was a third of the dynamic loader's work at
// every start of `reel` and of each test process): the deinterlacer loads it for the first
// interlaced picture.
TEST(InterlacedTest, LibavfilterIsLoadedForTheFirstInterlacedPictureOnly) {
  const std::string soname = "libavfilter.so." + std::to_string(LIBAVFILTER_VERSION_MAJOR);
  CommandResult needed = RunCommand("ldd /proc/" + std::to_string(getpid()) + "/exe");
  ASSERT_EQ(needed.exit_code, 0) << needed.err;
  ASSERT_NE(needed.out.find("libavcodec.so"), std::string::npos) << needed.out;
  EXPECT_EQ(needed.out.find("libavfilter"), std::string::npos) << needed.out;
  Image progressive = ReelFrame(GeneratedMedia("progressive_mpeg2.mpg",
                                               "-f lavfi -i testsrc2=s=352x288:r=25:d=1.2 "
                                               "-c:v mpeg2video -b:v 4M -f vob"),
                                10, /*deinterlace=*/true);
  EXPECT_EQ(progressive.width, 352);
  Image woven = ReelFrame(InterlacedMpeg2(), 10, /*deinterlace=*/true);
  EXPECT_EQ(woven.width, 352);
  void* loaded = dlopen(soname.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(loaded, nullptr) << soname << " after an interlaced picture";
  if (loaded != nullptr) dlclose(loaded);
}

}  // namespace
}  // namespace reel::pipeline
